"""Refuse to resume a training run from a checkpoint of another model or
method."""
import hashlib
import logging
import re
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
from mmengine.config import Config
from mmengine.hooks import Hook
from mmengine.logging import print_log
from mmengine.model import is_model_wrapper

from mmlml.datasets import find_partial_label_dataset
from mmlml.registry import HOOKS
from mmlml.utils.hyperparameters import Flag, check_settings
from .label_store_hook import LabelStoreHook

__all__ = ['ResumeCheckHook', 'partial_label_fingerprint']

#: The checkpoint key of the training set's partial-label fingerprint.
FINGERPRINT_KEY = 'partial_labels'


def array_digest(array: np.ndarray) -> str:
    """A digest of the values of an array, read once (without a copy if it
    is contiguous). The caller fixes the dtype (``int8`` labels,
    ``float32`` scores), so that equal values give equal digests; the
    shape is recorded beside it."""
    array = np.ascontiguousarray(array)
    return hashlib.blake2b(array.data.cast('B'), digest_size=16).hexdigest()


def partial_label_fingerprint(dataset, hooks=()) -> Optional[dict]:
    """What fixes the labels a run trains on, by value: the
    :class:`~mmlml.datasets.PartialLabelDataset` settings (``mode``,
    ``ratio``, ``seed``, ``split``, ``val_frac``, ``split_seed``), the
    number of samples and classes, a digest of the observed label matrix
    itself (the values of a ``label_file`` or of the annotation, whatever
    the file's format or dtype), and, under ``pseudo_labels``, what fixes
    the pseudo-labels of each hook in ``hooks`` with a ``label_source``
    method (:meth:`~mmlml.hooks.VLPseudoLabelHook.label_source`: the
    digest of its scores, its thresholds, its labeller). None for a
    training set that is not, and does not wrap, a ``PartialLabelDataset``.

    Hashes the ``(N, C)`` int8 matrix once, without a copy (about a second
    at OpenImages scale).
    """
    try:
        partial = find_partial_label_dataset(dataset)
    except TypeError:
        return None
    labels = partial.observed_labels
    fingerprint = dict(
        mode=partial.mode,
        ratio=partial.ratio,
        seed=partial.seed,
        split=partial.split,
        val_frac=partial.val_frac,
        split_seed=partial.split_seed,
        num_samples=int(labels.shape[0]),
        num_classes=int(labels.shape[1]),
        observed_labels=array_digest(labels.view(np.int8)))
    sources: Dict[str, Any] = {}
    for hook in hooks:
        label_source = getattr(hook, 'label_source', None)
        if callable(label_source):
            name = type(hook).__name__
            key = name if name not in sources else f'{name}[{len(sources)}]'
            sources[key] = label_source(partial)
    if sources:
        fingerprint['pseudo_labels'] = sources
    return fingerprint


def _flatten(fingerprint: dict, prefix: str = '') -> dict:
    """A fingerprint as ``{dotted key: value}``."""
    flat = {}
    for key, value in fingerprint.items():
        if isinstance(value, dict):
            flat.update(_flatten(value, f'{prefix}{key}.'))
        else:
            flat[f'{prefix}{key}'] = value
    return flat


def _shape(tensor) -> Tuple[int, ...]:
    return tuple(getattr(tensor, 'shape', ()))


def _loss_type(cfg) -> Optional[str]:
    """The ``model.head.loss.type`` of a config, None if it has none."""
    try:
        return cfg['model']['head']['loss']['type']
    except (KeyError, TypeError):
        return None


