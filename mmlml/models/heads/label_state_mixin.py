"""What a multi-label head needs to hand per-sample state to its loss."""
from typing import TYPE_CHECKING, Dict, Iterator, List, NamedTuple, Optional

import torch
import torch.nn as nn
from mmpretrain.structures import label_to_onehot
from torch import Tensor

from mmlml.models.losses.stock_losses import (check_stock_loss_target,
                                              stock_loss_name)
from mmlml.registry import MODELS
from mmlml.structures import LabelStore, sample_indices
from mmlml.utils.hyperparameters import Hyperparameter, Typed, check_settings

__all__ = ['LabelStateMixin', 'LossInputs']


class LossInputs(NamedTuple):
    """The inputs of a head's training loss, handed to the hooks that update
    per-sample state (:meth:`LabelStateMixin.pop_loss_inputs`)."""

    #: ``(B,)`` int64 ``sample_idx`` of the batch, on the CPU.
    indices: Tensor
    #: ``(B, C)`` logits, detached.
    cls_score: Tensor
    #: ``(B, C)`` target the loss received (before the loss's own
    #: corrections), detached.
    target: Tensor


if TYPE_CHECKING:

    class _MultiLabelHead:
        """What the mixin uses of the MMPretrain head it extends."""

        loss_module: nn.Module
        training: bool

        def parameters(self) -> Iterator[nn.Parameter]:
            ...

        def _get_loss(self, cls_score: Tensor, data_samples: List,
                      **kwargs) -> dict:
            ...
else:
    _MultiLabelHead = object


class LabelStateMixin(_MultiLabelHead):
    """Mixin for MMPretrain multi-label heads: look the batch's per-sample
    state up by ``sample_idx`` and hand it to the loss.

    A loss declares the state it reads in its ``state_inputs`` class
    attribute (names of keyword tensors, e.g. ``('pseudo_labels',)``);
    stateless losses declare none and the head then behaves exactly like
    the MMPretrain head it extends. Each name is served by

    - :attr:`label_estimator`, a learnable per-sample module of the model
      (ROLE's label estimates), for the names in its ``provides``;
    - otherwise :attr:`label_store`, a :class:`~mmlml.structures.LabelStore`
      that the method's hook creates and attaches before training (hooks
      write it, the head only reads it).

    The hand-over to the hooks: while a store is attached, each training
    loss keeps the batch's indices, detached logits and target as
    :class:`LossInputs`, and :meth:`pop_loss_inputs` hands them over once
    (the hook that updates the store calls it after the iteration): the
    store is updated from the training forward pass, with no extra pass.

    With one of MMPretrain's sigmoid losses (``CrossEntropyLoss``,
    ``FocalLoss``, ``AsymmetricLoss``), the first training loss checks
    that the target holds no observed negative (-1), which those losses
    cannot read (:func:`~mmlml.models.losses.check_stock_loss_target`).

    Put it before the head class it extends, e.g.
    ``class MyHead(LabelStateMixin, SomeMultiLabelClsHead): pass``.

    Args:
        label_estimator (dict | nn.Module, optional): A learnable
            per-sample module (ROLE's label estimator): a submodule, so the
            optimizer trains it and checkpoints hold it. Defaults to None.
        *args, **kwargs: The arguments of the extended head.
    """

    label_store: Optional[LabelStore] = None
    # Declared without a class-level value: a class attribute would shadow
    # the submodule, which nn.Module keeps in ``_modules``.
    label_estimator: Optional[nn.Module]
    _loss_inputs: Optional[LossInputs] = None
    #: The settings of the head besides the stock head's (which
    #: ``*args``/``**kwargs`` pass on).
    hyperparameters: Dict[str, Hyperparameter] = dict(
        label_estimator=Typed(
            None,
            types=(dict, nn.Module),
            spelled='a config dict or an nn.Module',
            optional=True))

    def __init__(self,
                 *args,
                 label_estimator: Optional[dict] = None,
                 **kwargs):
        super().__init__(*args, **kwargs)
        self.label_estimator = label_estimator  # type: ignore[assignment]
        check_settings(self)
        if isinstance(label_estimator, dict):
            self.label_estimator = MODELS.build(label_estimator)
        # Only a stock sigmoid loss has its first target checked.
        self._check_first_target = stock_loss_name(
            self.loss_module) is not None

    def pop_loss_inputs(self) -> Optional[LossInputs]:
        """The inputs of the last training loss computed while a store was
        attached, once: the call clears them.

        Returns:
            LossInputs | None: The batch's indices, detached logits and
            target, or None if no such loss was computed since the last
            call.
        """
        inputs, self._loss_inputs = self._loss_inputs, None
        return inputs

    def attach_label_store(self, store: LabelStore) -> None:
        """Serve the loss's state from ``store`` (called by the hooks)."""
        self.__dict__['label_store'] = store  # not a submodule: not saved

    def label_state(self, indices: Tensor, names: List[str],
                    cls_score: Tensor) -> Dict[str, Tensor]:
        """The state named ``names`` for the samples ``indices``."""
        estimator = self.label_estimator
        from_estimator = [
            name for name in names
            if name in getattr(estimator, 'provides', ())
        ]
        state = {}
        if from_estimator and estimator is not None:
            state.update(estimator(indices.to(cls_score.device)))
        rest = [name for name in names if name not in from_estimator]
        if rest:
            if self.label_store is None:
                loss = type(self.loss_module).__name__
                hook = getattr(self.loss_module, 'state_hook', None)
                raise RuntimeError(
                    f'{loss} reads {rest} from the label store, but none '
                    'is attached to the head: add '
                    f"custom_hooks=[dict(type='{hook}', ...)] to the "
                    'config (the hook creates, updates and checkpoints the '
                    'store).')
            state.update(
                self.label_store.batch_state(indices, rest, cls_score.device))
        return state

    def _get_loss(self, cls_score: Tensor, data_samples: List, **kwargs):
        """Hand the loss its declared state, compute it, and keep the
        inputs for the hooks (while a store is attached)."""
        if self._check_first_target and self.training:
            self._check_first_target = False
            check_stock_loss_target(
                self.loss_module, stack_target(data_samples,
                                               cls_score.size(1)))
        names = list(getattr(self.loss_module, 'state_inputs', ()))
        if not names and self.label_store is None:
            return super()._get_loss(cls_score, data_samples, **kwargs)
        indices = sample_indices(
            data_samples, getattr(self.label_store, 'num_samples', None))
        kwargs.update(self.label_state(indices, names, cls_score))
        losses = super()._get_loss(cls_score, data_samples, **kwargs)
        if self.training:
            self._loss_inputs = LossInputs(
                indices, cls_score.detach(),
                stack_target(data_samples, cls_score.size(1)))
        return losses


def stack_target(data_samples: List, num_classes: int) -> Tensor:
    """The batch's target as MMPretrain's multi-label heads build it: the
    stacked ``gt_score``, else the one-hot ``gt_label``."""
    if 'gt_score' in data_samples[0]:
        return torch.stack([s.gt_score.float() for s in data_samples])
    return torch.stack([
        label_to_onehot(s.gt_label, num_classes) for s in data_samples
    ]).float()
