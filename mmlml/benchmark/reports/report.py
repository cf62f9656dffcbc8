"""The reports of a benchmark sweep: the markdown tables of every mode
and setting, the figure and the papers' claims (:mod:`.paper_claims`),
written from the sweep's exported JSON (:func:`.record.export`):
:func:`report_args` reads what they need from it, and the head of each
method from its config (:func:`.heads.record_heads`: the share of the gap
to the same-head oracle, :mod:`.oracle`). Matplotlib is imported by
:func:`plot` only."""
import os
import os.path as osp
import types

from mmlml.benchmark.reports.heads import record_heads
from mmlml.benchmark.reports.oracle import gap_ends
from mmlml.benchmark.reports.paper_claims import claims_markdown
from mmlml.benchmark.reports.results import (alias_names, by_validation,
                                             markdown_table, tuned_table)
from mmlml.benchmark.sweep.search import SearchRules
from mmlml.benchmark.sweep.settings import (DEFAULT_DOMAIN, LEFT_OUT_REASON,
                                            SETTING_TITLES)

__all__ = ['report_args', 'report', 'plot', 'write_reports', 'claims_report']


def report_args(data: dict, **outputs) -> types.SimpleNamespace:
    """What the reports of an exported sweep need: its configs, modes,
    settings, seeds, whether it tuned, the two ends of the gap, its
    domain, the head of each method (``heads``, read from its config:
    :func:`~.heads.record_heads`), and the files to write (``outputs``
    replace the ones the JSON names: ``markdown``, ``claims``,
    ``figure``, ``out``)."""
    sweep = data['sweep']
    rules = SearchRules.from_dict(sweep['rules'])
    files = dict(data.get('reports', {}))
    files.update(outputs)
    return types.SimpleNamespace(
        configs=sweep['configs'],
        modes=sweep['modes'],
        settings=sweep['settings'],
        seeds=list(rules.seeds),
        tune=rules.tune,
        baseline=sweep.get('baseline', 'an'),
        oracle=sweep.get('oracle', 'full_labels'),
        domain=sweep.get('domain'),
        heads=record_heads(sweep['configs'], sweep.get('domain')),
        statistics=data.get('domain_statistics'),
        left_out=data.get('left_out', {}),
        labels_per_seed=bool(data.get('label_seed_per_training_seed')),
        trials=data.get('trials', []),
        out=files.get('out'),
        markdown=files.get('markdown'),
        claims=files.get('claims'),
        figure=files.get('figure'))


def _seeds(seeds, labels_per_seed: bool = False) -> str:
    """The seeds in words, and whether each drew its own labels."""
    return f'{len(seeds)} seed' + ('s' if len(seeds) > 1 else '') + (
        ', labels drawn per seed' if labels_per_seed else '')


def statistics_line(statistics: dict) -> str:
    """The ``domain_statistics`` block of a record in one paragraph."""
    hidden = ', '.join(f'{k} {v:.1%}'
                       for k, v in statistics['hidden_positive_share'].items())
    low, high = statistics['class_prior_range']
    return ("The domain (the record's `domain_statistics`): "
            f'{statistics["classes"]} classes, '
            f'{statistics["train_images"]} training images, '
            f'{statistics["labels_per_image"]:.2f} labels per image, class '
            f'priors {low:.1%} to {high:.1%}; positives hidden: {hidden}; '
            'test photographs seen in training '
            f'{statistics["test_photographs_seen_in_training"]:.1%}, test '
            'backgrounds seen in training '
            f'{statistics["test_backgrounds_seen_in_training"]:.1%}; '
            'labels drawn per training seed: '
            f'{"yes" if statistics["label_seed_per_training_seed"] else "no"}'
            '.\n')


def _in_order(results: dict, args) -> dict:
    """``results`` in the order of ``args.modes`` and ``args.settings``
    (the runs finish in any order), without empty settings."""
    return {
        mode: {
            setting: results[mode][setting]
            for setting in args.settings if results.get(mode, {}).get(setting)
        }
        for mode in args.modes if results.get(mode)
    }


