"""Permanent correction of Large Loss Matters (LL-Cp), Kim et al., CVPR
2022."""
from typing import Optional

from mmlml.models.losses import LargeLoss, large_loss_selection, prepare_inputs
from mmlml.registry import HOOKS
from .label_store_hook import LabelStoreHook
from .utils import found_before_train

__all__ = ['LargeLossCorrectionHook']


@HOOKS.register_module()
class LargeLossCorrectionHook(LabelStoreHook):
    r"""Keep the corrections of LL-Cp: the permanent label correction of
    :class:`~mmlml.models.losses.LargeLoss` with ``mode='permanent'`` (Kim
    et al., "Large Loss Matters in Weakly Supervised Multi-Label
    Classification", CVPR 2022, Sec. 3.2).

    After every training iteration from the second epoch on (0-based
    ``epoch >= 1``), the entries whose target the loss flipped in the batch,

    .. math::
        \text{the } k = \lceil N C \delta \rceil \text{ largest }
        -\log(1 - p) \text{ among the batch's unannotated entries not
        corrected yet},

    become positive pseudo-labels (value 1) in the label store, for good:
    later batches read them back as ``pseudo_labels`` and fit them with
    :math:`-\log p`. The selection is the loss's own
    (:func:`~mmlml.models.losses.large_loss_selection`, from the logits of
    the training forward pass, with the loss's ``delta_rel`` and epoch), so
    the store holds exactly what the loss corrected; no extra pass. Under
    DDP every rank corrects its own batch and the store gathers the
    corrections of all ranks after each iteration, so the stores stay
    identical.

    The schedule starts at an epoch, so the hook needs an epoch-based
    training loop (``train_cfg=dict(by_epoch=True, ...)``). The corrections
    are saved in the checkpoints and restored on resume.

    Needs ``model.head.type='PartialLabelLinearClsHead'`` (or another
    ``PartialLabel*Head``) and a ``LargeLoss`` with ``mode='permanent'``
    (alone or in a ``LossSum``); it refuses any other loss before the first
    iteration. See :class:`~mmlml.models.losses.LargeLoss` for where the
    official code differs.

    Example:
        >>> model = dict(head=dict(type='PartialLabelLinearClsHead',
        ...     loss=dict(_delete_=True, type='LargeLoss', mode='permanent',
        ...               delta_rel=0.001)))
        >>> custom_hooks = [dict(type='LargeLossCorrectionHook')]
    """

    def __init__(self):
        super().__init__()
        self.loss: Optional[LargeLoss] = None
        self.num_corrected = 0

    def before_train(self, runner) -> None:
        """Check the set-up and find the loss whose selection it keeps.

        Args:
            runner (Runner): The runner of the training process.
        """
        super().before_train(runner)
        loss = self.head.loss_module
        members = getattr(loss, 'losses', [loss])
        found = [
            m for m in members
            if isinstance(m, LargeLoss) and m.mode == 'permanent'
        ]
        if len(found) != 1:
            raise TypeError(
                f'{self.name} keeps the corrections of '
                "LargeLoss(mode='permanent') (LL-Cp), but the loss is "
                f'{type(loss).__name__} with {len(found)} such members: '
                "use loss=dict(type='LargeLoss', mode='permanent').")
        self.loss = found[0]

    def before_train_epoch(self, runner) -> None:
        """Start counting the epoch's corrections.

        Args:
            runner (Runner): The runner of the training process.
        """
        self.num_corrected = 0

    def after_train_iter(self,
                         runner,
                         batch_idx: int,
                         data_batch=None,
                         outputs=None) -> None:
        """Store the batch's corrections, on every rank (the arguments are
        :meth:`mmengine.hooks.Hook.after_train_iter`'s)."""
        inputs = self.last_loss_inputs()
        cls_score, target = prepare_inputs(inputs.cls_score, inputs.target)
        # The store has not changed since the loss read it.
        pseudo_labels = self.store.lookup(inputs.indices, cls_score.device)
        loss = found_before_train(self.loss, self.name, 'LargeLoss')
        selected = large_loss_selection(cls_score, target,
                                        loss.current_epoch(), loss.mode,
                                        loss.delta_rel, pseudo_labels)
        rows, classes = selected.nonzero(as_tuple=True)
        self.num_corrected += self.store.assign(
            inputs.indices[rows.cpu()], classes.cpu(), 1.0, gather=True)

    def after_train_epoch(self, runner) -> None:
        """Log the epoch's corrections.

        Args:
            runner (Runner): The runner of the training process.
        """
        runner.logger.info(
            f'{self.name}: epoch {runner.epoch + 1}: {self.num_corrected} '
            'new permanent corrections, '
            f'{self.store.num_pseudo_labels} in all.')