@HOOKS.register_module()
class ResumeCheckHook(Hook):
    """Check that a resumed checkpoint belongs to this training run.

    Resuming (``resume=True``) continues a run where its checkpoint left
    it: epoch, optimizer, schedule and per-sample state. MMEngine loads the
    weights with ``strict=False``: a parameter of another shape (another
    ``num_classes``) is skipped with a log line and the run fails later, at
    the first optimizer step, with ``The size of tensor a (20) must match
    the size of tensor b (10)``; a checkpoint key the model lacks (ROLE's
    label estimates), and the checkpoint's label store without the hook
    that restores it, are dropped. This hook checks the checkpoint when it
    is loaded for resuming, before any weight is copied, and raises a
    ``ValueError`` that names what differs:

    - a parameter or buffer whose shape differs, or that only one side
      has;
    - a ``label_store`` (the per-sample state of APL, LL-Cp, OPML's
      corrections) that no :class:`LabelStoreHook` of this run restores.

    - partial labels other than those the checkpoint was trained on (the
      checkpoint holds :func:`partial_label_fingerprint` of its training
      set): another ``mode``, ``ratio``, ``seed``, split, label values or
      annotation, or other pseudo-labels (another scores file's values,
      threshold or labeller of :class:`VLPseudoLabelHook`) would continue
      the run, and its per-sample state, on other labels. With
      ``allow_label_change=True`` this is a warning.
    - a checkpoint without that fingerprint (saved before mmlml recorded
      it, or by a run without this hook), or without the part of it that
      a hook of this run adds (its pseudo-labels), for a partial-label
      training set: nothing shows that it was trained on these labels.
      With ``allow_missing_fingerprint=True`` (or
      ``allow_label_change=True``) this is a warning.

    A checkpoint trained with another loss (``model.head.loss.type`` of its
    saved config) resumes with a warning. Loading weights to start a new
    run (``load_from`` without ``resume``) is not checked: fine-tuning with
    another head is what it is for.

    ``tools/train.py`` registers this hook in every run where the config
    has none; mmlml's configs register it as ``default_hooks.resume_check``.

    Args:
        allow_label_change (bool): Resume on other partial labels (or on a
            checkpoint without their fingerprint) with a warning instead of
            an error. Defaults to False.
        allow_missing_fingerprint (bool): Resume from a checkpoint that
            holds no fingerprint of its training labels, or not all of it,
            with a warning instead of an error (labels that differ are
            still refused). Defaults to False.
    """

    priority = 'VERY_HIGH'

    hyperparameters = dict(
        allow_label_change=Flag(False), allow_missing_fingerprint=Flag(False))

    def __init__(self,
                 *,
                 allow_label_change: bool = False,
                 allow_missing_fingerprint: bool = False) -> None:
        self.allow_label_change = allow_label_change
        self.allow_missing_fingerprint = allow_missing_fingerprint
        check_settings(self)
        self._fingerprint: Optional[dict] = None

    def fingerprint(self, runner) -> Optional[dict]:
        """The training set's :func:`partial_label_fingerprint`, computed
        once."""
        if self._fingerprint is None:
            loader = getattr(runner, 'train_dataloader', None)
            self._fingerprint = partial_label_fingerprint(
                getattr(loader, 'dataset', None), getattr(runner, 'hooks',
                                                          ())) or {}
        return self._fingerprint or None

    def before_save_checkpoint(self, runner, checkpoint: dict) -> None:
        """Save the training set's partial-label fingerprint.

        Args:
            runner (Runner): The runner of the training process.
            checkpoint (dict): The checkpoint to save.
        """
        fingerprint = self.fingerprint(runner)
        if fingerprint is not None:
            checkpoint[FINGERPRINT_KEY] = fingerprint

    def after_load_checkpoint(self, runner, checkpoint: dict) -> None:
        """Check the checkpoint before MMEngine copies its weights.

        Args:
            runner (Runner): The runner of the training process.
            checkpoint (dict): The loaded checkpoint.

        Raises:
            ValueError: The checkpoint belongs to another model or method.
        """
        if not getattr(runner, '_resume', False):
            return
        problems = self._weight_problems(runner, checkpoint)
        problems += self._state_problems(runner, checkpoint)
        problems += self._label_problems(runner, checkpoint)
        if problems:
            raise ValueError(
                'Cannot resume from this checkpoint: it may not have been '
                'saved by a run of this config. ' + ' '.join(problems) +
                ' Resuming '
                'continues the same run (its epoch, optimizer, schedule and '
                'per-sample state); to start a new run from these weights, '
                'set `load_from` and leave `resume` False (MMEngine then '
                'skips the parameters that do not fit).')
        self._warn_other_loss(runner, checkpoint)

    @staticmethod
    def _weight_problems(runner, checkpoint: dict) -> List[str]:
        state = checkpoint.get('state_dict', checkpoint)
        if not isinstance(state, dict):
            return []
        state = {re.sub(r'^module\.', '', k): v for k, v in state.items()}
        model = runner.model.module if is_model_wrapper(
            runner.model) else runner.model
        own = model.state_dict()
        problems = []
        shapes = [
            f'`{key}` has shape {_shape(state[key])} in the checkpoint and '
            f'{_shape(value)} in the model' for key, value in own.items()
            if key in state and _shape(state[key]) != _shape(value)
        ]
        if shapes:
            problems.append(
                f'{len(shapes)} parameters differ in shape (another '
                f'`num_classes` or model?): {"; ".join(shapes[:3])}.')
        missing = [key for key in own if key not in state]
        unexpected = [key for key in state if key not in own]
        for keys, where, other in ((missing, 'model', 'checkpoint'),
                                   (unexpected, 'checkpoint', 'model')):
            if keys:
                problems.append(f'{len(keys)} entries of the {where} are '
                                f'not in the {other}, e.g. {keys[:3]}.')
        return problems

    @staticmethod
    def _state_problems(runner, checkpoint: dict) -> List[str]:
        if checkpoint.get('label_store') is None:
            return []
        if any(isinstance(hook, LabelStoreHook) for hook in runner.hooks):
            return []
        saved = ResumeCheckHook._saved_config(checkpoint)
        hooks = [] if saved is None else [
            hook.get('type') for hook in saved.get('custom_hooks', ())
            if isinstance(hook, dict)
        ]
        by = f' (its config has the hooks {hooks})' if hooks else ''
        return [
            'The checkpoint holds a label store, the per-sample state of its '
            f'method{by}, and no hook of this run restores it: it would be '
            'dropped. Resume with the config that saved it.'
        ]

    def _label_problems(self, runner, checkpoint: dict) -> List[str]:
        now = self.fingerprint(runner)
        if now is None:  # not a partial-label training set
            return []
        saved = checkpoint.get(FINGERPRINT_KEY)
        saved = _flatten(saved) if isinstance(saved, dict) else {}
        now = _flatten(now)
        # Keys of this run only are compared: the checkpoint may hold keys
        # of earlier versions (the SHA-256 of the label file's bytes, whose
        # values are in observed_labels now) or what this run cannot know
        # (the scores of a scores file that is gone).
        missing = sorted(
            {'.'.join(key.split('.')[:2])
             for key in now if key not in saved})
        if not saved:
            missing = ['its training labels']
        changed = [
            f'{key} {saved.get(key)!r} -> {now.get(key)!r}'
            for key in sorted(saved) if key != 'observed_labels' and key in now
            and saved[key] != now[key]
        ]
        if not changed and saved.get(
                'observed_labels',
                now.get('observed_labels')) != now.get('observed_labels'):
            changed = [
                'the observed labels (another label file or '
                'annotation?)'
            ]
        setting = ("default_hooks.resume_check=dict(type='ResumeCheckHook', "
                   '{}=True)')
        problems = []
        if changed:
            problems.append(
                self._refuse_or_warn(
                    "The training set's partial labels differ from those the "
                    f'checkpoint was trained on: {"; ".join(changed)}. The '
                    'run (and its per-sample state) would continue on other '
                    'labels. To do so on purpose, set '
                    f'{setting.format("allow_label_change")}.',
                    self.allow_label_change))
        if missing:
            problems.append(
                self._refuse_or_warn(
                    'The checkpoint holds no fingerprint of '
                    f'{", ".join(missing)} (saved before mmlml recorded it, '
                    'or by a run without ResumeCheckHook): nothing shows it '
                    'was trained on the labels of this run. If it was, set '
                    f'{setting.format("allow_missing_fingerprint")}.',
                    self.allow_missing_fingerprint or self.allow_label_change))
        return [problem for problem in problems if problem]

    @staticmethod
    def _refuse_or_warn(message: str, allowed: bool) -> Optional[str]:
        """``message`` as a problem, or logged as a warning (and None) if
        the user ``allowed`` it."""
        if not allowed:
            return message
        print_log(
            f'ResumeCheckHook: {message}',
            logger='current',
            level=logging.WARNING)
        return None

    @staticmethod
    def _saved_config(checkpoint: dict) -> Optional[Config]:
        meta = checkpoint.get('meta') or {}
        # MMEngine saves the config text as 'cfg' (older versions 'config').
        text = meta.get('cfg', meta.get('config'))
        if not isinstance(text, str):
            return None
        try:
            return Config.fromstring(text, file_format='.py')
        except Exception:  # a config that no longer parses is no evidence
            return None

    @staticmethod
    def _warn_other_loss(runner, checkpoint: dict) -> None:
        saved = ResumeCheckHook._saved_config(checkpoint)
        if saved is None:
            return
        before, now = _loss_type(saved), _loss_type(runner.cfg)
        if before != now:
            print_log(
                f'ResumeCheckHook: the resumed checkpoint was trained with '
                f'the loss {before}, and this run continues it with {now}.',
                logger='current',
                level=logging.WARNING)
