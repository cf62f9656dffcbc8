"""Evaluate a checkpoint on a config's test set.

Same command line as MMPretrain's ``tools/test.py`` (without visualisation).
``mmlml`` is imported first, so checkpoints load under torch >= 2.6 and
``mmpretrain::`` base configs parse without ``pkg_resources``. With an EMA
hook that evaluates both models, ``--out`` holds the regular model's
metrics too (``<metric>_origin``, as the log prints them).

Thresholds: when the checkpoint ``X.pth`` has per-class thresholds beside
it (``X.thresholds.json``, written by ``tools/choose_thresholds.py``; or
the file of ``--thresholds``), the report adds CP, CR, CF1, OP, OR and OF1
at 0.5 (``thresholds/CF1``...), at the file's global threshold
(``thresholds/CF1_thr-0.07``...) and at its per-class thresholds
(``thresholds/CF1_thr-class``...), and prints CF1 and OF1 at the three.
``--thr T`` overrides the file: the same metrics at ``T`` only.
"""
import json
import os.path as osp
import re
import sys
from typing import Optional

from mmengine.config import Config, ConfigDict
from mmengine.hooks import Hook
from mmengine.model import is_model_wrapper
from mmengine.runner import Runner

import mmlml  # noqa: F401  (registers modules, applies fixes)
from mmlml.cli import (add_cfg_options_argument, add_checkpoint_argument,
                       add_force_argument, add_launcher_arguments,
                       cap_dataloader_workers, check_output, end_distributed,
                       set_local_rank, set_work_dir, tool_parser)
from mmlml.compat.checkpoint_policy import check_checkpoint_exists
from mmlml.datasets.checks import check_config_annotation_files
from mmlml.evaluation.class_thresholds import (ClassThresholds, check_classes,
                                               read_thresholds,
                                               thresholds_path)
from mmlml.evaluation.multi_label_f1 import (THRESHOLD_REPORT_PREFIX,
                                             f1_thresholds)


def parse_args(argv=None):
    parser = tool_parser(__doc__)
    parser.add_argument('config', help='test config file path')
    add_checkpoint_argument(parser, 'the checkpoint to test')
    parser.add_argument('--work-dir', help='the dir to save logs and results')
    parser.add_argument(
        '--out',
        help='write the metrics (.json) or the predictions (.pkl, with '
        '--out-item pred) to this file')
    parser.add_argument(
        '--out-item',
        choices=['metrics', 'pred'],
        default='metrics',
        help='what --out holds')
    parser.add_argument(
        '--amp', action='store_true', help='test with mixed precision')
    parser.add_argument(
        '--thresholds',
        help='the per-class thresholds file (default: the checkpoint\'s '
        'X.thresholds.json when there is one)')
    parser.add_argument(
        '--thr',
        type=float,
        help='report CF1/OF1 at this one threshold in (0, 1) instead of '
        'the thresholds file\'s')
    add_cfg_options_argument(parser)
    add_launcher_arguments(parser, local_rank=True)
    add_force_argument(parser)
    args = parser.parse_args(argv)
    # The mistakes of the command line, before anything is built (the
    # command line prints them in one line).
    check_output(args.out, (args.config, args.checkpoint), args.force)
    if args.out and args.out_item == 'metrics' and \
            not args.out.endswith('.json'):
        raise ValueError('--out with --out-item metrics must be a .json file')
    check_checkpoint_exists(args.checkpoint)
    if args.thr is not None and not 0 < args.thr < 1:
        raise ValueError(f'--thr must lie in (0, 1), got {args.thr}')
    if args.thr is not None and args.thresholds is not None:
        raise ValueError('--thr overrides --thresholds: give one of them')
    if args.thresholds is not None and not osp.isfile(args.thresholds):
        raise FileNotFoundError(
            f'--thresholds: no such file: {args.thresholds}')
    set_local_rank(args)
    return args


def find_thresholds(args) -> Optional[ClassThresholds]:
    """The per-class thresholds to report metrics at: the file of
    ``--thresholds``, else the checkpoint's ``X.thresholds.json`` when it
    exists; None with ``--thr`` or without a file."""
    if args.thr is not None:
        return None
    path = args.thresholds or thresholds_path(args.checkpoint)
    return read_thresholds(path) if osp.isfile(path) else None


def threshold_evaluators(args, thresholds: Optional[ClassThresholds]):
    """The ``MultiLabelF1Metric`` configs of the threshold report: at
    ``--thr``, or at 0.5, the global and the per-class thresholds of
    ``thresholds``; none without either."""
    metric = dict(type='MultiLabelF1Metric', prefix=THRESHOLD_REPORT_PREFIX)
    if args.thr is not None:
        return [dict(metric, thr=args.thr)]
    if thresholds is None:
        return []
    fixed = [0.5]
    if thresholds.global_threshold != 0.5:  # else the same keys twice
        fixed.append(thresholds.global_threshold)
    return [dict(metric, thr=thr) for thr in fixed] + \
        [dict(metric, class_thr=list(thresholds.thresholds))]


def format_threshold_report(metrics: dict,
                            thresholds: Optional[ClassThresholds]) -> str:
    """CF1 and OF1 at the thresholds of the report, one line each."""
    lines = []
    for suffix, threshold in f1_thresholds(metrics, THRESHOLD_REPORT_PREFIX):
        if suffix == '_thr-class':
            label = 'per-class thresholds'
        elif thresholds is not None and suffix:
            label = f'global threshold {thresholds.global_threshold:.4f}'
        else:
            label = f'threshold {threshold}'
        cf1 = metrics[f'{THRESHOLD_REPORT_PREFIX}/CF1{suffix}']
        of1 = metrics.get(f'{THRESHOLD_REPORT_PREFIX}/OF1{suffix}')
        lines.append(f'  {label}: CF1 {float(cf1):.2f}, OF1 '
                     f'{float(of1):.2f}')
    return '\n'.join(['CF1/OF1 on the test set at'] + lines) if lines \
        else ''


