"""Plot dL/dx, the gradient of a loss w.r.t. the logit x, against p.

The curves come from :mod:`mmlml.analysis.loss_gradients`, which describes
the sign convention and how non-element-wise losses are evaluated. Losses
are registry names or config dicts; ``--cfg-options TYPE.key=value`` sets a
keyword of every loss of that type, ``INDEX.key=value`` one of the INDEX-th
loss (0-based, preset curves first), other keys the ``--config`` file::

    python tools/analysis/plot_loss_gradients.py --losses ANLoss HillLoss \\
        SPLCLoss --cfg-options HillLoss.margin=0.5 SPLCLoss.tau=0.7 \\
        --epoch 3 --max-epochs 10 --out grad.png --csv grad.csv
    python tools/analysis/plot_loss_gradients.py --out fm.png --losses \\
        FocalMarginLoss "{'type': 'FocalMarginLoss', 'margin': 0.5}" \\
        --cfg-options 0.gamma=3.0
    python tools/analysis/plot_loss_gradients.py --config configs/demo/an.py \\
        --cfg-options model.head.loss.loss_weight=2 --out an.png
    python tools/analysis/plot_loss_gradients.py --preset hill-fig3 \\
        --out docs/figures/gradients_hill-fig3.png
    python tools/analysis/plot_loss_gradients.py --config \\
        configs/demo/vlpl.py --pseudo-label 1 --out vlpl.png

A stateful loss (CRISP, VLPL, GPR, EM + APL, LL-Cp, OPML-SP, ROLE) is drawn
with a representative state, which its legend names (``[state: ...]``):
no pseudo-label on the plotted label unless ``--pseudo-label``, every class
prior ``--class-prior``; see :mod:`mmlml.analysis.loss_gradients`.
"""
import argparse
import ast
import csv
import os
import os.path as osp
import sys
import textwrap

import numpy as np
from mmengine.config import Config

from mmlml.analysis import loss_gradients as lg
from mmlml.cli import (add_cfg_options_argument, add_force_argument,
                       check_output, tool_parser)

TARGET_TITLES = {
    'negative': 'Unannotated labels (target 0)',
    'positive': 'Observed positives (target 1)',
    'observed_negative': 'Observed negatives (target -1)',
}
LINESTYLES = ('-', '--', '-.', ':')  # dash patterns keep coinciding curves


def loss_arg(text):
    """Parse one ``--losses`` item: a type name or a config dict literal."""
    if not text.lstrip().startswith('{'):
        return lg.CurveSpec(dict(type=text))
    try:
        cfg = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        cfg = None
    if not isinstance(cfg, dict) or not isinstance(cfg.get('type'), str):
        raise argparse.ArgumentTypeError(
            f'{text!r} is not a config dict literal with a string type, '
            "e.g. \"{'type': 'HillLoss', 'margin': 0.5}\"")
    return lg.CurveSpec(cfg)


