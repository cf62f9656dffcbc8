"""Plot the missing-label diagnostics of one or several training runs
against the epoch.

::

    python tools/analysis/plot_missing_label_curves.py \\
        work_dirs/an work_dirs/hill --out curves.png \\
        [--metrics recall precision auc] [--names AN Hill]

``MissingLabelDiagnosticsHook`` (``custom_hooks=[dict(type=
'MissingLabelDiagnosticsHook')]``) writes its metrics through the
visualiser as ``missing_label/{metric}`` at every report (step: the
epoch, or the iteration with ``by_epoch=False``); with MMEngine's
``LocalVisBackend`` (the default of mmlml's runtime) they land in
``{work_dir}/{timestamp}/vis_data/scalars.json``, one JSON object per line.
Each argument is such a ``scalars.json`` or a work directory: the most
recent ``{timestamp}/vis_data/scalars.json`` of it that holds the metrics
(a resumed run writes a new timestamp, which continues the steps).

One panel per metric, one line per run (legend: ``--names``, else the
work directory's name). The default metrics, ``recall``, ``precision``
and ``auc``, are those of Zhang et al.'s Hill/SPLC paper, Fig. 7: the
recall and precision of the missing labels at the hook's threshold
(``thr``, 0.5 by default) over training, and how well the scores rank
them above the true negatives. The others: ``frac_missing``, ``pos_rate``
(the precision of random pseudo-labelling, drawn as a grey dotted line in
the ``precision`` panel), ``score_pos``, ``score_neg``, ``auc_macro``; see
the hook's docstring for their definitions. The scores are those of the
training forward pass (augmented, model changing over the epoch).
"""
import glob
import json
import os
import os.path as osp

from mmlml.cli import add_force_argument, check_output, tool_parser

METRICS = ('frac_missing', 'pos_rate', 'score_pos', 'score_neg', 'recall',
           'precision', 'auc', 'auc_macro')


def parse_args(argv=None):
    parser = tool_parser(__doc__)
    parser.add_argument(
        'runs',
        nargs='+',
        help='work directories or their vis_data/scalars.json files')
    parser.add_argument('--out', required=True, help='the image to write')
    parser.add_argument(
        '--metrics',
        nargs='+',
        choices=METRICS,
        default=['recall', 'precision', 'auc'],
        help='default: recall precision auc')
    parser.add_argument('--names', nargs='+', help='one legend name per run')
    parser.add_argument(
        '--prefix',
        default='missing_label',
        help="the hook's prefix (default: missing_label)")
    parser.add_argument(
        '--xlabel',
        default='epoch',
        help="the unit of the hook's steps (default: epoch)")
    add_force_argument(parser)
    args = parser.parse_args(argv)
    check_output(args.out, args.runs, args.force)
    if args.names is not None and len(args.names) != len(args.runs):
        parser.error(f'--names needs one name per run: {len(args.runs)} '
                     f'runs, {len(args.names)} names')
    return args


def read_scalars(path: str, prefix: str = 'missing_label') -> dict:
    """The hook's metrics in a ``scalars.json``.

    Returns:
        dict: ``{metric: ([step, ...], [value, ...])}`` in file order,
        for every key ``'{prefix}/{metric}'`` found; a step reported twice
        (a resumed run) keeps its last value.
    """
    head = prefix.rstrip('/') + '/'
    series = {}
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise ValueError(f'{path}, line {number}: not JSON '
                                 f'({error})') from error
            keys = [k for k in record if k.startswith(head)]
            if not keys:
                continue
            if 'step' not in record:
                raise ValueError(f'{path}, line {number}: a record without '
                                 "a 'step'")
            for key in keys:
                series.setdefault(key[len(head):], {})[record['step']] = \
                    record[key]
    return {
        name: (sorted(values), [values[s] for s in sorted(values)])
        for name, values in series.items()
    }


def find_scalars(run: str,
                 prefix: str = 'missing_label',
                 hook: str = 'MissingLabelDiagnosticsHook') -> str:
    """The ``scalars.json`` of a run: the path itself, or the most recent
    ``{timestamp}/vis_data/scalars.json`` of a work directory holding
    ``prefix/...`` scalars (written by the custom hook ``hook``, which the
    error names)."""
    if osp.isfile(run):
        return run
    if not osp.isdir(run):
        raise FileNotFoundError(f'{run} is neither a scalars.json nor a '
                                'work directory')
    candidates = sorted(
        glob.glob(osp.join(run, '*', 'vis_data', 'scalars.json')),
        reverse=True)
    for path in candidates:
        if read_scalars(path, prefix):
            return path
    raise FileNotFoundError(
        f'No {{timestamp}}/vis_data/scalars.json of {run} holds '
        f"'{prefix}/...' scalars ({len(candidates)} scalars.json found): "
        f"train with custom_hooks=[dict(type='{hook}')] and "
        "vis_backends=[dict(type='LocalVisBackend')].")


def run_name(run: str) -> str:
    """The legend name of a run: its work directory's name."""
    path = osp.abspath(run)
    if osp.isfile(path):
        # {work_dir}/{timestamp}/vis_data/scalars.json
        parts = path.split(os.sep)
        if len(parts) >= 4 and parts[-2] == 'vis_data':
            return parts[-4]
        return osp.splitext(osp.basename(path))[0]
    return osp.basename(path.rstrip(os.sep))


def plot_curves(runs, metrics, out: str, xlabel: str = 'epoch') -> None:
    """One panel per metric; ``runs`` is a list of ``(name, series)``."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(
        1, len(metrics), figsize=(4.2 * len(metrics), 3.6), squeeze=False)
    for ax, metric in zip(axes[0], metrics):
        baselines = []
        for k, (name, series) in enumerate(runs):
            if metric not in series:
                continue
            steps, values = series[metric]
            ax.plot(
                steps,
                values,
                marker='o',
                markersize=3,
                color=f'C{k}',
                label=name)
            # The precision of random pseudo-labelling, once per data set.
            baseline = series.get('pos_rate')
            if metric == 'precision' and baseline and \
                    baseline not in baselines:
                baselines.append(baseline)
                ax.plot(
                    *baseline,
                    color='0.4',
                    linestyle=':',
                    linewidth=1.2,
                    label='random (pos_rate)' if len(runs) == 1
                    or len(baselines) == 1 else f'random ({name})')
        ax.set_title(metric)
        ax.set_xlabel(xlabel)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    os.makedirs(osp.dirname(osp.abspath(out)), exist_ok=True)
    fig.savefig(out, dpi=120)
    plt.close(fig)


def main(argv=None):
    args = parse_args(argv)
    names = args.names or [run_name(run) for run in args.runs]
    runs = []
    for run, name in zip(args.runs, names):
        path = find_scalars(run, args.prefix)
        series = read_scalars(path, args.prefix)
        absent = [m for m in args.metrics if m not in series]
        if len(absent) == len(args.metrics):
            raise ValueError(f'{path} holds none of the metrics '
                             f'{args.metrics} (it holds {sorted(series)})')
        print(f'{name}: {path}' + (f' (without {absent})' if absent else ''))
        for metric in args.metrics:
            if metric in series:
                steps, values = series[metric]
                print(f'  {metric}: ' +
                      ', '.join(f'{s}: {v:.3f}'
                                for s, v in zip(steps, values)))
        runs.append((name, series))
    plot_curves(runs, args.metrics, args.out, args.xlabel)
    print(f'Curves written to {args.out}')
    return dict(runs)


if __name__ == '__main__':
    main()
