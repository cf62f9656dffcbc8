"""Large Loss Matters (LL-R, LL-Ct), Kim et al., CVPR 2022.

The per-batch modifications live here; LL-Cp, which makes its corrections
permanent, needs per-sample state and is not a stateless loss.
"""
import math
from fractions import Fraction
from typing import Any, Dict

import torch
from torch import Tensor

from mmlml.registry import MODELS
from .base import (POSITIVE, UNKNOWN, PartialLabelLoss, TrainingProgress,
                   partial_label_loss)
from .hyperparameters import Choice, Integer, Real, hyperparameters_of
from .terms import negative_term, positive_term

__all__ = [
    'num_large_losses', 'select_large_losses', 'large_loss', 'LargeLoss'
]

MODES = ('rejection', 'temporary')


class _Mode(Choice):
    """LL's mode; ``'permanent'`` (LL-Cp) gets its own explanation."""

    def check(self, name: str, value: Any) -> str:
        if value == 'permanent':
            raise NotImplementedError(
                "mode='permanent' (LL-Cp) keeps its corrections across "
                'epochs, which needs per-sample label state: it is not '
                "available as a stateless loss; use 'rejection' (LL-R) or "
                "'temporary' (LL-Ct)")
        return super().check(name, value)


DELTA_REL = Real(
    0.002,
    low=0,
    high=1,
    hint='a fraction per epoch: the official command line takes percent, '
    'its 0.2 is 0.002 here')


def num_large_losses(num_entries: int, epoch: int, delta_rel: float) -> int:
    r"""How many unannotated losses LL modifies in a batch:
    :math:`k = \lceil N C \cdot \text{epoch} \cdot \delta \rceil` with the
    0-based ``epoch`` (none in the first epoch).

    ``delta_rel`` is read as the decimal it prints as, so that
    ``num_entries * epoch * delta_rel`` is exact (``1000 * 0.002`` gives
    2, not 3). The official code accumulates ``1 - delta`` per epoch in
    floating point and can, at such exact integers, modify one more.
    """
    if epoch < 0:
        raise ValueError(f'epoch must be >= 0, got {epoch}')
    delta = Fraction(repr(DELTA_REL.validate('delta_rel', delta_rel)))
    return math.ceil(num_entries * epoch * delta)


def select_large_losses(loss: Tensor, candidates: Tensor, k: int) -> Tensor:
    """Mask of the ``k`` largest values of ``loss`` among ``candidates``.

    Entries tied with the ``k``-th largest value are all selected, as in
    the official code; ``k`` larger than the number of candidates selects
    them all, and non-candidates are never selected.

    Args:
        loss (Tensor): Values to rank, any shape.
        candidates (Tensor): Bool mask of the same shape.
        k (int): Number of entries to select.

    Returns:
        Tensor: Bool mask of the selected entries.
    """
    if k <= 0 or loss.numel() == 0:
        return torch.zeros_like(candidates, dtype=torch.bool)
    ranked = loss.detach().masked_fill(~candidates, -math.inf)
    k = min(k, ranked.numel())
    threshold = ranked.flatten().topk(k).values[-1]
    return candidates & (ranked >= threshold)


@partial_label_loss(
    epoch=Integer(low=0),
    mode=_Mode('rejection', options=MODES),
    delta_rel=DELTA_REL)
