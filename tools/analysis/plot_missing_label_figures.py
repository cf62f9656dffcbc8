"""Plot the missing-label figures of one or several scored runs.

::

    python tools/analysis/plot_missing_label_figures.py an.npz hill.npz \\
        --out-dir figures/ [--thr 0.5] [--theta 0.9] [--bins 20] \\
        [--names AN Hill]

Each ``.npz`` is written by ``tools/analysis/missing_label_scores.py`` (the
scores a trained checkpoint gives its partially labelled training set,
with the observed and full labels). The numbers come from
:mod:`mmlml.analysis.missing_label_scores`. Several files are compared
side by side (one panel or one colour per run). Written to ``--out-dir``:

- ``histograms.png``: histograms of the probabilities of the observed
  positives, the missing positives (unannotated, true label 1) and the true
  negatives among the unannotated entries (and the observed negatives, if
  any), classes pooled, log-scaled counts; one panel per run. Zhang et
  al.'s Hill/SPLC paper, Fig. 2 (training set) and Fig. 5.
- ``wasserstein.png``: per class, the Wasserstein-1 distance between the
  scores of the missing positives and of the unannotated negatives,
  classes sorted by the distance of the first run (larger: the scores tell
  the missing labels apart better); EM/APL paper, Fig. 4(a), and the
  pooled distance of the GR Loss paper, Fig. 3(a), in the legend.
- ``wasserstein_scatter.png`` (exactly two runs with the same classes):
  one point per class, the first run's distance against the second's,
  with the diagonal and the share of classes below it, as EM/APL Fig. 4(a)
  draws AN against EM.
- ``ppv_npv.png``: PPV and NPV of the rule "positive iff p >= thr" on the
  unannotated entries, against the threshold, pooled over classes (solid)
  and averaged over classes (dashed), ``--thr`` marked; the LASD paper,
  Fig. 2.

It prints a table per run (group sizes, pooled and mean W1, PPV / NPV at
``--thr``, the accuracy of APL's rule applied to the final scores and, when
the checkpoint held them, of the pseudo-labels of training; EM/APL Table
4) and saves it as ``summary.json``.
"""
import json
import os
import os.path as osp
import sys

import numpy as np

from mmlml.analysis import missing_label_scores as mls
from mmlml.cli import add_force_argument, check_output, tool_parser

#: The files written into --out-dir.
OUTPUT_FILES = ('histograms.png', 'wasserstein.png', 'wasserstein_scatter.png',
                'ppv_npv.png', 'summary.json')

#: The colour of each group in the histograms.
GROUP_COLORS = {
    'observed_positive': 'tab:blue',
    'missing_positive': 'tab:red',
    'unannotated_negative': 'tab:gray',
    'observed_negative': 'tab:green',
}
REQUIRED_KEYS = ('scores', 'observed', 'full')


def parse_args(argv=None):
    parser = tool_parser(__doc__)
    parser.add_argument(
        'files',
        nargs='+',
        help='.npz files of tools/analysis/missing_label_scores.py')
    parser.add_argument(
        '--out-dir', required=True, help='where to write the figures')
    parser.add_argument(
        '--names',
        nargs='+',
        help='one run name per file (default: the name saved in the file)')
    parser.add_argument(
        '--thr',
        type=float,
        default=0.5,
        help='the threshold of PPV / NPV in the table (default: 0.5)')
    parser.add_argument(
        '--theta',
        type=float,
        default=0.9,
        help="the fraction of APL's rule (default: 0.9)")
    parser.add_argument(
        '--bins',
        type=int,
        default=20,
        help='histogram bins on [0, 1] (default: 20)')
    parser.add_argument(
        '--num-thresholds',
        type=int,
        default=101,
        help='points of the threshold grid on [0, 1] (default: 101)')
    add_force_argument(parser)
    args = parser.parse_args(argv)
    for name in OUTPUT_FILES:
        check_output(
            osp.join(args.out_dir, name),
            args.files,
            args.force,
            option=f'--out-dir {args.out_dir}: the file')
    missing = [path for path in args.files if not osp.isfile(path)]
    if missing:
        parser.error(f'no such file: {", ".join(missing)}')
    if args.names is not None and len(args.names) != len(args.files):
        parser.error(f'--names needs one name per file: {len(args.files)} '
                     f'files, {len(args.names)} names')
    if not 0 <= args.thr <= 1:
        parser.error(f'--thr must lie in [0, 1], got {args.thr}')
    if not 0 <= args.theta <= 1:
        parser.error(f'--theta must lie in [0, 1], got {args.theta}')
    if args.bins < 1 or args.num_thresholds < 2:
        parser.error('--bins must be >= 1 and --num-thresholds >= 2')
    return args


