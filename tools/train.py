"""Train a classifier with an mmlml (or any MMPretrain) config.

Same command line as MMPretrain's ``tools/train.py``. The one difference is
that ``mmlml`` is imported before the config is parsed, so its compatibility
fixes (``mmpretrain::`` base configs without ``pkg_resources``, checkpoint
loading under torch >= 2.6, CPU-only ``torchrun``) are active for every
config, including stock MMPretrain ones; and every run gets a
``ResumeCheckHook``, so that ``--resume`` from a checkpoint of another
model or method fails with a message instead of a shape error at the first
step, and a ``RandomStateHook``, so that a resumed run draws the random
augmentation of the uninterrupted one; and the settings that disagree
with each other (the head's ``num_classes`` and the dataset's classes, a
batch larger than the training split with ``drop_last``, ``--amp``
without a GPU) are refused before training starts (see
:class:`~mmlml.hooks.TrainingSetupCheckHook`).
``--training-progress`` adds :class:`~mmlml.hooks.TrainingProgressHook`,
which the epoch-dependent losses need to accept a one-epoch smoke run or to
count epochs in an iteration-based loop. One training at a time writes
into a work directory: a second run on a folder in use is refused, in one
line naming the first's pid (``--force-work-dir`` shares it on purpose;
:mod:`mmlml.cli.work_dir_lock`). ``--smoke`` shrinks the config
to a two-epoch offline trial (random weights, full precision, small images
and batches, warm-ups and the learning-rate schedule scaled to the run: see
:func:`mmlml.cli.smoke_config.smoke_config`); ``--cfg-options`` still
override it.
"""
import os.path as osp

import torch
from mmengine.config import Config
from mmengine.runner import Runner

import mmlml  # noqa: F401  (registers modules, applies fixes)
from mmlml.cli import (add_cfg_options_argument, add_launcher_arguments,
                       cap_dataloader_workers, end_distributed, set_local_rank,
                       set_work_dir, tool_parser)
from mmlml.cli.smoke_config import smoke_config
from mmlml.cli.work_dir_lock import (WorkDirInUse, is_first_process,
                                     work_dir_lock)
from mmlml.compat import CheckpointDamaged
from mmlml.compat.build_messages import explained_message
from mmlml.datasets.checks import check_config_annotation_files
from mmlml.hooks import RandomStateHook, ResumeCheckHook, TrainingProgressHook
from mmlml.hooks.default_hooks import disabled_default_hooks
from mmlml.hooks.training_setup_check_hook import check_training_setup

#: The hooks every training gets for its resume (unless the config sets
#: ``default_hooks.<name>=None``): a checkpoint of another model, method
#: or labels fails clearly; the random generators are those of the
#: checkpoint. With what is lost without each.
RESUME_HOOKS = (
    ('resume_check', ResumeCheckHook,
     'a resumed checkpoint is not checked against this run (model, '
     'per-sample state, partial labels)'),
    ('random_state', RandomStateHook,
     'a resumed run draws its random augmentation from fresh generators'),
)


def parse_args(argv=None):
    parser = tool_parser(__doc__)
    parser.add_argument('config', help='train config file path')
    parser.add_argument('--work-dir', help='the dir to save logs and models')
    parser.add_argument(
        '--force-work-dir',
        action='store_true',
        help='train even if another training is running in the work dir '
        '(each replaces the other\'s checkpoints): without it, a work dir '
        'in use is refused')
    parser.add_argument(
        '--resume',
        nargs='?',
        type=str,
        const='auto',
        help='resume from this checkpoint, or from the latest checkpoint '
        'of the work dir when no path is given')
    parser.add_argument(
        '--amp', action='store_true', help='enable automatic mixed precision')
    parser.add_argument(
        '--no-validate',
        action='store_true',
        help='do not evaluate checkpoints during training')
    parser.add_argument(
        '--auto-scale-lr',
        action='store_true',
        help='scale the learning rate by the actual total batch size')
    parser.add_argument(
        '--no-pin-memory',
        action='store_true',
        help='disable pin_memory in the dataloaders')
    parser.add_argument(
        '--no-persistent-workers',
        action='store_true',
        help='disable persistent_workers in the dataloaders')
    parser.add_argument(
        '--training-progress',
        action='store_true',
        help='add TrainingProgressHook (unless the config has one), for '
        'the epoch-dependent losses (SPLC, Large Loss, GR...): they then '
        'accept a one-epoch run, e.g. a smoke test with --cfg-options '
        'train_cfg.max_epochs=1, and count an epoch as one pass over the '
        'training data in an iteration-based loop '
        '(train_cfg.by_epoch=False), both of which they refuse otherwise')
    parser.add_argument(
        '--smoke',
        action='store_true',
        help='a two-epoch offline trial of the config: random weights (no '
        'pretrained checkpoint), OptimWrapper instead of mixed precision, '
        '64 px images, batches of 2, no worker processes, every warm-up '
        'and epoch-based start of the hooks and the loss and the learning-'
        'rate schedule scaled to the two epochs (--cfg-options still '
        'apply after it)')
    add_cfg_options_argument(
        parser, 'override config settings, e.g. '
        'model.head.loss.type=HillLoss train_cfg.max_epochs=5')
    add_launcher_arguments(parser, local_rank=True)
    args = parser.parse_args(argv)
    set_local_rank(args)
    return args


