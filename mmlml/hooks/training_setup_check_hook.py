"""Refuse a training run whose settings disagree with each other before its
first iteration."""
import functools
import weakref
from typing import Any

from mmengine.hooks import Hook
from mmengine.model import is_model_wrapper
from mmengine.runner import Runner

from mmlml.compat import applied_fixes_message
from mmlml.datasets import find_partial_label_dataset
from mmlml.models.losses import check_stock_loss_target, stock_loss_name
from mmlml.registry import (DATASETS, HOOKS, METRICS, MODELS, PARAM_SCHEDULERS,
                            TRANSFORMS)
from .default_hooks import split_disabled_default_hooks

__all__ = [
    'TrainingSetupCheckHook', 'check_training_setup', 'uses_mmlml',
    'add_setup_check_to_mmlml_runs'
]

#: The runners already checked (tools/train.py checks before
#: ``runner.train()``, the hook again at ``before_train``).
_CHECKED: 'weakref.WeakSet[Any]' = weakref.WeakSet()


def _num_classes_of(dataset):
    """The number of classes in a dataset's ``metainfo['classes']``, None
    where it names none."""
    try:
        classes = dataset.metainfo.get('classes')
    except AttributeError:
        return None
    return None if classes is None else len(classes)


def check_num_classes(model, dataset) -> None:
    """The head, the data preprocessor and the training set agree on the
    number of classes.

    Raises:
        ValueError: ``model.head.num_classes`` differs from the number of
            classes of the training set, or
            ``model.data_preprocessor.num_classes`` from the head's.
    """
    head = getattr(model, 'head', None)
    head_classes = getattr(head, 'num_classes', None)
    if head_classes is None:
        return
    data_classes = _num_classes_of(dataset)
    if data_classes is not None and head_classes != data_classes:
        raise ValueError(
            f'model.head.num_classes is {head_classes} but the training set '
            f'(train_dataloader.dataset) has {data_classes} classes in its '
            f"metainfo['classes']: set model.head.num_classes={data_classes}"
            ' (or train on the dataset it was meant for)')
    preprocessor = getattr(model, 'data_preprocessor', None)
    preprocessor_classes = getattr(preprocessor, 'num_classes', None)
    if (preprocessor_classes is not None
            and preprocessor_classes != head_classes):
        raise ValueError(
            'model.data_preprocessor.num_classes is '
            f'{preprocessor_classes} but model.head.num_classes is '
            f'{head_classes}: set data_preprocessor.num_classes='
            f'{head_classes} (the top-level key of the config, or '
            'model.data_preprocessor), or leave it out')


def check_batches(loader) -> None:
    """An epoch of the training dataloader has at least one batch.

    Raises:
        ValueError: ``drop_last=True`` with a batch larger than the
            training split (of one process), which leaves no batch.
    """
    try:
        num_batches = len(loader)
    except TypeError:  # an iterable dataset of unknown length
        return
    if num_batches > 0:
        return
    try:
        num_samples = len(loader.sampler)
    except TypeError:
        num_samples = len(loader.dataset)
    batch_size = loader.batch_size
    if batch_size is None:  # a batch_sampler of its own
        batch_size = getattr(loader.batch_sampler, 'batch_size', None)
    if num_samples == 0:
        raise ValueError('the training split (train_dataloader.dataset) is '
                         'empty: there is nothing to train on')
    raise ValueError(
        f'train_dataloader.batch_size ({batch_size}) is larger than the '
        f'training split ({num_samples} samples per process) and '
        'train_dataloader.drop_last=True drops the only, incomplete batch, '
        'so an epoch has no iteration: lower train_dataloader.batch_size to '
        f'at most {num_samples} or set train_dataloader.drop_last=False')


def check_validation_split(runner) -> None:
    """A configured validation loop has samples to validate on.

    Raises:
        ValueError: The validation dataset is empty (``val_frac=0`` of a
            ``PartialLabelDataset`` split), where MMEngine's sampler fails
            with ``ZeroDivisionError`` at the first validation.
    """
    loop = runner.val_loop  # built here if still a config, as train() does
    dataset = getattr(getattr(loop, 'dataloader', None), 'dataset', None)
    try:
        empty = dataset is not None and len(dataset) == 0
    except TypeError:  # an iterable dataset of unknown length
        return
    if not empty:
        return
    val_frac = getattr(dataset, 'val_frac', None)
    cause = '' if val_frac is None else f' (its val_frac is {val_frac})'
    raise ValueError(
        f'the validation split (val_dataloader.dataset) is empty{cause}: '
        'give it samples (val_frac > 0 in both the training and the '
        'validation PartialLabelDataset), or train without validation: '
        '--cfg-options val_dataloader=None val_cfg=None val_evaluator=None'
        ' (and default_hooks.checkpoint.save_best=None)')