def parse_args(argv=None):
    """Parse the command line."""
    parser = tool_parser(
        __doc__,
        epilog='dL/dx > 0 means that gradient descent lowers the logit.')
    parser.add_argument(
        '--losses',
        nargs='+',
        type=loss_arg,
        default=[],
        metavar='LOSS',
        help="registered type names or config dicts (\"{'type': ...}\")")
    parser.add_argument(
        '--preset',
        choices=list(lg.PRESETS),
        help='the curves of a paper figure (before --losses)')
    parser.add_argument(
        '--config', help='also plot model.head.loss of this training config')
    add_cfg_options_argument(
        parser, 'TYPE.key=value: keyword of every loss of that type; '
        'INDEX.key=value: of the INDEX-th loss (0-based, preset curves '
        'first); other keys: settings of the --config file',
        default={})
    parser.add_argument('--out', help='output PNG')
    parser.add_argument('--csv', help='also write the numbers to this CSV')
    parser.add_argument(
        '--targets',
        nargs='+',
        choices=list(lg.TARGET_KINDS),
        help="kinds of target (default: negative positive, or the preset's)")
    parser.add_argument(
        '--epoch',
        type=int,
        help='0-based epoch of epoch-dependent losses (default 0)')
    parser.add_argument(
        '--max-epochs',
        type=int,
        help='number of epochs of epoch-dependent losses (default: the '
        "--config file's train_cfg.max_epochs)")
    parser.add_argument(
        '--pseudo-label',
        type=float,
        metavar='S',
        help='stateful losses that read pseudo-labels (VLPL, GPR, EM + APL, '
        'LL-Cp, OPML-SP): the plotted label has the pseudo-label S in '
        '[0, 1] (default: none, the state before any pseudo-labelling); '
        'the legend names the state every stateful loss was given')
    parser.add_argument(
        '--class-prior',
        type=float,
        default=0.1,
        help='CRISP: the estimated prior of every class (default 0.1; the '
        'observed-positive rate is min(prior, 1 / --num-classes))')
    parser.add_argument(
        '--sign',
        choices=('signed', 'magnitude'),
        help="plot dL/dx or |dL/dx| (default signed, or the preset's)")
    parser.add_argument(
        '--x-axis',
        choices=('prob', 'logit'),
        help="x-axis: p or the logit x (default prob, or the preset's)")
    parser.add_argument(
        '--layout',
        choices=('panels', 'overlay'),
        help="one panel per kind of target, or one panel for all (default "
        "panels, or the preset's)")
    parser.add_argument(
        '--points',
        type=int,
        default=lg.DEFAULT_POINTS,
        help=f'grid points (default {lg.DEFAULT_POINTS})')
    parser.add_argument(
        '--p-range',
        nargs=2,
        type=float,
        default=lg.DEFAULT_P_RANGE,
        metavar=('LOW', 'HIGH'),
        help='range of p (default 0.001 0.999)')
    parser.add_argument(
        '--num-classes',
        type=int,
        default=lg.DEFAULT_NUM_CLASSES,
        help='classes per sample: the grid label and C - 1 context labels '
        f'(default {lg.DEFAULT_NUM_CLASSES})')
    parser.add_argument(
        '--context-logit',
        type=float,
        default=0.0,
        help='logit of the context labels (default 0)')
    parser.add_argument(
        '--batch-context',
        type=int,
        metavar='B',
        help='evaluate losses that couple the samples of a batch one grid '
        'point at a time, with B context samples')
    parser.add_argument(
        '--ylim',
        nargs=2,
        type=float,
        metavar=('LOW', 'HIGH'),
        help='the y-axis range of every panel (default: matplotlib\'s)')
    parser.add_argument('--title', help='figure title')
    parser.add_argument(
        '--dpi',
        type=int,
        default=150,
        help='resolution of the --out figure (default: 150)')
    parser.add_argument(
        '--list-presets', action='store_true', help='describe the presets')
    parser.add_argument(
        '--list-losses', action='store_true', help='list registered losses')
    add_force_argument(parser)
    args = parser.parse_args(argv)
    check_output(args.out, (), args.force)
    check_output(args.csv, (), args.force, option='--csv')
    return args


def apply_cfg_options(specs, options):
    """Set ``TYPE.key`` / ``INDEX.key`` options on the matching losses.

    The keys after the scope follow MMEngine's ``merge_from_dict`` (nested
    keys, list indices). A changed loss loses its preset label.

    Returns:
        dict: The options that name no loss.
    """
    rest = {}
    for key, value in options.items():
        scope, _, path = key.partition('.')
        chosen = [
            spec for i, spec in enumerate(specs)
            if scope in (spec.cfg['type'], str(i))
        ]
        if not path or not chosen:
            rest[key] = value
            continue
        for spec in chosen:
            cfg = Config(spec.cfg)
            cfg.merge_from_dict({path: value}, allow_list_keys=True)
            spec.cfg, spec.label = cfg.to_dict(), None
    return rest


def config_loss(path, options):
    """Return ``model.head.loss`` of a config and its ``max_epochs``."""
    cfg = Config.fromfile(path)
    cfg.merge_from_dict(options)
    loss = cfg.get('model', {}).get('head', {}).get('loss')
    if loss is None:
        raise ValueError(f'{path} has no model.head.loss')
    spec = lg.CurveSpec(loss.to_dict())
    spec.label = f'{osp.basename(path)}: {spec.describe()}'
    return spec, cfg.get('train_cfg', {}).get('max_epochs')


def plotted(curve, sign):
    """Return the values drawn for a curve: ``dL/dx`` or ``|dL/dx|``."""
    return np.abs(curve.grad) if sign == 'magnitude' else curve.grad


#: Legend labels are wrapped at this many characters (a stateful loss's
#: label names its state and can be long).
LEGEND_WIDTH = 48


