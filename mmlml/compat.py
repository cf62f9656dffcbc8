"""Fixes for known breakages of the MMPretrain 1.2 / MMEngine 0.10 stack on
current PyTorch and setuptools, and a guard for stock losses fed mmlml's
training targets, applied when ``mmlml`` is imported.

Each fix is small and idempotent, and only changes behaviour where the stock
code would fail (or, for the guard, silently train wrong):

* :func:`patch_checkpoint_loading`: torch >= 2.6 loads checkpoints with
  ``weights_only=True`` by default, and MMEngine's checkpoints pickle a
  ``HistoryBuffer``, numpy arrays and more, so ``resume``, ``load_from`` and
  ``tools/test.py`` fail with ``Unsupported global``; torch.hub's URL
  loader, which MMEngine uses for ``https://`` and ``torchvision://``
  checkpoints, loads with ``weights_only=False``. Every checkpoint source
  MMEngine knows is loaded with ``weights_only=True`` and the few globals
  MMEngine's own checkpoints hold allow-listed
  (:mod:`mmlml.checkpoint_policy`). A file that pickles anything else is
  refused with ``UnpicklingError``, which names the globals and how to
  allow-list them for a trusted file.
* :func:`patch_package_lookup`: ``_base_ = 'mmpretrain::...'`` configs go
  through ``pkg_resources``, which setuptools 82 removed. Where it is missing,
  MMEngine's package lookup is re-implemented with ``importlib``. Config
  parsing happens before ``custom_imports`` runs, so this fix takes effect
  for launchers that import mmlml first (``tools/train.py`` and
  ``tools/test.py`` of this repository do).
* :func:`patch_cpu_distributed`: MMEngine calls ``torch.cuda.set_device``
  unconditionally in the PyTorch launcher and wraps the model with
  ``device_ids=[LOCAL_RANK]``, so a CPU-only ``torchrun`` fails. Without CUDA,
  the process group uses gloo and DDP gets no ``device_ids``. GPU machines
  are unaffected.
* :func:`guard_stock_loss_targets`: MMPretrain's ``CrossEntropyLoss``,
  ``FocalLoss`` and ``AsymmetricLoss`` expect targets in ``[0, 1]``; fed the
  ``-1`` (observed negative) of mmlml's training encoding, their loss goes
  below zero (without bound for the first two) and the run trains silently
  wrong. They raise ``ValueError`` instead, naming the mmlml loss to use.
* :func:`patch_average_precision`: MMPretrain's ``AveragePrecision`` drops
  the ``-1`` (ignored) entries of a class before ranking, and crashes with
  ``IndexError`` when none is left: a class without any known label in the
  evaluation set, which partially labelled test sets (OpenImages' verified
  labels) can have. Such a class gets AP 0, as MMPretrain already gives a
  class without a positive; every other AP is unchanged.
* :func:`patch_one_cycle_scaling`: with ``auto_scale_lr`` enabled, MMEngine
  scales the optimizer's learning rate by ``world_size x batch_size /
  base_batch_size``, but a ``OneCycleLR`` schedule sets the learning rate
  from its own ``eta_max``, so multi-GPU runs silently kept the one-GPU
  peak. ``eta_max`` is scaled by the same factor.

:func:`applied_fixes` tells which fixes this process applied, and every
Runner built after :func:`apply_all` logs them into its log file.
"""
import functools
import importlib
import importlib.metadata
import importlib.util
import os.path as osp
from typing import Dict, Tuple

import torch

# The checkpoint loading policy lives in its own module; its public names
# stay importable from here.
from .checkpoint_policy import CheckpointRefused  # noqa: F401
from .checkpoint_policy import checkpoint_globals  # noqa: F401
from .checkpoint_policy import checkpoint_safe_global_names  # noqa: F401
from .checkpoint_policy import checkpoint_safe_globals  # noqa: F401
from .checkpoint_policy import _safe_globals
from .checkpoint_policy import install as _install_checkpoint_policy