def large_loss(cls_score: Tensor, target: Tensor, epoch: int, mode: str,
               delta_rel: float) -> Tensor:
    r"""Binary cross-entropy (unannotated assumed negative) whose largest
    unannotated losses are rejected or corrected for this batch.

    From the second epoch (``epoch >= 1``, 0-based) the
    :math:`k` = :func:`num_large_losses` largest losses among the
    *unannotated* entries, ranked by their loss :math:`-\log(1 - p)` under
    the negative assumption, are modified:

    .. math::
        \ell = \begin{cases}
        -\log p & t = 1 \text{, or selected and mode temporary} \\
        0 & \text{selected and mode rejection} \\
        -\log(1 - p) & \text{otherwise}
        \end{cases}

    Observed positives and observed negatives are never selected.

    Args:
        cls_score (Tensor): Logits ``(N, C)``.
        target (Tensor): Tri-state target ``(N, C)`` or indices ``(N,)``.
        epoch (int): 0-based training epoch.
        mode (str): ``'rejection'`` (LL-R) or ``'temporary'`` (LL-Ct).
            Defaults to ``'rejection'``.
        delta_rel (float): Growth :math:`\delta` of the modified fraction
            per epoch. Defaults to 0.002.
        weight, reduction, avg_factor: See
            :func:`~.base.reduce_loss`.
    """
    k = num_large_losses(cls_score.numel(), epoch, delta_rel)
    loss_neg = negative_term(cls_score)
    loss_pos = positive_term(cls_score)
    loss = torch.where(target == POSITIVE, loss_pos, loss_neg)
    selected = select_large_losses(loss_neg, target == UNKNOWN, k)
    if mode == 'rejection':
        return loss.masked_fill(selected, 0.0)
    return torch.where(selected, loss_pos, loss)


@MODELS.register_module()
class LargeLoss(TrainingProgress, PartialLabelLoss):
    r"""Large Loss Matters: reject (LL-R) or temporarily correct (LL-Ct) the
    largest assumed-negative losses of each batch.

    Binary cross-entropy with unannotated labels assumed negative; from
    the second epoch on, in every batch, the
    :math:`k = \lceil N C (e - 1) \delta \rceil` largest losses (1-based
    epoch :math:`e`) among the unannotated entries are treated as likely
    false negatives: LL-R gives them weight 0, LL-Ct flips their target to
    1 for this batch only. As in the official code, :math:`k` is counted
    over all ``N x C`` entries of the batch, the ranking uses the loss
    under target 0, and entries tied with the :math:`k`-th are included.
    Unlike it, observed positives and negatives are never selected (the
    official code could select observed entries once :math:`k` exceeds the
    unannotated entries with nonzero loss); :math:`k` beyond the number of
    unannotated entries selects them all.

    The epoch comes from MMEngine's ``MessageHub`` during training (see
    :class:`TrainingProgress`); call :meth:`set_epoch` outside a Runner.

    ``delta_rel`` is a fraction per epoch: the official command line takes
    percent (its ``0.2`` is ``0.002`` here). Selected values in percent
    (LL-R / LL-Ct / LL-Cp): VOC 0.2 / 0.2 / 0.1, COCO and NUS-WIDE
    0.4 / 0.2 / 0.2, CUB 0.4 / 0.4 / 0.2. The default 0.002 is VOC's LL-R
    and LL-Ct, and COCO's and NUS-WIDE's LL-Ct. LL-Cp (``mode='permanent'``)
    keeps its corrections across epochs and needs per-sample label state,
    so this stateless loss refuses it.

    Official scale: mean over ``N x C``. With MMPretrain's head
    (``avg_factor=N``) use ``loss_weight=1 / C`` to reproduce it.

    Reference: Y. Kim et al., "Large Loss Matters in Weakly Supervised
    Multi-Label Classification", CVPR 2022.

    Args:
        mode (str): ``'rejection'`` (LL-R) or ``'temporary'`` (LL-Ct).
            Defaults to ``'rejection'``.
        delta_rel (float): :math:`\delta`, growth of the modified fraction
            per epoch, in ``[0, 1]``. Defaults to 0.002.
        reduction (str), loss_weight (float): See
            :class:`~.base.PartialLabelLoss`.
    """

    loss_fn = large_loss
    hyperparameters = hyperparameters_of(large_loss, 'mode', 'delta_rel')

    def loss_kwargs(self) -> Dict:
        return dict(super().loss_kwargs(), epoch=self.current_epoch())
