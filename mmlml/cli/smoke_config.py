"""A config shrunk to a short offline trial (``tools/train.py --smoke``).

A smoke run checks that a config builds and trains end to end, on a CPU and
without a download, before the real run: random weights (no pretrained
checkpoint), full precision (``OptimWrapper``: ``AmpOptimWrapper`` needs a
GPU), small images and batches, no worker processes, and a few epochs.
A method whose hooks or loss start something at an epoch (APL's,
CRISP's and OPML-SP's warm-up, SPLC's ``change_epoch``, GR's
``linear_init``...) would refuse such a run or never act in it, and a
learning-rate schedule laid out over the paper's epochs would stay in its
first phase: :func:`smoke_config` scales both to the run.

The epoch-valued settings are found by name (:data:`EPOCH_START_ARGS`,
:data:`EPOCH_COUNT_ARGS`) in every hook and every model component, whether
the config sets them or the class default applies (read from the
registered class's signature), so a hook is addressed by its ``type``,
never by its place in ``custom_hooks``.

The shrunk dataloaders (no worker processes, small batches and images)
would hide what the full run's own refuse, e.g. ``persistent_workers=True``
with ``num_workers=0``: :func:`check_dataloaders` builds and reads the
real ones first, so that what the full run refuses, a smoke run refuses.
"""
import copy
import inspect
import math
import numbers
from typing import Any, Dict, List, Optional, Sequence

from mmengine.config import Config

from mmlml.registry import HOOKS, MODELS
from mmlml.utils.signatures import constructor_parameters

__all__ = [
    'EPOCH_START_ARGS', 'EPOCH_COUNT_ARGS', 'SIZE_ARGS', 'smoke_config',
    'scale_epoch_start', 'scale_epoch_settings', 'epoch_starts',
    'used_dataloaders', 'check_dataloaders'
]

#: Arguments that say at which epoch something starts (a warm-up's length,
#: the first epoch with a correction, the epochs a schedule waits).
EPOCH_START_ARGS = ('warmup_epochs', 'warmup_epoch', 'change_epoch',
                    'linear_init')
#: Arguments that give a component's own number of epochs (GR's and GPR's
#: schedule length ``T``): set to the run's.
EPOCH_COUNT_ARGS = ('max_epochs', )
#: Image-size arguments of the data transforms, by transform type.
SIZE_ARGS = {
    'Resize': 'scale',
    'RandomResizedCrop': 'scale',
    'ResizeEdge': 'scale',
    'CenterCrop': 'crop_size',
    'RandomCrop': 'crop_size',
}
#: Parameter-scheduler arguments counted in epochs (``by_epoch=True``).
SCHEDULER_EPOCH_ARGS = ('begin', 'end', 'T_max', 'total_steps', 'step_size')
DATALOADERS = ('train_dataloader', 'val_dataloader', 'test_dataloader')


def scale_epoch_start(value: int, factor: float, epochs: int) -> int:
    """An epoch-start setting scaled to a run of ``epochs`` epochs: 0 stays
    0 (no warm-up), any other value becomes at least 1 and at most
    ``epochs - 1``, so that what it starts happens within the run."""
    if not value:
        return 0
    return int(min(max(1, round(value * factor)), max(epochs - 1, 1)))


def _type_name(cfg: dict) -> Optional[str]:
    kind = cfg.get('type')
    if isinstance(kind, type):
        return kind.__name__
    return kind.split('.')[-1] if isinstance(kind, str) else None


def _defaults(cfg: dict, registry) -> Dict[str, Any]:
    """The constructor defaults of the registered class of ``cfg``, its
    mmlml parents' included (empty for a type that is not registered or has
    no readable signature)."""
    name = _type_name(cfg)
    cls = registry.get(name) if name else None
    if cls is None:
        return {}
    try:
        params = constructor_parameters(cls)
    except (TypeError, ValueError):
        return {}
    return {
        key: param.default
        for key, param in params.items()
        if param.default is not inspect.Parameter.empty
    }


def _scale_component(cfg: dict, registry, factor: float, epochs: int) -> None:
    """Scale the epoch settings of one component config (set or default)."""
    defaults = _defaults(cfg, registry)
    for key in EPOCH_START_ARGS:
        value = cfg.get(key, defaults.get(key))
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            scaled = scale_epoch_start(int(value), factor, epochs)
            if key in cfg or scaled != value:
                cfg[key] = scaled
    for key in EPOCH_COUNT_ARGS:
        if isinstance(cfg.get(key), numbers.Integral):
            cfg[key] = epochs


def _walk(node, visit) -> None:
    """Call ``visit`` on every dict with a ``type`` under ``node``."""
    if isinstance(node, dict):
        if 'type' in node:
            visit(node)
        for value in node.values():
            _walk(value, visit)
    elif isinstance(node, (list, tuple)):
        for value in node:
            _walk(value, visit)