def load_run(path: str, name: str = None) -> dict:
    """Read one ``.npz`` of ``missing_label_scores.py`` (checked).

    Raises:
        ValueError: ``path`` is not such a file.
    """
    not_ours = (f'{path} is not an .npz file of '
                'tools/analysis/missing_label_scores.py')
    try:
        data = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError) as error:
        raise ValueError(f'{not_ours} ({error})') from None
    if not isinstance(data, np.lib.npyio.NpzFile):
        raise ValueError(f'{not_ours}: it holds a single array')
    with data:
        missing = [key for key in REQUIRED_KEYS if key not in data]
        if missing:
            raise ValueError(f'{path} lacks {missing}: is it a file of '
                             'tools/analysis/missing_label_scores.py?')
        run = {key: data[key] for key in data.files}
    scores, observed, full = mls.check_score_inputs(run['scores'],
                                                    run['observed'],
                                                    run['full'])
    run.update(scores=scores, observed=observed, full=full)
    if name is None:
        name = str(run['name']) if 'name' in run else osp.splitext(
            osp.basename(path))[0]
    run['name'] = name
    num_classes = scores.shape[1]
    classes = run.get('classes')
    run['classes'] = [str(c) for c in classes] if classes is not None \
        and len(classes) == num_classes else [str(c)
                                              for c in range(num_classes)]
    target = str(run.get('pseudo_label_target', ''))
    run['pseudo_label_target'] = target
    return run


def summarise(run: dict, thr: float, theta: float) -> dict:
    """:func:`mls.missing_label_summary` of a run, with the checkpoint's
    pseudo-labels when their kind is known."""
    target = run['pseudo_label_target']
    return mls.missing_label_summary(
        run['scores'],
        run['observed'],
        run['full'],
        thr=thr,
        theta=theta,
        pseudo_labels=run['pseudo_labels'] if target else None,
        pseudo_label_target=target or 'negative')