def set_dataloader_defaults(cfg, args):
    """pin_memory / persistent_workers defaults, as MMPretrain sets them
    (pinning only where there is a GPU to pin for)."""
    for name in ('train_dataloader', 'val_dataloader', 'test_dataloader'):
        loader = cfg.get(name)
        if loader is None:
            continue
        if args.no_pin_memory:
            loader['pin_memory'] = False
        loader.setdefault('pin_memory', torch.cuda.is_available())
        if args.no_persistent_workers or not loader.get('num_workers'):
            loader['persistent_workers'] = False
        loader.setdefault('persistent_workers', True)
        loader.setdefault('collate_fn', dict(type='default_collate'))


def merge_args(cfg, args):
    """Apply the command line to the config."""
    if args.no_validate:
        cfg.val_cfg = cfg.val_dataloader = cfg.val_evaluator = None
    cfg.launcher = args.launcher
    set_work_dir(cfg, args.work_dir, args.config)
    if args.smoke:
        if args.amp:
            raise ValueError('--smoke trains in full precision (no GPU '
                             'needed): leave out --amp')
        smoke_config(cfg)
    if args.amp:
        wrapper = cfg.optim_wrapper.get('type', 'OptimWrapper')
        if wrapper not in ('OptimWrapper', 'AmpOptimWrapper'):
            raise ValueError(f'--amp needs an OptimWrapper, got {wrapper}')
        cfg.optim_wrapper.type = 'AmpOptimWrapper'
        cfg.optim_wrapper.setdefault('loss_scale', 'dynamic')
    if args.resume == 'auto':
        cfg.resume, cfg.load_from = True, None
    elif args.resume is not None:
        cfg.resume, cfg.load_from = True, args.resume
    if args.auto_scale_lr:
        cfg.auto_scale_lr = dict(cfg.get('auto_scale_lr') or {}, enable=True)
    if args.cfg_options is not None:
        cfg.merge_from_dict(args.cfg_options)
    for note in cap_dataloader_workers(cfg):
        if is_first_process():  # said once, not once per process
            print(note)
    # After --cfg-options: num_workers=0 there turns persistent workers off.
    set_dataloader_defaults(cfg, args)
    if args.training_progress:
        add_training_progress_hook(cfg)
    check_amp_device(cfg)
    check_compile(cfg)
    check_scores_files(cfg)
    return cfg


def check_compile(cfg):
    """Refuse a ``compile`` setting that MMEngine would assert on, or a
    backend torch does not have, before anything is built."""
    setting = cfg.get('compile', False)
    if isinstance(setting, bool):
        return
    if not isinstance(setting, dict):
        raise ValueError(
            f'compile must be True, False or a dict of torch.compile '
            f"arguments (e.g. compile=dict(backend='inductor')), got "
            f'{setting!r}')
    backend = setting.get('backend', 'inductor')
    if isinstance(backend, str):
        from torch._dynamo import list_backends
        if backend not in list_backends(exclude_tags=()):
            raise ValueError(f'compile.backend {backend!r} is not a backend '
                             'of torch.compile; it has '
                             f'{", ".join(list_backends())}')