def scale_epoch_settings(node, registry, factor: float, epochs: int) -> None:
    """Scale, in place, the epoch settings of every component under
    ``node`` (a config dict or list; each dict with a ``type`` of
    ``registry``) to a run of ``epochs`` epochs: the epoch-start settings
    (:data:`EPOCH_START_ARGS`, given or the class default) times
    ``factor`` within the run (:func:`scale_epoch_start`), a component's
    own :data:`EPOCH_COUNT_ARGS` set to ``epochs``. ``tools/train.py
    --smoke`` scales a config to its short run with it, and
    ``tools/select_method.py`` a method preset to the user's epochs."""
    _walk(node, lambda item: _scale_component(item, registry, factor, epochs))


def epoch_starts(node, registry) -> List[int]:
    """The epoch-start settings (:data:`EPOCH_START_ARGS`, given or the
    class default) of every component under ``node`` (a config dict or
    list; each dict with a ``type`` of ``registry``): the epochs at which
    the method's hooks and losses start what they do."""
    found: List[int] = []

    def visit(item: dict) -> None:
        defaults = _defaults(item, registry)
        for key in EPOCH_START_ARGS:
            value = item.get(key, defaults.get(key))
            if isinstance(value, numbers.Integral) and \
                    not isinstance(value, bool):
                found.append(int(value))

    _walk(node, visit)
    return found


def _drop_pretrained(cfg: Config) -> None:
    """Random initialisation: no backbone ``init_cfg``, no
    ``Pretrained`` initialisation anywhere in the model, no
    ``load_from``."""

    def visit(node):
        init = node.get('init_cfg')
        inits = init if isinstance(init, (list, tuple)) else [init]
        if any(
                isinstance(i, dict) and _type_name(i) == 'Pretrained'
                for i in inits):
            node['init_cfg'] = None

    model = cfg.get('model')
    if isinstance(model, dict):
        if isinstance(model.get('backbone'), dict):
            model['backbone']['init_cfg'] = None
        _walk(model, visit)
    cfg.load_from = None


def _full_precision(cfg: Config) -> None:
    wrapper = cfg.get('optim_wrapper')
    if isinstance(wrapper, dict) and wrapper.get('type') == 'AmpOptimWrapper':
        wrapper['type'] = 'OptimWrapper'
        for key in ('loss_scale', 'dtype', 'use_fsdp'):
            wrapper.pop(key, None)


