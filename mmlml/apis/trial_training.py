"""One training of a config as a benchmark trial: train it with a fresh
``Runner`` (validating every epoch), reload the checkpoint with the best
validation mAP, test it on the fully labelled test split, return the
summary (:func:`~mmlml.benchmark.training.trial_record.summarise` and
the trial's record fields).

``tools/demo.py`` is the command line over :func:`train_trial` for a few
configs and seeds; a benchmark worker calls it in its own process (warm
trials, :mod:`mmlml.benchmark.sweep.process_globals`) or runs this module's
entry in a subprocess::

    python -m mmlml.apis.trial_training CONFIG --seed 0 \\
        --work-dir W --out W/an/seed0/demo.json --domain synthetic_shapes \\
        --cfg-options train_cfg.max_epochs=2

The demo domain is an argument (``domain``: a file of
``configs/_base_/domains/``): the configs choose it by the variable
``MMLML_DEMO_DOMAIN`` in their ``_base_``, which only their parse sees
(:func:`~.domain_config.load_config`), so that no run leaves it behind for the
next.
"""
import argparse
import json
import math
import os.path as osp
import re
import time
from typing import Optional

from mmengine.hooks import Hook, LoggerHook
from mmengine.runner import EpochBasedTrainLoop, Runner

from mmlml.apis.domain_config import load_config
from mmlml.benchmark.training.trial_record import (BEST_CHECKPOINT, BEST_EPOCH,
                                                   EPOCHS, MINUTES, VAL_MAP,
                                                   summarise)
from mmlml.datasets.checks import check_config_annotation_files

__all__ = [
    'LogIntervalHook', 'train_trial', 'missing_label_file', 'failure_reason',
    'main'
]

#: Which diagnostics of ``MissingLabelDiagnosticsHook`` a summary reports.
DIAGNOSTICS = ('score_pos', 'score_neg', 'recall', 'precision', 'auc')


def missing_label_file(config: str,
                       cfg_options: Optional[dict] = None,
                       domain: Optional[str] = None) -> Optional[str]:
    """The ``label_file`` that the training set of ``config`` reads and that
    does not exist yet (the second stage of a two-stage config, e.g.
    configs/demo/pseudo_label.py, before its first stage ran), else None."""
    cfg = load_config(config, cfg_options, domain)
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


def train_trial(config: str,
                work_root: str,
                seed: Optional[int] = None,
                cfg_options: Optional[dict] = None,
                diagnostics: bool = False,
                extra_hooks=(),
                launcher: str = 'none',
                domain: Optional[str] = None) -> dict:
    """Train one config (with the given training seed, else the config's)
    in ``work_root/<config name>[/seed<seed>]``, test its best checkpoint,
    return the summary.

    With ``diagnostics``, a ``MissingLabelDiagnosticsHook`` also reports
    how the last training epoch scored the labels missing from the
    annotations. ``extra_hooks`` are added to the config's
    ``custom_hooks`` (the benchmark sweep's pruning hook); ``launcher`` is
    MMEngine's (``'pytorch'`` under torchrun); ``domain`` the demo
    configs' domain (:func:`~.domain_config.load_config`)."""
    cfg = load_config(config, cfg_options, domain)
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
    summary[BEST_CHECKPOINT] = best or 'last epoch'
    # The validation mAP that selected it, its epoch and the number of
    # epochs (for tuning on validation only: a best epoch that is the last
    # asks for a longer schedule).
    summary[VAL_MAP] = runner.message_hub.get_info('best_score')
    found = re.search(r'epoch_(\d+)\.pth$', best or '')
    summary[BEST_EPOCH] = int(found.group(1)) if found else runner.epoch
    summary[EPOCHS] = runner.max_epochs
    if diagnostics:
        hub = runner.message_hub
        summary['missing labels'] = {
            key: hub.get_scalar(f'missing_label/{key}').current()
            for key in DIAGNOSTICS if f'missing_label/{key}' in hub.log_scalars
        }
    summary[MINUTES] = (time.time() - start) / 60
    return summary


def failure_reason(err: BaseException) -> str:
    """The one-line reason of a failed run: the error's type and the first
    line of its message."""
    lines = str(err).strip().splitlines()
    return f'{type(err).__name__}: {lines[0]}' if lines else type(err).__name__


def main(argv=None) -> dict:
    """The entry of one trial in its own process: train, test, and write
    ``{config name: {'runs': [summary]}}`` to ``--out`` (the format of
    ``tools/demo.py --out``)."""
    from mmengine.dist import is_main_process

    import mmlml  # noqa: F401  (registration)
    from mmlml.cli import (add_cfg_options_argument, add_launcher_arguments,
                           tool_parser)
    parser: argparse.ArgumentParser = tool_parser(__doc__)
    parser.add_argument('config', help='config file')
    parser.add_argument('--seed', type=int, help='the training seed')
    parser.add_argument(
        '--work-dir',
        required=True,
        help='the run trains in WORK_DIR/<config name>/seed<seed>')
    parser.add_argument('--out', required=True, help='the summary as JSON')
    parser.add_argument(
        '--domain',
        help='the demo configs\' domain (a file of '
        'configs/_base_/domains/; default: $MMLML_DEMO_DOMAIN, else '
        'synthetic_shapes)')
    parser.add_argument(
        '--extra-hook',
        action='append',
        type=json.loads,
        default=[],
        help='a hook config as JSON, added to the config\'s custom_hooks')
    add_cfg_options_argument(parser, 'override settings of the config')
    add_launcher_arguments(parser, 'job launcher (pytorch: under torchrun)')
    args = parser.parse_args(argv)
    summary = train_trial(
        args.config,
        args.work_dir,
        args.seed,
        args.cfg_options,
        extra_hooks=args.extra_hook,
        launcher=args.launcher,
        domain=args.domain)
    name = osp.splitext(osp.basename(args.config))[0]
    if is_main_process():
        with open(args.out, 'w') as f:
            json.dump({name: {'runs': [summary]}}, f, indent=2)
    return summary


if __name__ == '__main__':
    main()