def plot_histograms(runs, path: str, bins: int = 20) -> None:
    """``histograms.png``: one panel per run."""
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(
        1, len(runs), figsize=(5.5 * len(runs), 4), sharey=True, squeeze=False)
    for ax, run in zip(axes[0], runs):
        edges, hists = mls.group_histograms(run['scores'], run['observed'],
                                            run['full'], bins)
        for group in mls.GROUPS:
            counts = hists[group]
            if not counts.sum():
                continue
            ax.stairs(
                counts,
                edges,
                color=GROUP_COLORS[group],
                linewidth=1.8,
                label=f'{mls.GROUP_TITLES[group]} ({counts.sum()})')
        ax.set_yscale('log')
        # Head room above the highest bar for the legend.
        top = max([int(c.max()) for c in hists.values()] + [1])
        ax.set_ylim(0.5, top * 30)
        ax.set_xlim(0, 1)
        ax.set_xlabel('predicted probability p')
        ax.set_title(run['name'])
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc='upper right')
    axes[0][0].set_ylabel('number of entries (log)')
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_wasserstein(runs, path: str) -> None:
    """``wasserstein.png``: per-class W1 bars, sorted by the first run;
    grouped when all runs share their classes, else one panel per run."""
    import matplotlib.pyplot as plt
    results = [
        mls.unannotated_wasserstein(r['scores'], r['observed'], r['full'])
        for r in runs
    ]
    same = all(r['classes'] == runs[0]['classes'] for r in runs)
    groups = [list(range(len(runs)))] if same else [[i]
                                                    for i in range(len(runs))]
    num_classes = max(len(r['classes']) for r in runs)
    fig, axes = plt.subplots(
        len(groups),
        1,
        figsize=(max(6, 0.35 * num_classes * (1 + 0.3 * len(runs))),
                 3.6 * len(groups)),
        squeeze=False)
    for ax, members in zip(axes[:, 0], groups):
        first = results[members[0]]['per_class']
        order = np.argsort(-np.nan_to_num(first, nan=-1.), kind='stable')
        width = 0.8 / len(members)
        x = np.arange(order.size)
        undefined = set()
        for k, i in enumerate(members):
            values = results[i]['per_class'][order]
            undefined.update(runs[i]['classes'][c]
                             for c in results[i]['undefined'])
            ax.bar(
                x + (k - (len(members) - 1) / 2) * width,
                np.nan_to_num(values),
                width,
                label=f'{runs[i]["name"]} (pooled '
                f'{results[i]["pooled"]:.3f}, mean '
                f'{results[i]["mean"]:.3f})')
        ax.set_xticks(x)
        ax.set_xticklabels([runs[members[0]]['classes'][c] for c in order],
                           rotation=60,
                           ha='right',
                           fontsize=8)
        ax.set_ylabel('W1(missing pos., unannotated neg.)')
        title = 'Wasserstein-1 distance per class'
        if undefined:
            title += f' (undefined, no bar: {", ".join(sorted(undefined))})'
        ax.set_title(title, fontsize=10)
        ax.grid(axis='y', alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_wasserstein_scatter(runs, path: str) -> float:
    """``wasserstein_scatter.png`` for two runs with the same classes;
    returns the share of classes below the diagonal (second run's distance
    larger)."""
    import matplotlib.pyplot as plt
    a, b = (
        mls.unannotated_wasserstein(r['scores'], r['observed'],
                                    r['full'])['per_class'] for r in runs)
    defined = ~(np.isnan(a) | np.isnan(b))
    below = float((b[defined] > a[defined]).mean()) if defined.any() \
        else float('nan')
    fig, ax = plt.subplots(figsize=(4.5, 4.5))
    ax.scatter(a[defined], b[defined], s=18)
    top = max(1e-3, float(np.nanmax(np.r_[a[defined], b[defined], 0.])))
    ax.plot([0, top * 1.05], [0, top * 1.05], 'k--', linewidth=1)
    ax.set_xlim(0, top * 1.05)
    ax.set_ylim(0, top * 1.05)
    ax.set_xlabel(f'W1 of {runs[0]["name"]}')
    ax.set_ylabel(f'W1 of {runs[1]["name"]}')
    ax.set_title(
        f'per class: {below:.0%} of the classes larger with '
        f'{runs[1]["name"]}',
        fontsize=9)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return below


def plot_ppv_npv(runs, path: str, thr: float, num_thresholds: int) -> None:
    """``ppv_npv.png``: PPV (left) and NPV (right) against the threshold."""
    import matplotlib.pyplot as plt
    grid = np.linspace(0., 1., num_thresholds)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharex=True)
    for k, run in enumerate(runs):
        pv = mls.predictive_values(run['scores'], run['observed'], run['full'],
                                   grid)
        color = f'C{k}'
        for ax, key in zip(axes, ('ppv', 'npv')):
            ax.plot(grid, pv[key], color=color, label=f'{run["name"]}')
            ax.plot(
                grid,
                pv[f'{key}_macro'],
                color=color,
                linestyle='--',
                label=f'{run["name"]} (class mean)')
    for ax, title in zip(axes,
                         ('PPV = TP / (TP + FP)', 'NPV = TN / (TN + FN)')):
        ax.axvline(thr, color='k', linestyle=':', linewidth=1)
        ax.set_xlabel('threshold (positive iff p >= threshold)')
        ax.set_title(f'{title}, unannotated entries', fontsize=10)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _json_safe(value):
    """``value`` with NaN floats replaced by None (strict JSON)."""
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, float) and value != value:
        return None
    return value