#: The fixes applied in this process, in order: name -> log description.
_APPLIED: Dict[str, str] = {}

# ----------------------------------------------------- checkpoint loading


def patch_checkpoint_loading() -> None:
    """Load checkpoints from every source MMEngine knows with
    ``weights_only=True`` and the allow-list of
    :mod:`mmlml.checkpoint_policy`."""
    if 'checkpoint_loading' in _APPLIED:
        return
    if not _install_checkpoint_policy():
        return  # torch < 2.5: its stock loading is left as it is
    _APPLIED['checkpoint_loading'] = (
        f'safe checkpoint loading ({len(_safe_globals())} globals '
        'allow-listed)')


# --------------------------------------------------------- package lookup


def _module_of(package: str) -> str:
    """The top-level module a distribution installs (``mmcv-lite`` ->
    ``mmcv``), or ``package`` itself."""
    try:
        top_level = importlib.metadata.distribution(package).read_text(
            'top_level.txt')
    except importlib.metadata.PackageNotFoundError:
        top_level = None
    if top_level and top_level.split():
        return top_level.split()[0]
    return package.replace('-', '_')


def is_installed(package: str) -> bool:
    """Whether ``package`` (a distribution or module name) is importable."""
    return importlib.util.find_spec(_module_of(package)) is not None


def get_installed_path(package: str) -> str:
    """The directory of the installed ``package``."""
    spec = importlib.util.find_spec(_module_of(package))
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError(f'package {package!r} is not installed')
    return osp.dirname(spec.origin)


def patch_package_lookup(force: bool = False) -> None:
    """Give MMEngine an ``importlib``-based package lookup when
    ``pkg_resources`` is missing (setuptools >= 82), or always with
    ``force=True``."""
    if 'package_lookup' in _APPLIED:
        return
    if not force and importlib.util.find_spec('pkg_resources') is not None:
        return
    import mmengine.config.config as config_module
    import mmengine.hub.hub as hub_module
    import mmengine.utils as utils_module
    import mmengine.utils.package_utils as package_utils
    for module in (package_utils, utils_module, config_module, hub_module):
        if hasattr(module, 'is_installed'):
            module.is_installed = is_installed
        if hasattr(module, 'get_installed_path'):
            module.get_installed_path = get_installed_path
    _APPLIED['package_lookup'] = 'importlib package lookup'


# -------------------------------------------------------- CPU distributed


def patch_cpu_distributed() -> None:
    """Let ``torchrun`` + the ``pytorch`` launcher work without CUDA."""
    if 'cpu_distributed' in _APPLIED:
        return
    import mmengine.dist.utils as dist_utils
    from mmengine.model.wrappers.distributed import MMDistributedDataParallel
    from torch import distributed as torch_dist

    init_dist_pytorch = dist_utils._init_dist_pytorch

    def _init_dist_pytorch(backend, init_backend='torch', **kwargs):
        if torch.cuda.is_available() or init_backend != 'torch':
            return init_dist_pytorch(backend, init_backend, **kwargs)
        if backend == 'nccl':
            backend = 'gloo'
        torch_dist.init_process_group(backend=backend, **kwargs)

    ddp_init = MMDistributedDataParallel.__init__

    def __init__(self, module, *args, **kwargs):
        on_cpu = all(not p.is_cuda for p in module.parameters())
        if on_cpu and not torch.cuda.is_available():
            kwargs.pop('device_ids', None)
            kwargs.pop('output_device', None)
        ddp_init(self, module, *args, **kwargs)

    dist_utils._init_dist_pytorch = _init_dist_pytorch
    MMDistributedDataParallel.__init__ = __init__
    _APPLIED['cpu_distributed'] = 'CPU torchrun'


# ------------------------------------------------- stock loss target guard