def merge_args(cfg, args, thresholds: Optional[ClassThresholds] = None):
    cfg.launcher = args.launcher
    set_work_dir(cfg, args.work_dir, args.config)
    cfg.load_from = args.checkpoint
    if args.amp:
        cfg.test_cfg = dict(cfg.get('test_cfg') or {}, fp16=True)
    extra = threshold_evaluators(args, thresholds)
    if extra:
        evaluators = cfg.test_evaluator
        if isinstance(evaluators, (dict, ConfigDict)):
            evaluators = [evaluators]
        cfg.test_evaluator = list(evaluators) + extra
    if args.out and args.out_item == 'pred':
        evaluators = cfg.test_evaluator
        if isinstance(evaluators, (dict, ConfigDict)):
            evaluators = [evaluators]
        cfg.test_evaluator = list(evaluators) + [
            dict(type='DumpResults', out_file_path=args.out)
        ]
    if args.cfg_options is not None:
        cfg.merge_from_dict(args.cfg_options)
    for note in cap_dataloader_workers(cfg):
        print(note)
    loader = cfg.test_dataloader
    if not loader.get('num_workers'):
        loader['persistent_workers'] = False
    return cfg


class CheckpointFitHook(Hook):
    """Refuse to evaluate a checkpoint whose weights do not all fit the
    model: MMEngine loads ``load_from`` with ``strict=False``, so a missing
    or renamed head would be scored with its random initial values (the
    check of ``tools/infer.py``, which loads with ``strict=True``). Runs on
    every rank, before any weight is copied."""

    priority = 'VERY_HIGH'

    def __init__(self, checkpoint: str):
        self.checkpoint = checkpoint

    def after_load_checkpoint(self, runner, checkpoint: dict) -> None:
        state = checkpoint.get('state_dict', checkpoint)
        if not isinstance(state, dict):
            raise ValueError(f'The checkpoint {self.checkpoint} holds no '
                             'state_dict.')
        state = {re.sub(r'^module\.', '', k): v for k, v in state.items()}
        model = runner.model.module if is_model_wrapper(
            runner.model) else runner.model
        own = model.state_dict()
        missing = [key for key in own if key not in state]
        unexpected = [key for key in state if key not in own]
        shapes = [
            f'{key} {tuple(state[key].shape)} (model: '
            f'{tuple(value.shape)})' for key, value in own.items()
            if key in state and hasattr(state[key], 'shape')
            and tuple(state[key].shape) != tuple(value.shape)
        ]
        problems = []
        if missing:
            problems.append(f'missing keys (the model would keep their '
                            f'random initial values): {", ".join(missing)}')
        if shapes:
            problems.append('keys of another shape: ' + '; '.join(shapes))
        if unexpected:
            problems.append('keys the model does not have: ' +
                            ', '.join(unexpected))
        if problems:
            raise ValueError(
                f'The checkpoint {self.checkpoint} does not fit the model of '
                'the config, so tools/test.py would score a partly random '
                'model. ' + '. '.join(problems) + '. Test a checkpoint '
                'trained with this config (a renamed head: rename its keys '
                'in the checkpoint).')


def with_origin_metrics(runner, metrics: dict) -> dict:
    """``metrics`` and the ``*_origin`` ones that the log prints beside
    them.

    With MMPretrain's ``EMAHook(evaluate_on_ema=True,
    evaluate_on_origin=True)`` (the Hill/SPLC recipe), ``Runner.test``
    returns the EMA model's metrics only; the hook evaluates the regular
    model again and publishes its metrics in the ``MessageHub`` as
    ``test/<metric>_origin``, where the log finds them. Returns a new dict
    with both (the EMA model's keep their names).
    """
    merged = dict(metrics)
    for key, history in runner.message_hub.log_scalars.items():
        if key.startswith('test/') and key.endswith('_origin'):
            merged.setdefault(key[len('test/'):], history.current())
    return merged


def main(argv=None):
    return evaluate(parse_args(argv))


def evaluate(args) -> dict:
    """Evaluate ``args.checkpoint`` as the command line ``args`` says and
    return the metrics."""
    thresholds = find_thresholds(args)
    cfg = merge_args(Config.fromfile(args.config), args, thresholds)
    check_config_annotation_files(cfg)  # no pickle is loaded
    if 'runner_type' in cfg:
        from mmengine.registry import RUNNERS
        runner = RUNNERS.build(cfg)
    else:
        runner = Runner.from_cfg(cfg)
    runner.register_hook(CheckpointFitHook(args.checkpoint))
    if thresholds is not None:
        check_classes(thresholds,
                      list(runner.test_dataloader.dataset.metainfo['classes']),
                      args.thresholds or thresholds_path(args.checkpoint))
    metrics = with_origin_metrics(runner, runner.test())
    report = format_threshold_report(metrics, thresholds)
    if report and runner.rank == 0:
        print(report)
    if args.out and args.out_item == 'metrics' and runner.rank == 0:
        with open(args.out, 'w') as f:
            json.dump({k: float(v) for k, v in metrics.items()}, f, indent=2)
    end_distributed()
    return metrics


if __name__ == '__main__':
    try:
        command_line = parse_args()
    except (FileExistsError, FileNotFoundError, ValueError) as error:
        # --out exists (--force replaces it) or is an input, a missing
        # checkpoint: one line, no traceback.
        sys.exit(f'{osp.basename(__file__)}: error: {error}')
    evaluate(command_line)
