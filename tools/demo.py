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

Progress: MMEngine's log prints a training line with the run's ETA at
least four times an epoch, and before each run stderr says which run of
how many is next, the time elapsed and the estimated time left.
"""
import json
import math
import os.path as osp
import re
import time
import traceback

from mmengine.config import Config
from mmengine.dist import is_main_process
from mmengine.hooks import Hook, LoggerHook
from mmengine.runner import EpochBasedTrainLoop, Runner

import mmlml  # noqa: F401
from mmlml.benchmark.results import COLUMNS, aggregate, summarise
from mmlml.cli import (add_cfg_options_argument, add_force_argument,
                       add_launcher_arguments, check_output, tool_parser)
from mmlml.datasets.checks import check_config_annotation_files
from mmlml.utils.progress_line import ProgressLine

DIAGNOSTICS = ('score_pos', 'score_neg', 'recall', 'precision', 'auc')


def missing_label_file(config: str, cfg_options=None):
    """The ``label_file`` that the training set of ``config`` reads and that
    does not exist yet (the second stage of a two-stage config, e.g.
    configs/demo/pseudo_label.py, before its first stage ran), else None."""
    cfg = Config.fromfile(config)
    if cfg_options:
        cfg.merge_from_dict(cfg_options)
    dataset = cfg.get('train_dataloader', {}).get('dataset')
    while isinstance(dataset, dict):
        path = dataset.get('label_file')
        if path is not None and not osp.exists(path):
            return path
        dataset = dataset.get('dataset')
    return None


class LogIntervalHook(Hook):
    """Log at least four training lines an epoch (with MMEngine's ETA):
    lowers the ``LoggerHook`` interval to a quarter of an epoch where it is
    longer (the configs' 50 iterations are most of a demo epoch, minutes on
    a loaded machine)."""

    priority = 'VERY_LOW'

    def before_train(self, runner) -> None:
        if not isinstance(runner.train_loop, EpochBasedTrainLoop):
            return
        quarter = max(1, math.ceil(len(runner.train_dataloader) / 4))
        for hook in runner.hooks:
            if isinstance(hook, LoggerHook) and hook.interval > quarter:
                hook.interval = quarter


def run(config: str,
        work_root: str,
        seed=None,
        cfg_options=None,
        diagnostics: bool = False,
        extra_hooks=(),
        launcher: str = 'none') -> dict:
    """Train one config (with the given training seed, else the config's),
    test its best checkpoint, return the summary. With ``diagnostics``, a
    ``MissingLabelDiagnosticsHook`` also reports how the last training epoch
    scored the labels missing from the annotations. ``extra_hooks`` are
    added to the config's ``custom_hooks`` (the benchmark sweep's pruning
    hook); ``launcher`` is MMEngine's (``'pytorch'`` under torchrun)."""
    cfg = Config.fromfile(config)
    if cfg_options:
        cfg.merge_from_dict(cfg_options)
    name = osp.splitext(osp.basename(config))[0]
    cfg.work_dir = osp.join(work_root, name)
    if seed is not None:
        cfg.randomness = dict(cfg.get('randomness') or {}, seed=seed)
        cfg.work_dir = osp.join(cfg.work_dir, f'seed{seed}')
    cfg.launcher = launcher
    hooks = list(extra_hooks)
    if diagnostics:
        hooks.append(dict(type='MissingLabelDiagnosticsHook'))
    if hooks:
        cfg.custom_hooks = list(cfg.get('custom_hooks') or []) + hooks
    check_config_annotation_files(cfg)  # no pickle is loaded
    start = time.time()
    runner = Runner.from_cfg(cfg)
    runner.register_hook(LogIntervalHook())
    runner.train()
    best = runner.message_hub.get_info('best_ckpt')
    if best:
        runner.load_checkpoint(best)
    summary = summarise(runner.test())
    summary['best checkpoint'] = best or 'last epoch'
    # The validation mAP that selected it, its epoch and the number of
    # epochs (for tuning on validation only: a best epoch that is the last
    # asks for a longer schedule).
    summary['val mAP'] = runner.message_hub.get_info('best_score')
    found = re.search(r'epoch_(\d+)\.pth$', best or '')
    summary['best epoch'] = int(found.group(1)) if found else runner.epoch
    summary['epochs'] = runner.max_epochs
    if diagnostics:
        hub = runner.message_hub
        summary['missing labels'] = {
            name: hub.get_scalar(f'missing_label/{name}').current()
            for name in DIAGNOSTICS
            if f'missing_label/{name}' in hub.log_scalars
        }
    summary['minutes'] = (time.time() - start) / 60
    return summary


def failure_reason(err: BaseException) -> str:
    """The one-line reason of a failed run: the error's type and the first
    line of its message."""
    lines = str(err).strip().splitlines()
    return f'{type(err).__name__}: {lines[0]}' if lines else type(err).__name__


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