#: MMPretrain's losses that take sigmoid multi-label targets: name ->
#: (the mmlml loss that computes the same with -1 read as a negative, what
#: it computes).
GUARDED_LOSSES = {
    'CrossEntropyLoss': ('ANLoss', 'binary cross-entropy'),
    'FocalLoss': ('PartialFocalLoss', 'sigmoid focal loss'),
    'AsymmetricLoss': ('PartialAsymmetricLoss', 'asymmetric loss'),
}


def check_stock_loss_target(loss_name: str, target) -> None:
    """Raise ``ValueError`` if a floating-point ``target`` of MMPretrain's
    ``loss_name`` has a negative entry.

    MMPretrain's losses expect targets in ``[0, 1]`` (one-hot labels, or
    soft scores from Mixup / CutMix / label smoothing); MMPretrain puts
    ``-1`` only in evaluation targets (ignored entries), never in a
    training target. A negative target is mmlml's observed negative (-1),
    on which these losses go below zero (``CrossEntropyLoss`` and
    ``FocalLoss`` without bound, as the logit goes to minus infinity).
    Integer targets (class indices) are left to the loss.
    """
    if not (isinstance(target, torch.Tensor) and target.is_floating_point()):
        return
    negative = target < 0
    if not bool(negative.any()):
        return
    values = torch.unique(target[negative].detach())[:5].tolist()
    replacement, kind = GUARDED_LOSSES.get(loss_name,
                                           ('ANLoss', 'binary cross-entropy'))
    raise ValueError(
        f"MMPretrain's {loss_name} got a target with negative entries "
        f"{values}: these are mmlml's observed negatives (-1), e.g. from "
        "PartialLabelDataset(mode='full'), mode='annotated' on a dataset "
        "with observed negatives, or a mode='file' label file with -1 "
        f'entries. {loss_name} expects targets in [0, 1] (0/1 labels or soft '
        'scores); on -1 its value goes below zero (without bound for '
        'CrossEntropyLoss and FocalLoss) and the model trains silently '
        'wrong. Use an mmlml loss, which reads the training '
        'encoding (1 observed positive, 0 unknown, -1 observed negative): '
        f"model.head.loss=dict(type='{replacement}') is the same {kind} "
        'with -1 read as a negative (unknown labels count as negatives, as '
        'in the stock loss); mmlml.models.losses.LOSS_CATALOG lists the '
        'other mmlml losses.')


def guard_stock_loss_targets() -> None:
    """Make MMPretrain's sigmoid multi-label losses (:data:`GUARDED_LOSSES`)
    refuse targets with negative entries (:func:`check_stock_loss_target`).

    One comparison and ``.any()`` per call on floating-point targets; the
    result of valid calls is unchanged.
    """
    if 'loss_target_guard' in _APPLIED:
        return
    import mmpretrain.models.losses as stock_losses
    for name in GUARDED_LOSSES:
        cls = getattr(stock_losses, name, None)
        if cls is None or getattr(cls.forward, '_mmlml_guarded', False):
            continue
        cls.forward = _guarded_forward(cls.forward, name)
    _APPLIED['loss_target_guard'] = ('target guard on ' +
                                     ', '.join(GUARDED_LOSSES))


def _guarded_forward(forward, name: str):

    @functools.wraps(forward)
    def guarded(self, cls_score, target, *args, **kwargs):
        check_stock_loss_target(name, target)
        return forward(self, cls_score, target, *args, **kwargs)

    guarded._mmlml_guarded = True
    return guarded


# ------------------------------------------------------ average precision


def patch_average_precision() -> None:
    """Give AP 0 to a class whose evaluation targets are all ``-1``
    (ignored) instead of raising ``IndexError``, in MMPretrain's
    ``AveragePrecision`` (and everything that calls its per-class
    ``_average_precision``)."""
    if 'average_precision' in _APPLIED:
        return
    from mmpretrain.evaluation.metrics import multi_label
    class_ap = multi_label._average_precision

    @functools.wraps(class_ap)
    def average_precision(pred, target):
        if not bool((target > -1).any()):
            return pred.new_zeros(())
        return class_ap(pred, target)

    multi_label._average_precision = average_precision
    _APPLIED['average_precision'] = ('AP 0 for classes without a known '
                                     'evaluation label')


