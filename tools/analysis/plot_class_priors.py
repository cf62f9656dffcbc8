"""Plot the class priors that CRISP's ``ClassPriorHook`` estimated during a
training run against the true priors of the training set.

::

    python tools/analysis/plot_class_priors.py configs/demo/crisp.py \\
        work_dirs/crisp_demo --out docs/figures/crisp_priors.png

``ClassPriorHook`` writes each estimated prior through the visualiser as
``class_prior/{j}`` after every epoch from its warm-up on (step: the
1-based epoch); with MMEngine's ``LocalVisBackend`` (the default of
mmlml's runtime) they land in ``{work_dir}/{timestamp}/vis_data/
scalars.json``. The second argument is such a ``scalars.json`` or a work
directory (its most recent one holding the priors).

The true prior of class :math:`j` is the fraction of the training split's
images that hold it, from the full labels that the config's training
:class:`~mmlml.datasets.PartialLabelDataset` keeps next to the partial
ones (built from the config, as the training built it). Left panel: the
estimated prior of each class at the last epoch against its true prior,
with the diagonal, and the fraction of images with an observed positive
(:math:`\\rho_j`, the prior an assume-negative model fits) for comparison.
Right panel: the mean absolute error of the estimates over the classes,
per epoch, and that of :math:`\\rho_j` (over the classes estimated at the
last epoch). The numbers are printed too
(``--csv`` writes them per class and epoch).
"""
import csv

import numpy as np
from mmengine.config import Config
from plot_missing_label_curves import find_scalars, read_scalars

from mmlml.cli import (add_cfg_options_argument, add_force_argument,
                       check_output, load_config, tool_parser)

PREFIX = 'class_prior'


def parse_args(argv=None):
    parser = tool_parser(__doc__)
    parser.add_argument('config', help='the config of the training run')
    parser.add_argument(
        'run', help='the work directory of the run or its scalars.json')
    parser.add_argument('--out', required=True, help='the PNG to write')
    parser.add_argument(
        '--csv', help='also write the priors per class and epoch here')
    add_cfg_options_argument(
        parser, 'override settings of the config, as in tools/train.py')
    add_force_argument(parser)
    args = parser.parse_args(argv)
    for path, option in ((args.out, '--out'), (args.csv, '--csv')):
        check_output(path, (args.config, args.run), args.force, option)
    return args


def estimated_priors(path: str, num_classes: int):
    """The epochs and an ``(epochs, C)`` array of the estimates, NaN where
    a class was not estimated."""
    series = read_scalars(path, PREFIX)
    epochs = sorted({step for steps, _ in series.values() for step in steps})
    table = np.full((len(epochs), num_classes), np.nan)
    for name, (steps, values) in series.items():
        j = int(name)
        if not 0 <= j < num_classes:
            raise ValueError(f'{path}: {PREFIX}/{name} is not a class of the '
                             f'config ({num_classes} classes)')
        for step, value in zip(steps, values):
            table[epochs.index(step), j] = value
    return epochs, table


def training_priors(cfg: Config):
    """The true priors (fraction of training images with each class), the
    observed-positive rates and the class names of the config's training
    split."""
    from mmengine.registry import DefaultScope

    from mmlml.datasets import find_partial_label_dataset
    from mmlml.registry import DATASETS
    with DefaultScope.overwrite_default_scope(
            cfg.get('default_scope', 'mmpretrain')):
        dataset = DATASETS.build(cfg.train_dataloader.dataset)
    partial = find_partial_label_dataset(dataset)
    if partial is None:
        raise ValueError('the training set of the config is no '
                         'PartialLabelDataset: it keeps no full labels')
    full = np.asarray(partial.full_labels)
    observed = np.asarray(partial.observed_labels)
    names = partial.metainfo.get('classes') or [
        str(j) for j in range(full.shape[1])
    ]
    return (full == 1).mean(0), (observed == 1).mean(0), list(names)


def plot(true, rates, epochs, table, out, title=''):
    """The two panels (matplotlib, Agg backend)."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    last = table[-1]
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.6, 4.2))
    top = 1.05 * max(np.nanmax(last), true.max(), rates.max())
    left.plot([0, top], [0, top], color='0.6', lw=1, ls='--', label='y = x')
    left.scatter(
        true,
        rates,
        marker='x',
        color='tab:gray',
        label=r'observed-positive rate $\rho_j$')
    left.scatter(
        true,
        last,
        color='tab:blue',
        label=f'CRISP estimate, epoch {epochs[-1]}')
    left.set(
        xlim=(0, top),
        ylim=(0, top),
        xlabel='true prior (training split)',
        ylabel='prior',
        title='Class priors at the last epoch')
    left.set_aspect('equal')
    left.legend(loc='best', fontsize=8)
    mae = np.nanmean(np.abs(table - true), axis=1)
    right.plot(epochs, mae, marker='o', color='tab:blue', label='CRISP')
    right.axhline(
        rate_error(true, rates, last),
        color='tab:gray',
        ls=':',
        label=r'$\rho_j$')
    right.set(
        xlabel='epoch',
        ylabel='mean absolute error',
        title='Error of the estimated priors',
        ylim=(0, None))
    right.set_xticks(epochs)
    right.legend(fontsize=8)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return mae


def rate_error(true, rates, last):
    """The mean absolute error of the observed-positive rates over the
    classes estimated at the last epoch."""
    done = ~np.isnan(last)
    return float(np.abs(rates - true)[done].mean())


def write_csv(path, names, true, rates, epochs, table):
    with open(path, 'w', newline='') as f:
        writer = csv.writer(f)
        writer.writerow(['class', 'name', 'true_prior', 'observed_rate'] +
                        [f'epoch_{e}' for e in epochs])
        for j, name in enumerate(names):
            writer.writerow([j, name, f'{true[j]:.6f}', f'{rates[j]:.6f}'] +
                            [f'{v:.6f}' for v in table[:, j]])


def main(argv=None):
    args = parse_args(argv)
    cfg = load_config(args.config, args.cfg_options)
    import mmlml  # noqa: F401  (registers the datasets)
    true, rates, names = training_priors(cfg)
    scalars = find_scalars(args.run, PREFIX, 'ClassPriorHook')
    epochs, table = estimated_priors(scalars, len(true))
    mae = plot(true, rates, epochs, table, args.out, args.config)
    if args.csv:
        write_csv(args.csv, names, true, rates, epochs, table)
    print(f'priors from {scalars}')
    print('mean absolute error of the estimated priors per epoch: ' +
          ', '.join(f'{e}: {m:.4f}' for e, m in zip(epochs, mae)))
    print(f'{int((~np.isnan(table[-1])).sum())} of {len(true)} classes '
          'estimated at the last epoch; mean absolute error of their '
          f'observed-positive rates: {rate_error(true, rates, table[-1]):.4f}')
    print(f'wrote {args.out}')


if __name__ == '__main__':
    main()
