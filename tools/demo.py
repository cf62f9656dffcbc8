"""Train configs on the embedded demo dataset and report their test metrics.

For each config: train (validating on the held-out clean split every
epoch), reload the checkpoint with the best validation mAP, evaluate it on
the fully labelled test split, and print mAP, CP, CR, CF1, OP, OR, OF1.
With several configs it ends with one table, so the whole demo benchmark is
one command::

    python tools/demo.py configs/demo/*.py --seeds 0 1 \
        --out work_dirs/demo/summary.json

CF1 is reported twice: MMPretrain's ``MultiLabelMetric`` averages per-class
F1 scores ("CF1 (mean F1)"), while the multi-label papers define
``CF1 = 2 CP CR / (CP + CR)`` ("CF1 (paper)").

A config that refuses to train (a setting its hooks or loss reject) or
fails does not end the comparison: its error is printed where it happens,
the other configs run, the final table lists it with its one-line reason,
and the tool exits with a non-zero status after the table.

Each run is :func:`mmlml.apis.trial_training.train_trial` (what a
benchmark worker runs for a trial).

Progress: MMEngine's log prints a training line with the run's ETA at
least four times an epoch, and before each run stderr says which run of
how many is next, the time elapsed and the estimated time left.
"""
import json
import os.path as osp
import traceback

from mmengine.dist import is_main_process

import mmlml  # noqa: F401
from mmlml.apis.trial_training import (LogIntervalHook, failure_reason,
                                       missing_label_file)
from mmlml.apis.trial_training import train_trial as run
from mmlml.benchmark.reports.results import COLUMNS, aggregate
from mmlml.cli import (add_cfg_options_argument, add_force_argument,
                       add_launcher_arguments, check_output, tool_parser)
from mmlml.utils.progress_line import ProgressLine

__all__ = [
    'LogIntervalHook', 'failure_reason', 'missing_label_file', 'run',
    'format_table', 'main'
]


def format_table(results: dict, baseline=None, failed=None) -> str:
    """One row per config: mean (and +- std over seeds) of each metric, and
    the mAP difference to ``baseline``; then one row per config of
    ``failed`` (name -> one-line reason) with its reason."""
    show_std = any(len(row['runs']) > 1 for row in results.values())
    width = 16 if show_std else 14
    columns = list(COLUMNS)
    header = f'{"config":<14}' + ''.join(f'{c:>{width}}' for c in columns)
    if baseline:
        header += f'{"mAP - " + baseline:>{width}}'
    lines = [header, '-' * len(header)]
    for name, row in results.items():
        cells = []
        for key in columns:
            cell = f'{row[key]:.2f}'
            if show_std:
                cell += f' ±{row["std"][key]:.2f}'
            cells.append(f'{cell:>{width}}')
        if baseline:
            diff = row['mAP'] - results[baseline]['mAP']
            cells.append(f'{diff:>+{width}.2f}')
        lines.append(f'{name:<14}' + ''.join(cells))
    for name, reason in (failed or {}).items():
        lines.append(f'{name:<14}  failed: {reason}')
    return '\n'.join(lines)


def main(argv=None):
    parser = tool_parser(__doc__)
    parser.add_argument('configs', nargs='+', help='config files')
    parser.add_argument(
        '--seeds',
        nargs='+',
        type=int,
        help='train each config once per seed (model initialisation and '
        'data order; the data and its partial labels stay fixed) and '
        "report mean and standard deviation; default: the config's seed")
    parser.add_argument(
        '--baseline',
        default='an',
        help='config name whose mAP the table subtracts (if present)')
    parser.add_argument(
        '--work-dir',
        default='work_dirs/demo',
        help='one sub-folder per config is created here')
    parser.add_argument(
        '--diagnostics',
        action='store_true',
        help='also report how the last training epoch scored the missing '
        'labels (MissingLabelDiagnosticsHook)')
    parser.add_argument('--out', help='also write the results as JSON')
    add_cfg_options_argument(parser, 'override settings of every config')
    parser.add_argument(
        '--extra-hook',
        action='append',
        type=json.loads,
        default=[],
        help='a hook config as JSON, added to every config\'s custom_hooks '
        '(the benchmark sweep adds its pruning hook so)')
    add_launcher_arguments(parser, 'job launcher (pytorch: under torchrun)')
    add_force_argument(parser)
    args = parser.parse_args(argv)
    check_output(args.out, args.configs, args.force)

    results, failed = {}, {}
    label_files = {
        config: missing_label_file(config, args.cfg_options)
        for config in args.configs
    }
    seeds = args.seeds or [None]
    progress = ProgressLine(
        '[demo] runs',
        len(seeds) * sum(path is None for path in label_files.values()))
    for config in args.configs:
        name = osp.splitext(osp.basename(config))[0]
        label_file = label_files[config]
        if label_file is not None:
            print(f'\n[{name}] skipped: it trains on {label_file}, which '
                  'does not exist yet (run the first stage its header '
                  'describes).')
            continue
        runs = []
        for i, seed in enumerate(seeds):
            progress.print(f'next: {name}' +
                           (f', seed {seed}' if seed is not None else ''))
            try:
                runs.append(
                    run(config, args.work_dir, seed, args.cfg_options,
                        args.diagnostics, args.extra_hook, args.launcher))
            except Exception as err:  # the other configs still run
                traceback.print_exc()
                failed[name] = failure_reason(err)
                print(f'\n[{name}] failed: {failed[name]}')
                progress.done += len(seeds) - i
                break
            progress.done += 1
            print(f'\n[{name}] test metrics (best val checkpoint, '
                  f'seed {seed if seed is not None else "of the config"}, '
                  f'{runs[-1]["minutes"]:.1f} min):')
            for key in COLUMNS:
                print(f'  {key:<14} {runs[-1][key]:6.2f}')
            for key, value in runs[-1].get('missing labels', {}).items():
                print(f'  missing labels, {key:<9} {value:6.3f}')
        if name not in failed:
            results[name] = aggregate(runs)
    if (len(results) + len(failed) > 1 or failed
            or args.seeds and len(args.seeds) > 1):
        baseline = args.baseline if args.baseline in results else None
        print('\n' + format_table(results, baseline, failed))
    if args.out and is_main_process():
        with open(args.out, 'w') as f:
            json.dump(
                dict(
                    results, **{
                        name: dict(failed=reason)
                        for name, reason in failed.items()
                    }),
                f,
                indent=2)
    if failed:
        raise SystemExit(f'[demo] {len(failed)} of {len(args.configs)} '
                         f'configs failed: {", ".join(failed)} (reasons in '
                         'the table above)')
    return results


if __name__ == '__main__':
    main()