def drop_idle_schedulers(runner) -> None:
    """Leave out the parameter schedulers (still configs) that begin at or
    after the end of training, with a warning: they would never act, and
    MMEngine refuses to build one whose ``end`` (by default the end of
    training) is not after its ``begin`` ("end should be larger than
    begin"), e.g. the cosine phase after a one-epoch warm-up in a
    ``max_epochs=1`` smoke run.
    """
    schedulers = runner.param_schedulers
    if isinstance(schedulers, dict) and 'type' in schedulers:
        schedulers = [schedulers]
    if not isinstance(schedulers, list) or not all(
            isinstance(s, dict) for s in schedulers):
        return  # built already, or one list per optimizer
    loop = runner.train_loop
    kept = []
    for index, cfg in enumerate(schedulers):
        by_epoch = cfg.get('by_epoch', True)
        length = getattr(loop, 'max_epochs' if by_epoch else 'max_iters', None)
        begin = cfg.get('begin', 0)
        if length is not None and begin >= min(
                cfg.get('end', float('inf')), length):
            unit = 'epoch' if by_epoch else 'iteration'
            runner.logger.warning(
                f'param_scheduler[{index}] ({cfg.get("type")}) begins at '
                f'{unit} {begin}, at or after the end of training '
                f'({length} {unit}s): it never acts and is left out.')
            continue
        kept.append(cfg)
    if len(kept) < len(schedulers):
        runner.param_schedulers = kept


def check_loss_targets(model, dataset) -> None:
    """A stock MMPretrain sigmoid loss is not trained on observed negatives.

    Raises:
        ValueError: ``model.head``'s loss is MMPretrain's
            ``CrossEntropyLoss``, ``FocalLoss`` or ``AsymmetricLoss`` and
            the training :class:`~mmlml.datasets.PartialLabelDataset` has
            observed negatives (-1), which those losses cannot read
            (:func:`~mmlml.models.losses.check_stock_loss_target`).
    """
    loss = getattr(getattr(model, 'head', None), 'loss_module', None)
    if stock_loss_name(loss) is None:
        return
    try:
        partial = find_partial_label_dataset(dataset)
    except TypeError:  # not an mmlml training set: stock targets
        return
    if partial.uses_observed_labels:
        check_stock_loss_target(loss, partial.observed_labels)


def check_training_setup(runner) -> None:
    """Check what :class:`TrainingSetupCheckHook` checks, once per runner;
    builds the runner's training loop (and dataloader) if it is still a
    config, as ``runner.train()`` does first.

    Args:
        runner (Runner): The runner of the training process.

    Raises:
        ValueError: See :func:`check_num_classes`,
            :func:`check_loss_targets`, :func:`check_batches` and
            :func:`check_validation_split`.

    Schedulers that would never act are left out
    (:func:`drop_idle_schedulers`).
    """
    if runner in _CHECKED:
        return
    runner.logger.info(applied_fixes_message())
    loader = runner.train_loop.dataloader
    model = runner.model.module if is_model_wrapper(
        runner.model) else runner.model
    check_num_classes(model, loader.dataset)
    check_loss_targets(model, loader.dataset)
    check_batches(loader)
    check_validation_split(runner)
    drop_idle_schedulers(runner)
    _CHECKED.add(runner)


@HOOKS.register_module()
class TrainingSetupCheckHook(Hook):
    """Check, before the first training iteration, settings that otherwise
    fail deep inside the first step or train on nothing:

    - ``model.head.num_classes`` differs from the number of classes of the
      training set (torch's ``Target size (...) must be the same as input
      size (...)`` at the first loss);
    - ``model.data_preprocessor.num_classes`` differs from the head's
      (batch augmentations make targets of the wrong width);
    - MMPretrain's ``CrossEntropyLoss``, ``FocalLoss`` or
      ``AsymmetricLoss`` on a training set with observed negatives (-1),
      which those losses cannot read (they go below zero);
    - an empty validation split (``val_frac=0``) with validation on
      (``ZeroDivisionError`` in MMEngine's sampler at the first
      validation);
    - ``train_dataloader.drop_last=True`` with a batch larger than the
      training split: epochs of no iteration (an epoch-based schedule fails
      with ``end should be larger than begin``, an iteration-based loop
      never gets a batch).

    Each raises a ``ValueError`` naming the setting to change. The check
    also writes which compatibility repairs ``import mmlml`` applied
    (:func:`mmlml.compat.applied_fixes_message`) into the log.
    ``tools/train.py`` runs these checks in every run before
    ``runner.train()`` (before MMEngine builds the parameter schedulers);
    mmlml's configs register this hook (``default_hooks.setup_check``),
    which checks at ``before_train`` for a Runner built elsewhere (e.g.
    MMPretrain's ``tools/train.py``), and any Runner that uses an mmlml
    component gets it too (:func:`add_setup_check_to_mmlml_runs`), e.g.
    one of a config built on a stock MMPretrain base.

    Example:
        >>> default_hooks = dict(
        ...     setup_check=dict(type='TrainingSetupCheckHook'))
    """

    priority = 'VERY_HIGH'

    def before_train(self, runner) -> None:
        """Check the settings.

        Args:
            runner (Runner): The runner of the training process.
        """
        check_training_setup(runner)


