"""Refuse to resume a training run from a checkpoint of another model or
method."""
import logging
import re
from typing import List, Optional, Tuple

from mmengine.config import Config
from mmengine.hooks import Hook
from mmengine.logging import print_log
from mmengine.model import is_model_wrapper

from mmlml.registry import HOOKS
from .label_store_hook import LabelStoreHook

__all__ = ['ResumeCheckHook']


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

    A checkpoint trained with another loss (``model.head.loss.type`` of its
    saved config) resumes with a warning. Loading weights to start a new
    run (``load_from`` without ``resume``) is not checked: fine-tuning with
    another head is what it is for.

    ``tools/train.py`` registers this hook in every run; add it to
    ``custom_hooks`` for a Runner built elsewhere.
    """

    priority = 'VERY_HIGH'

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
        if problems:
            raise ValueError(
                'Cannot resume from this checkpoint: it was not saved by a '
                'run of this config. ' + ' '.join(problems) + ' Resuming '
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