def report(results: dict, args) -> str:
    """The markdown tables of every mode and setting of ``args``; under
    each, the configs of ``args.configs`` that have no row there yet.
    With ``args.heads`` (:func:`report_args`), each table gives the
    share of the gap to the same-head oracle too."""
    parts = []
    heads = getattr(args, 'heads', None)
    names = [osp.splitext(osp.basename(c))[0] for c in args.configs]
    for mode in args.modes:
        for setting in args.settings:
            rows = results.get(mode, {}).get(setting, {})
            ordered = by_validation(rows)
            tuned = ', tuned on validation' if args.tune else ''
            parts.append(f'**{SETTING_TITLES[setting]}, {mode} '
                         f'({_seeds(args.seeds, args.labels_per_seed)}'
                         f'{tuned})**\n')
            if ordered:
                table = tuned_table if args.tune else markdown_table
                ends = gap_ends(
                    results.get(mode, {}), setting, args.baseline, args.oracle,
                    heads)
                parts.append(
                    table(ordered, ends=ends, names=alias_names(rows)) + '\n')
            left = getattr(args, 'left_out', {}).get(setting, [])
            if left:
                parts.append('Left out: ' + ', '.join(f'`{name}`'
                                                      for name in left) +
                             f' ({LEFT_OUT_REASON}).\n')
            missing = ', '.join(f'`{name}`' for name in names
                                if name not in rows and name not in left)
            if missing:
                parts.append(f'Not run yet: {missing}.\n')
    if args.statistics:
        parts.append(statistics_line(args.statistics))
    trials = args.trials
    pruned = sum(t.get('state') == 'pruned' for t in trials)
    parts.append(f'{len(trials)} training runs' +
                 (f' ({pruned} of them pruned)' if pruned else '') +
                 f', {sum(t.get("minutes", 0) for t in trials):.0f} minutes '
                 'of training in all.')
    return '\n'.join(parts)


def plot(results: dict, args, path: str) -> None:
    """One panel per (mode, setting): test mAP of each method (mean and
    std over seeds), the baseline and the oracle as vertical lines."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    panels = [(mode, setting, rows)
              for mode, by_setting in _in_order(results, args).items()
              for setting, rows in by_setting.items()]
    height = max(len(rows) for _, _, rows in panels) * 0.28 + 1.2
    fig, axes = plt.subplots(
        1, len(panels), figsize=(5.2 * len(panels), height), squeeze=False)
    for ax, (mode, setting, rows) in zip(axes[0], panels):
        ordered = list(reversed(list(by_validation(rows).items())))
        names = [name for name, _ in ordered]
        means = [row['mAP'] for _, row in ordered]
        stds = [row['std']['mAP'] for _, row in ordered]
        colours = [
            'tab:red' if name == args.baseline else
            'tab:green' if name == args.oracle else 'tab:blue'
            for name in names
        ]
        ax.barh(names, means, xerr=stds, color=colours, capsize=2)
        ends = gap_ends(results[mode], setting, args.baseline, args.oracle)
        if ends is not None:
            ax.axvline(
                rows[ends.baseline]['mAP'], color='tab:red', ls='--', lw=1)
            ax.axvline(
                ends.oracle_row['mAP'], color='tab:green', ls='--', lw=1)
        # A collapsed method (far below the baseline) would squeeze the
        # others into a corner: the axis starts near the rest, and the
        # method's value is written where its bar would be.
        floor = rows[args.baseline]['mAP'] - 25 \
            if args.baseline in rows else 0
        kept = [m - s for m, s in zip(means, stds) if m >= floor]
        low = max(0, min(kept, default=2) - 2)
        for y, mean in enumerate(means):
            if mean < low:
                ax.text(low + 0.3, y, f'← {mean:.1f}', va='center', fontsize=8)
        ax.set_xlim(low, 100)
        ax.set_xlabel('test mAP (%)')
        tuned = ', tuned on validation' if args.tune else ', fixed recipe'
        ax.set_title(
            f'{args.domain or DEFAULT_DOMAIN}: '
            f'{SETTING_TITLES[setting]}\n({mode}, '
            f'{_seeds(args.seeds, args.labels_per_seed)}{tuned})',
            fontsize=10)
        ax.tick_params(axis='y', labelsize=8)
    fig.tight_layout()
    os.makedirs(osp.dirname(osp.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_reports(results: dict, args) -> str:
    """Write the --markdown, --claims and --figure files of ``results``;
    return the markdown."""
    text = report(results, args)
    if args.markdown:
        with open(args.markdown, 'w') as f:
            f.write(text + '\n')
    if args.claims:
        with open(args.claims, 'w') as f:
            f.write(claims_report(results, args))
    if args.figure and results:
        plot(results, args, args.figure)
    return text


def claims_report(results: dict, args) -> str:
    """The markdown of the papers' claims, per mode."""
    parts = [
        '<!-- Generated by tools/benchmark.py --claims from the runs of '
        f'{args.out or "this benchmark"}; do not edit. -->\n'
    ]
    for mode, by_setting in _in_order(results, args).items():
        domain = args.domain or DEFAULT_DOMAIN
        parts.append(f'## Paper claims: {domain}, {mode}, tuned on '
                     'validation '
                     f'({_seeds(args.seeds, args.labels_per_seed)})\n')
        parts.append(
            claims_markdown(
                by_setting,
                SETTING_TITLES,
                args.baseline,
                args.oracle,
                heads=getattr(args, 'heads', None)))
    return '\n'.join(parts)