def _shrink_images(cfg: Config, image_size: int) -> None:

    def visit(node):
        key = SIZE_ARGS.get(_type_name(node) or '')
        value = node.get(key) if key else None
        if isinstance(value, (list, tuple)):
            node[key] = (image_size, image_size)
        elif isinstance(value, numbers.Number):
            node[key] = image_size
        shape = node.get('shape') if _type_name(node) == 'Cutout' else None
        if isinstance(shape, numbers.Real):
            node['shape'] = min(shape, max(1, image_size // 2))
        elif isinstance(shape, (list, tuple)):
            node['shape'] = tuple(
                min(s, max(1, image_size // 2)) for s in shape)

    for name in DATALOADERS:
        _walk(cfg.get(name), visit)


def _small_batches(cfg: Config, batch_size: int) -> None:
    for name in DATALOADERS:
        loader = cfg.get(name)
        if isinstance(loader, dict):
            loader['batch_size'] = min(
                loader.get('batch_size') or batch_size, batch_size)
            loader['num_workers'] = 0
            loader['persistent_workers'] = False


def used_dataloaders(cfg: Config, test: bool = False) -> List[str]:
    """The dataloaders a full run of ``cfg`` builds: the training one, the
    validation one where validation is on (``val_dataloader`` and
    ``val_cfg``), and with ``test`` the test one where it is configured
    (``test_dataloader`` and ``test_cfg``: ``tools/demo.py`` and the sweeps
    test after training)."""
    names = ['train_dataloader']
    for split, wanted in (('val', True), ('test', test)):
        if wanted and isinstance(cfg.get(f'{split}_dataloader'),
                                 dict) and cfg.get(f'{split}_cfg') is not None:
            names.append(f'{split}_dataloader')
    return names


def check_dataloaders(cfg: Config, names: Sequence[str]) -> None:
    """Build each dataloader of ``names`` as the full run of ``cfg`` builds
    it (its workers, batches, images and sampler, before
    :func:`smoke_config` shrinks them) and read its first batch.

    Args:
        cfg (Config): The config of the full run.
        names (Sequence[str]): The dataloaders, e.g.
            :func:`used_dataloaders`.

    Raises:
        ValueError: A dataloader cannot be built or read, e.g.
            ``persistent_workers=True`` with ``num_workers=0``; one line
            naming it and the first line of the error.
    """
    from mmengine.registry import DefaultScope
    from mmengine.runner import Runner
    seed = (cfg.get('randomness') or {}).get('seed')
    for name in names:
        try:
            with DefaultScope.overwrite_default_scope(
                    cfg.get('default_scope', 'mmpretrain')):
                loader = Runner.build_dataloader(
                    copy.deepcopy(cfg[name]), seed=seed)
                batches = iter(loader)
                next(batches, None)  # an empty split: the training checks
                del batches, loader  # its worker processes end here
        except Exception as error:
            lines = str(error).strip().splitlines() or ['']
            raise ValueError(f'{name} fails as the full run builds it: '
                             f'{type(error).__name__}: {lines[0]}') from None


def _scheduler_horizon(schedulers, max_epochs: int) -> float:
    """The epochs the learning-rate schedule spans: the run, or the latest
    ``end`` of an epoch-based scheduler beyond it (Zhang et al.'s one-cycle
    over 80 epochs of which 31 are trained)."""
    horizon = float(max_epochs)
    for sched in schedulers:
        end = sched.get('end')
        if sched.get('by_epoch', True) and isinstance(
                end, numbers.Real) and math.isfinite(end):
            horizon = max(horizon, float(end))
    return horizon


def _scale_schedulers(cfg: Config, max_epochs: int, epochs: int) -> None:
    """Lay the epoch-based schedulers over the run: every epoch-valued
    argument times ``epochs / horizon``, fractions kept where the scheduler
    is converted to iterations, else rounded (an end at least one epoch
    after the begin)."""
    schedulers = cfg.get('param_scheduler')
    if isinstance(schedulers, dict):
        schedulers = [schedulers]
    if not schedulers:
        return
    factor = epochs / _scheduler_horizon(schedulers, max_epochs)
    for sched in schedulers:
        if not sched.get('by_epoch', True):
            continue
        fractional = sched.get('convert_to_iter_based', False)
        for key in SCHEDULER_EPOCH_ARGS:
            value = sched.get(key)
            if not isinstance(value, numbers.Real) or isinstance(
                    value, bool) or not math.isfinite(value):
                continue
            scaled = float(value) * factor
            if key == 'total_steps' or not fractional:
                scaled = round(scaled) if key in ('begin', ) else max(
                    1, round(scaled))
            sched[key] = scaled
        if isinstance(sched.get('milestones'), (list, tuple)):
            sched['milestones'] = [
                m * factor if fractional else max(1, round(m * factor))
                for m in sched['milestones']
            ]
        begin, end = sched.get('begin', 0), sched.get('end')
        if not fractional and isinstance(end, int) and end <= begin:
            sched['end'] = begin + 1


def smoke_config(cfg: Config,
                 epochs: int = 2,
                 image_size: int = 64,
                 batch_size: int = 2) -> Config:
    """Shrink a training config, in place, to a short offline trial.

    * random initialisation: ``model.backbone.init_cfg=None``, every
      ``Pretrained`` ``init_cfg`` of the model and ``load_from`` off;
    * ``OptimWrapper`` instead of ``AmpOptimWrapper``;
    * the image size of every dataloader's resize and crop transforms
      ``image_size`` (``Cutout`` at most half of it), batches of at most
      ``batch_size``, no worker processes;
    * ``epochs`` epochs, validated after each;
    * every epoch-start setting of :data:`EPOCH_START_ARGS` of the hooks
      (``custom_hooks``, ``default_hooks``) and of the model (losses,
      heads), given or default, scaled by ``epochs / max_epochs`` and kept
      inside the run (:func:`scale_epoch_start`); a component's own
      ``max_epochs`` set to ``epochs``;
    * the epoch-based parameter schedulers laid over the run
      (``begin``, ``end``, ``T_max``, ``milestones``... times
      ``epochs`` over the schedule's span, which is the config's
      ``max_epochs`` or a scheduler's later ``end``).

    Args:
        cfg (Config): A training config with an epoch-based loop.
        epochs (int): Epochs of the trial, at least 2 (a warm-up and the
            epoch after it). Defaults to 2.
        image_size (int): Side of the training and test images. Defaults
            to 64.
        batch_size (int): Largest batch. Defaults to 2.

    Returns:
        Config: ``cfg``.

    Raises:
        ValueError: ``epochs`` below 2, or a config without an epoch-based
            ``train_cfg``.
    """
    if isinstance(
            epochs,
            bool) or not isinstance(epochs, numbers.Integral) or epochs < 2:
        raise ValueError(
            f'a smoke run needs at least 2 epochs, got {epochs!r}')
    train_cfg = cfg.get('train_cfg') or {}
    max_epochs = train_cfg.get('max_epochs')
    if not train_cfg.get('by_epoch', True) or not isinstance(
            max_epochs, numbers.Integral):
        raise ValueError(
            'a smoke run shortens an epoch-based training: the config needs '
            'train_cfg=dict(by_epoch=True, max_epochs=...), got train_cfg='
            f'{dict(train_cfg)!r}')
    factor = epochs / max_epochs
    _drop_pretrained(cfg)
    _full_precision(cfg)
    _shrink_images(cfg, image_size)
    _small_batches(cfg, batch_size)
    for name in ('custom_hooks', 'default_hooks'):
        scale_epoch_settings(cfg.get(name), HOOKS, factor, epochs)
    scale_epoch_settings(cfg.get('model'), MODELS, factor, epochs)
    _scale_schedulers(cfg, max_epochs, epochs)
    train_cfg['max_epochs'] = epochs
    train_cfg['val_interval'] = 1
    cfg.train_cfg = train_cfg
    return cfg
