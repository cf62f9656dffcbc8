"""Losses evaluated outside a training: built from MMPretrain's ``MODELS``
registry (mmlml's losses and MMPretrain's own), what they expect (mmlml's
tri-state targets, an epoch, the per-sample state that a training keeps
for them) and the training progress that some read from MMEngine's
``MessageHub``."""
import contextlib
import difflib
from typing import Any, Dict, Iterator, List, Optional, Tuple, Union

import mmpretrain.models  # noqa: F401  (registers MMPretrain's losses)
import torch.nn as nn
from mmengine.logging import MessageHub

from mmlml.models.losses import HighRankRegularizer, LossSum, PartialLabelLoss
from mmlml.registry import MODELS

__all__ = [
    'registered_losses', 'build_loss', 'is_epoch_dependent',
    'uses_tri_state_targets', 'state_inputs', 'training_progress'
]


def registered_losses() -> List[str]:
    """Return the registered type names that end with ``Loss``."""
    return sorted(name for name in MODELS.module_dict if name.endswith('Loss'))


def build_loss(cfg: Union[str, Dict[str, Any]]) -> nn.Module:
    """Build a loss of the ``MODELS`` registry.

    Args:
        cfg (str | dict): A registered type name, or a config dict with
            ``type`` and constructor keywords.

    Returns:
        nn.Module: The loss module.

    Raises:
        ValueError: The type is not registered (the message lists close
            names and the registered losses) or the constructor rejected
            the arguments.
    """
    cfg = dict(type=cfg) if isinstance(cfg, str) else dict(cfg)
    name = cfg.get('type')
    if not isinstance(name, str) or MODELS.get(name) is None:
        known = registered_losses()
        close = difflib.get_close_matches(str(name), known, n=3)
        hint = f' Did you mean {", ".join(close)}?' if close else ''
        raise ValueError(
            f"unknown loss {name!r}: no such type in MMPretrain's MODELS "
            f'registry (after importing mmlml).{hint} Registered losses: '
            f'{", ".join(known)}.')
    try:
        return MODELS.build(cfg)
    except (TypeError, ValueError, AssertionError) as err:
        raise ValueError(f'cannot build {cfg}: {err}') from err


def is_epoch_dependent(loss: nn.Module) -> bool:
    """Return whether the loss takes the epoch (has ``set_epoch``)."""
    return callable(getattr(loss, 'set_epoch', None))


def uses_tri_state_targets(loss: nn.Module) -> bool:
    """Return whether the loss understands mmlml's -1 / 0 / 1 targets.

    mmlml's losses do (every :class:`PartialLabelLoss`, :class:`LossSum`
    and :class:`HighRankRegularizer`); other losses take 0 for every
    negative.
    """
    return isinstance(loss, (PartialLabelLoss, LossSum, HighRankRegularizer))


def state_inputs(loss: nn.Module) -> Tuple[str, ...]:
    """Return the names of the per-sample state a stateful loss needs at
    every call (what a ``PartialLabel*Head`` hands it from the label store
    or the label estimator: ``pseudo_labels``, ``class_priors``...); empty
    for a stateless loss."""
    return tuple(getattr(loss, 'state_inputs', ()) or ())


_MISSING = object()


@contextlib.contextmanager
def training_progress(epoch: Optional[int],
                      max_epochs: Optional[int]) -> Iterator[None]:
    """Publish ``epoch`` and ``max_epochs`` in MMEngine's ``MessageHub``.

    As a running training does (with ``loop_stage='train'`` when an epoch
    is given), for the duration of the block; the previous values
    (or their absence) are restored afterwards. None publishes nothing.
    """
    info = MessageHub.get_current_instance().runtime_info
    published: Dict[str, Any] = dict(epoch=epoch, max_epochs=max_epochs)
    if epoch is not None:
        published['loop_stage'] = 'train'
    saved = {key: info.get(key, _MISSING) for key in published}
    try:
        for key, value in published.items():
            if value is not None:
                info[key] = value
        yield
    finally:
        for key, value in saved.items():
            if value is _MISSING:
                info.pop(key, None)
            else:
                info[key] = value