# ------------------------------------------------------- one-cycle peaks


def patch_one_cycle_scaling() -> None:
    """Make ``Runner.scale_lr`` (``auto_scale_lr``) also scale the
    ``eta_max`` of the one-cycle schedulers, which are still configs when
    it runs, by the factor it applies to the optimizer's learning rate."""
    if 'one_cycle_scaling' in _APPLIED:
        return
    from mmengine.runner import Runner
    scale_lr = Runner.scale_lr

    @functools.wraps(scale_lr)
    def scale_lr_and_peaks(self, optim_wrapper, auto_scale_lr=None):
        scale_lr(self, optim_wrapper, auto_scale_lr)
        if not (auto_scale_lr or {}).get('enable', False):
            return
        schedulers = self.param_schedulers
        if isinstance(schedulers, dict):
            schedulers = [schedulers]
        # MMEngine's factor, from the dataloader or its config.
        loader = self._train_dataloader
        batch_size = (
            loader['batch_size']
            if isinstance(loader, dict) else loader.batch_size)
        ratio = (
            self.world_size * batch_size / auto_scale_lr['base_batch_size'])
        for scheduler in schedulers or ():
            if isinstance(scheduler, dict) and 'eta_max' in scheduler:
                peak = scheduler['eta_max']
                scheduler['eta_max'] = ([p * ratio
                                         for p in peak] if isinstance(
                                             peak,
                                             (list, tuple)) else peak * ratio)
                self.logger.info(f'{scheduler["type"]}: eta_max scaled by '
                                 f'{ratio} to {scheduler["eta_max"]}.')

    Runner.scale_lr = scale_lr_and_peaks
    _APPLIED['one_cycle_scaling'] = 'auto_scale_lr scales OneCycleLR eta_max'


# ---------------------------------------------------------------- logging


def applied_fixes() -> Tuple[str, ...]:
    """The names of the fixes applied in this process, in order:
    ``'checkpoint_loading'``, ``'package_lookup'`` (only where
    ``pkg_resources`` is missing), ``'cpu_distributed'``,
    ``'loss_target_guard'``, ``'average_precision'``,
    ``'one_cycle_scaling'``."""
    return tuple(_APPLIED)


def applied_fixes_message() -> str:
    """The log line that lists the applied fixes."""
    if not _APPLIED:
        return 'mmlml compatibility fixes applied: none'
    return ('mmlml compatibility fixes applied: ' +
            ', '.join(_APPLIED.values()))


def _log_in_runners() -> None:
    """Log :func:`applied_fixes_message` into the logger of every Runner
    built from now on (its log file), when the Runner creates it: the
    fixes are applied at import, before any Runner logger exists."""
    from mmengine.runner import Runner
    if getattr(Runner.build_logger, '_mmlml_logs_fixes', False):
        return
    build_logger = Runner.build_logger

    @functools.wraps(build_logger)
    def build_logger_and_log_fixes(self, *args, **kwargs):
        logger = build_logger(self, *args, **kwargs)
        logger.info(applied_fixes_message())
        return logger

    build_logger_and_log_fixes._mmlml_logs_fixes = True
    Runner.build_logger = build_logger_and_log_fixes


def apply_all() -> None:
    """Apply every fix (idempotent); every Runner built afterwards logs
    which were applied."""
    patch_checkpoint_loading()
    patch_package_lookup()
    patch_cpu_distributed()
    guard_stock_loss_targets()
    patch_average_precision()
    patch_one_cycle_scaling()
    _log_in_runners()