def unique_names(names):
    """The run names, with ``#2``, ``#3``... appended to repeats."""
    seen, out = {}, []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f'{name} #{seen[name]}')
    return out


def format_table(summaries) -> str:
    """The summaries of the runs as a text table, one column per run."""

    def num(value):
        if value is None:
            return '-'
        if isinstance(value, float):
            return 'n/a' if value != value else f'{value:.4f}'
        return str(value)

    first = summaries[0][1]
    rows = [
        ('entries',
         [f'{s["num_samples"]} x {s["num_classes"]}' for _, s in summaries])
    ]
    for group in mls.GROUPS:
        rows.append((mls.GROUP_TITLES[group].split(' (')[0],
                     [s['counts'][group] for _, s in summaries]))
    rows += [
        ('W1 pooled', [s['w1_pooled'] for _, s in summaries]),
        ('W1 class mean', [s['w1_mean'] for _, s in summaries]),
        (f'PPV @ p>={first["thr"]:g}', [s['ppv'] for _, s in summaries]),
        (f'NPV @ p>={first["thr"]:g}', [s['npv'] for _, s in summaries]),
        ('PPV class mean', [s['ppv_macro'] for _, s in summaries]),
        ('NPV class mean', [s['npv_macro'] for _, s in summaries]),
        (f'APL rule {first["apl_rule_theta"]:.0%}: accuracy',
         [s['apl_rule_accuracy'] for _, s in summaries]),
        ('checkpoint pseudo-labels',
         [s.get('num_pseudo_labels') for _, s in summaries]),
        ('  their accuracy',
         [s.get('pseudo_label_accuracy') for _, s in summaries]),
    ]
    header = [''] + [name for name, _ in summaries]
    table = [header] + [[label] + [num(v) for v in values]
                        for label, values in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    return '\n'.join('  '.join(
        cell.ljust(w) if i == 0 else cell.rjust(w)
        for i, (cell, w) in enumerate(zip(row, widths))) for row in table)


def main(argv=None):
    args = parse_args(argv)
    try:
        import matplotlib
    except ImportError as error:
        raise SystemExit('plot_missing_label_figures.py needs matplotlib '
                         '(pip install matplotlib)') from error
    matplotlib.use('Agg')
    names = args.names or [None] * len(args.files)
    try:
        runs = [load_run(path, name) for path, name in zip(args.files, names)]
    except ValueError as error:
        sys.exit(f'plot_missing_label_figures.py: error: {error}')
    for run, name in zip(runs, unique_names([r['name'] for r in runs])):
        run['name'] = name
    os.makedirs(args.out_dir, exist_ok=True)

    written = []
    path = osp.join(args.out_dir, 'histograms.png')
    plot_histograms(runs, path, args.bins)
    written.append(path)
    path = osp.join(args.out_dir, 'wasserstein.png')
    plot_wasserstein(runs, path)
    written.append(path)
    if len(runs) == 2 and runs[0]['classes'] == runs[1]['classes']:
        path = osp.join(args.out_dir, 'wasserstein_scatter.png')
        plot_wasserstein_scatter(runs, path)
        written.append(path)
    path = osp.join(args.out_dir, 'ppv_npv.png')
    plot_ppv_npv(runs, path, args.thr, args.num_thresholds)
    written.append(path)

    summaries = [(run['name'], summarise(run, args.thr, args.theta))
                 for run in runs]
    with open(osp.join(args.out_dir, 'summary.json'), 'w') as f:
        json.dump({name: _json_safe(s) for name, s in summaries}, f, indent=2)
    print(format_table(summaries))
    print('Figures written: ' + ', '.join(written))
    return dict(summaries)


if __name__ == '__main__':
    main()