def figure(curves, sign, x_axis, layout, title, ylim=None):
    """Draw the curves into a matplotlib figure (Agg backend), one panel
    per target kind (or one for all with ``layout='overlay'``), each
    panel's legend below it: the constrained layout keeps every legend
    inside the figure, however long its labels."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    kinds = [None] if layout == 'overlay' else list(
        dict.fromkeys(curve.kind for curve in curves))
    fig, axes = plt.subplots(
        1,
        len(kinds),
        figsize=(6.4 * len(kinds), 4.8),
        squeeze=False,
        layout='constrained')
    for ax, kind in zip(axes[0], kinds):
        group = [c for c in curves if kind in (None, c.kind)]
        for i, curve in enumerate(group):
            label = curve.label(kind is None and curve.spec.label is None)
            ax.plot(
                curve.probs if x_axis == 'prob' else curve.logits,
                plotted(curve, sign),
                linestyle=LINESTYLES[i % len(LINESTYLES)],
                linewidth=1.6,
                label=textwrap.fill(label, LEGEND_WIDTH))
        if sign == 'signed':
            ax.axhline(0.0, color='0.6', linewidth=0.8)
        if x_axis == 'logit':
            ax.axvline(0.0, color='0.8', linewidth=0.8)
        else:
            ax.set_xlim(0, 1)
        if ylim:
            ax.set_ylim(*ylim)
        ax.set_xlabel('p = sigmoid(x)' if x_axis == 'prob' else 'logit x')
        ax.set_ylabel('|dL/dx|' if sign == 'magnitude' else 'dL/dx')
        ax.set_title(TARGET_TITLES[kind] if kind else 'Gradients')
        ax.grid(True, alpha=0.3)
        ax.legend(
            fontsize='small', loc='upper center', bbox_to_anchor=(0.5, -0.14))
    fig.suptitle(title)
    return fig


def plot(curves, out, sign, x_axis, layout, title, ylim=None, dpi=150):
    """Draw the curves (:func:`figure`) into a PNG."""
    import matplotlib.pyplot as plt
    fig = figure(curves, sign, x_axis, layout, title, ylim)
    os.makedirs(osp.dirname(osp.abspath(out)), exist_ok=True)
    fig.savefig(out, dpi=dpi)
    plt.close(fig)


def write_csv(curves, path, sign):
    """Write one row per curve and grid point: ``label, loss, target,
    target_value, p, logit, dL_dx`` (signed) and ``plotted``."""
    os.makedirs(osp.dirname(osp.abspath(path)), exist_ok=True)
    with open(path, 'w', newline='') as f:
        writer = csv.writer(f)
        writer.writerow(('label', 'loss', 'target', 'target_value', 'p',
                         'logit', 'dL_dx', 'plotted'))
        for curve in curves:
            for p, x, g, v in zip(curve.probs, curve.logits, curve.grad,
                                  plotted(curve, sign)):
                writer.writerow(
                    (curve.label(), curve.spec.describe(), curve.kind,
                     lg.TARGET_KINDS[curve.kind], f'{p:.6g}', f'{x:.6g}',
                     f'{g:.8g}', f'{v:.8g}'))


def main(argv=None):
    """Run the tool; return the exit status."""
    args = parse_args(argv)
    if args.list_presets:
        for name, preset in lg.PRESETS.items():
            print(f'{name}: {preset["title"]}\n  {preset["description"]}\n')
        return 0
    if args.list_losses:
        print('\n'.join(lg.registered_losses()))
        return 0
    if not args.out and not args.csv:
        print('error: give --out (PNG) and/or --csv', file=sys.stderr)
        return 2
    preset = lg.PRESETS.get(args.preset, {})
    specs = (lg.preset_curves(args.preset) if preset else []) + args.losses
    max_epochs = args.max_epochs
    try:
        rest = apply_cfg_options(specs, args.cfg_options)
        if args.config:
            spec, config_epochs = config_loss(args.config, rest)
            specs.append(spec)
            if max_epochs is None:
                max_epochs = config_epochs
        elif rest:
            raise ValueError(f'--cfg-options {", ".join(rest)}: no loss of '
                             'that type or index (and no --config)')
        if not specs:
            raise ValueError('nothing to plot: give --losses, --preset or '
                             '--config')
        for spec in specs:
            lg.build_loss(spec.cfg)  # fail early on bad names and arguments
        settings = lg.EvalSettings(
            num_classes=args.num_classes,
            context_logit=args.context_logit,
            batch_context=args.batch_context,
            epoch=preset.get('epoch') if args.epoch is None else args.epoch,
            max_epochs=max_epochs,
            pseudo_label=args.pseudo_label,
            class_prior=args.class_prior)
    except ValueError as err:
        print(f'error: {err}', file=sys.stderr)
        return 2

    sign = args.sign or preset.get('sign', 'signed')
    x_axis = args.x_axis or preset.get('x_axis', 'prob')
    layout = args.layout or preset.get('layout', 'panels')
    title = args.title or preset.get('title', 'Loss gradients')
    curves, messages = lg.compute_curves(
        specs,
        args.targets or preset.get('targets', ('negative', 'positive')),
        lg.probability_grid(args.points, args.p_range, x_axis),
        settings,
        override_targets=args.targets is not None)
    for message in messages:
        print(message, file=sys.stderr)
    if not curves:
        print('error: none of the losses could be evaluated', file=sys.stderr)
        return 1
    if args.out:
        plot(curves, args.out, sign, x_axis, layout, title, args.ylim,
             args.dpi)
        print(f'wrote {args.out}')
    if args.csv:
        write_csv(curves, args.csv, sign)
        print(f'wrote {args.csv}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