def check_scores_files(cfg):
    """Refuse a ``VLPseudoLabelHook`` whose ``scores_file`` (the first
    stage's scores of a two-stage method: VLPL, GPR) does not exist,
    naming how to make it."""
    for hook in cfg.get('custom_hooks') or []:
        if not isinstance(hook, dict) or str(hook.get(
                'type', '')).split('.')[-1] != 'VLPseudoLabelHook':
            continue
        scores = hook.get('scores_file')
        if scores and not osp.isfile(scores):
            raise FileNotFoundError(
                f'{scores}: the first stage\'s scores (the scores_file of '
                'VLPseudoLabelHook) do not exist: train the first stage, '
                'then write them with tools/vl_pseudo_label.py CONFIG --out '
                f'{scores} (tools/benchmark.py runs both stages), or set '
                'custom_hooks.N.scores_file')


def add_training_progress_hook(cfg):
    """Append ``TrainingProgressHook`` to the config's ``custom_hooks``
    (kept as they are) unless one is there (``--training-progress``)."""
    hooks = list(cfg.get('custom_hooks') or [])
    names = ('TrainingProgressHook', 'mmpretrain.TrainingProgressHook',
             TrainingProgressHook)
    if not any(
            isinstance(hook, TrainingProgressHook)
            or isinstance(hook, dict) and hook.get('type') in names
            for hook in hooks):
        hooks.append(dict(type='TrainingProgressHook'))
    cfg.custom_hooks = hooks


def check_amp_device(cfg):
    """Refuse mixed precision where MMEngine's ``AmpOptimWrapper`` cannot
    run (no CUDA, NPU, MLU or MUSA device), before anything is built."""
    wrapper = cfg.get('optim_wrapper') or {}
    if wrapper.get('type') != 'AmpOptimWrapper':
        return
    from mmengine.device import get_device
    if get_device() not in ('cuda', 'npu', 'mlu', 'musa'):
        raise ValueError(
            'mixed precision (--amp, or optim_wrapper.type='
            "'AmpOptimWrapper') needs a CUDA, NPU, MLU or MUSA device and "
            f'this machine has none (device: {get_device()}): train without '
            "--amp, or with optim_wrapper.type='OptimWrapper'")


def main(argv=None):
    args = parse_args(argv)
    cfg = merge_args(Config.fromfile(args.config), args)
    # default_hooks.<name>=None turns a hook off (MMEngine would assert).
    disabled = disabled_default_hooks(cfg)
    check_config_annotation_files(cfg)  # no pickle is loaded
    with work_dir_lock(cfg.work_dir, force=args.force_work_dir):
        return train(cfg, disabled)


def train(cfg, disabled):
    """Build the Runner of ``cfg``, add the resume hooks (but those in
    ``disabled``), check its settings and train."""
    if 'runner_type' in cfg:
        from mmengine.registry import RUNNERS
        runner = RUNNERS.build(cfg)
    else:
        runner = Runner.from_cfg(cfg)
    for name, hook_type, lost in RESUME_HOOKS:
        if name in disabled:
            runner.logger.warning(f'default_hooks.{name}=None: {lost}.')
        elif not any(isinstance(hook, hook_type) for hook in runner.hooks):
            runner.register_hook(hook_type())
    # Settings that disagree fail here, not at the first step (nor at the
    # parameter schedulers of an epoch with no iteration).
    check_training_setup(runner)
    global _TRAINING
    _TRAINING = True
    runner.train()
    end_distributed()
    return runner


#: Whether ``runner.train()`` was reached: the errors before it are the
#: command line's and the config's, said in one line.
_TRAINING = False

if __name__ == '__main__':
    try:
        main()
    except (WorkDirInUse, CheckpointDamaged) as error:
        raise SystemExit(f'[train] {error}') from None
    except (ValueError, TypeError, FileNotFoundError, KeyError) as error:
        # A KeyError only where it names an unknown type (a misspelt loss).
        said = explained_message(error) if isinstance(error,
                                                      KeyError) else str(error)
        if _TRAINING or said is None:
            raise
        raise SystemExit(f'[train] {said}') from None