#: The keys of a config that ``Runner.from_cfg`` builds (the other
#: top-level names of a config are variables of its files).
_BUILT_KEYS = ('model', 'data_preprocessor', 'train_dataloader',
               'val_dataloader', 'test_dataloader', 'train_cfg', 'val_cfg',
               'test_cfg', 'val_evaluator', 'test_evaluator', 'optim_wrapper',
               'param_scheduler', 'default_hooks', 'custom_hooks',
               'visualizer', 'log_processor')


def _is_mmlml(cls) -> bool:
    """Whether a class is defined in the mmlml package."""
    return isinstance(cls, type) and cls.__module__.split('.')[0] == 'mmlml'


def _names_mmlml_type(cfg) -> bool:
    """Whether a config (nested dicts and lists) builds an mmlml class: a
    ``type`` that is one, or a name mmlml registered."""
    if isinstance(cfg, (list, tuple)):
        return any(_names_mmlml_type(item) for item in cfg)
    if not isinstance(cfg, dict):
        return False
    kind = cfg.get('type')
    if isinstance(kind, str):
        for registry in (MODELS, DATASETS, HOOKS, METRICS, PARAM_SCHEDULERS,
                         TRANSFORMS):
            if _is_mmlml(registry.get(kind)):
                return True
    elif _is_mmlml(kind):
        return True
    return any(_names_mmlml_type(value) for value in cfg.values())


def uses_mmlml(runner) -> bool:
    """Whether a Runner trains with a component of mmlml: its model holds
    an mmlml module (a loss, a head), or its config builds an mmlml class
    (a dataset wrapper, a metric, a hook, a scheduler) among the keys the
    Runner builds. A config that only imports mmlml (``custom_imports``)
    uses none.

    Args:
        runner (Runner): The runner, as built (its model and config).
    """
    model = runner.model.module if is_model_wrapper(
        runner.model) else runner.model
    if any(_is_mmlml(type(module)) for module in model.modules()):
        return True
    cfg = runner.cfg
    return any(_names_mmlml_type(cfg.get(key)) for key in _BUILT_KEYS)


def add_setup_check_to_mmlml_runs() -> None:
    """Give every Runner that uses an mmlml component
    (:func:`uses_mmlml`) a :class:`TrainingSetupCheckHook`, unless it has
    one.

    mmlml's configs list the hook (``default_hooks.setup_check``); a config
    built on a stock MMPretrain base (``_base_ = 'mmpretrain::...'``) that
    imports mmlml to use its losses or its dataset wrapper does not, and a
    mistake the check refuses (the head's and the data preprocessor's class
    counts) would otherwise surface at the first validation, an epoch
    later, with MMPretrain's ``tools/train.py`` or any Runner. MMEngine
    gives only hooks the Runner, so its ``register_hooks`` (called once,
    at the end of ``Runner.__init__``) is extended here: a Runner without
    an mmlml component registers exactly the hooks it did before, and a
    config that sets ``default_hooks.setup_check=None`` gets none. Also,
    ``default_hooks.<name>=None`` turns any default hook off
    (:func:`~mmlml.hooks.default_hooks.split_disabled_default_hooks`).
    Applied when mmlml is imported; idempotent.
    """
    register_hooks = Runner.register_hooks
    if getattr(register_hooks, '_adds_setup_check', False):
        return

    @functools.wraps(register_hooks)
    def wrapper(self, default_hooks=None, custom_hooks=None):
        # default_hooks.<name>=None turns any default hook off, not only
        # MMEngine's own (it asserts on the others): .default_hooks.
        default_hooks, disabled = split_disabled_default_hooks(default_hooks)
        register_hooks(self, default_hooks, custom_hooks)
        if 'setup_check' not in disabled and not any(
                isinstance(hook, TrainingSetupCheckHook)
                for hook in self.hooks) and uses_mmlml(self):
            self.register_hook(TrainingSetupCheckHook())

    setattr(wrapper, '_adds_setup_check', True)  # the mark of the patch
    Runner.register_hooks = wrapper


add_setup_check_to_mmlml_runs()
