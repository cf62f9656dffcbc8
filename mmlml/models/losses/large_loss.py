"""Large Loss Matters (LL-R, LL-Ct, LL-Cp), Kim et al., CVPR 2022.

LL-R and LL-Ct modify each batch on its own; LL-Cp makes its corrections
permanent, which :class:`~mmlml.hooks.LargeLossCorrectionHook` stores in the
label store with the selection of :func:`large_loss_selection`, the one the
loss uses.
"""
import math
from typing import Dict, Optional, Union

import torch
from torch import Tensor

from mmlml.registry import MODELS
from mmlml.utils.hyperparameters import (Choice, Integer, Real, check_settings,
                                         hyperparameters_of)
from mmlml.utils.progress import TrainingProgress
from .base import PartialLabelLoss, partial_label_loss
from .utils import (POSITIVE, UNKNOWN, focal_negative, focal_positive,
                    prepare_pseudo_labels, soft_bce)

__all__ = [
    'num_large_losses', 'select_large_losses', 'large_loss_selection',
    'large_loss', 'LargeLoss'
]

MODES = ('rejection', 'temporary', 'permanent')
MODE = Choice('rejection', options=MODES)
DELTA_REL = Real(
    0.002,
    low=0,
    high=1,
    hint='a fraction (per epoch; per batch for LL-Cp): the official '
    'command line takes percent, its 0.2 is 0.002 here')


def num_large_losses(num_entries: int,
                     epoch: Union[int, Tensor],
                     delta_rel: float,
                     mode: str = 'rejection') -> Union[int, Tensor]:
    r"""How many unannotated losses LL modifies in a batch of
    ``num_entries`` = :math:`N C` entries, with the 0-based ``epoch`` (none
    in the first epoch):

    .. math::
        k = \begin{cases}
        \lceil N C \cdot \text{epoch} \cdot \delta \rceil
            & \text{rejection, temporary (the rate grows each epoch)},\\
        \lceil N C \delta \rceil \cdot [\text{epoch} \ge 1]
            & \text{permanent (a fixed number per batch)}.
        \end{cases}

    ``delta_rel`` is a decimal such as 0.002, which a float holds only
    approximately: a product that is an integer in decimals
    (``1000 * 0.002 = 2``) is rounded down to it before the ceiling (the
    official code accumulates ``1 - delta`` per epoch in floating point and
    can, at such integers, modify one more). ``epoch`` may be a 0-dim
    tensor (the training progress of a compiled graph): then so is ``k``.
    """
    mode = MODE.validate('mode', mode)
    delta_rel = DELTA_REL.validate('delta_rel', delta_rel)
    if isinstance(epoch, Tensor):
        fraction = epoch.double()
        if mode == 'permanent':
            fraction = fraction.clamp(max=1)
        return torch.ceil(num_entries * fraction * delta_rel *
                          (1 - 1e-12)).long()
    if epoch < 0:
        raise ValueError(f'epoch must be >= 0, got {epoch}')
    factor = min(epoch, 1) if mode == 'permanent' else epoch
    return math.ceil(num_entries * factor * delta_rel * (1 - 1e-12))


def select_large_losses(loss: Tensor, candidates: Tensor,
                        k: Union[int, Tensor]) -> Tensor:
    """Mask of the ``k`` largest values of ``loss`` among ``candidates``.

    Entries tied with the ``k``-th largest value are all selected, as in
    the official code; ``k`` larger than the number of candidates selects
    them all, and non-candidates are never selected.

    Args:
        loss (Tensor): Values to rank, any shape.
        candidates (Tensor): Bool mask of the same shape.
        k (int | Tensor): Number of entries to select (a 0-dim integer
            tensor in a compiled graph).

    Returns:
        Tensor: Bool mask of the selected entries.
    """
    ranked = loss.detach().masked_fill(~candidates, -math.inf)
    return _at_least_kth_largest(ranked, k, torch.finfo(ranked.dtype).min)


def _at_least_kth_largest(ranked: Tensor, k: Union[int, Tensor],
                          lowest: float) -> Tensor:
    """Bool mask of the entries of ``ranked`` at least its ``k``-th
    largest value (none for ``k <= 0``), never below ``lowest``.

    The threshold is read from the sorted values at a position that may be
    a tensor, so that a ``k`` that changes with the epoch neither reads a
    value on the host nor recompiles a graph.
    """
    if ranked.numel() == 0:
        return torch.zeros_like(ranked, dtype=torch.bool)
    k = torch.as_tensor(k, device=ranked.device)
    ordered = ranked.flatten().sort(descending=True).values
    position = (k - 1).clamp(0, ranked.numel() - 1).reshape(1)
    threshold = ordered.gather(0, position).clamp(min=lowest)
    return (ranked >= threshold) & (k > 0)


#: The rank of a non-candidate: far below any logit of a real model, and
#: finite.
_EXCLUDED = -1e37


def large_loss_selection(cls_score: Tensor,
                         target: Tensor,
                         epoch: Union[int, Tensor],
                         mode: str,
                         delta_rel: float,
                         pseudo_labels: Optional[Tensor] = None) -> Tensor:
    r"""The entries of a batch whose loss LL rejects or corrects: the
    :math:`k` = :func:`num_large_losses` largest losses
    :math:`-\log(1 - p)` (the loss under the negative assumption) among
    the candidates, the unannotated entries (``target == 0``) without a
    pseudo-label (``pseudo_labels`` NaN; LL-Cp's earlier corrections are
    no candidates), with the ties of :func:`select_large_losses`.
    :class:`LargeLoss` and :class:`~mmlml.hooks.LargeLossCorrectionHook`
    both call it, so the hook stores exactly what the loss corrected.

    :math:`-\log(1 - p)` = softplus(x) increases strictly with x: the
    largest losses are those of the largest logits, ranked without
    computing the loss (the official code ranks float32 losses, which can
    also tie logits one ulp apart).

    Args:
        cls_score (Tensor): Checked logits ``(N, C)``.
        target (Tensor): Checked dense tri-state target ``(N, C)``.
        epoch (int | Tensor): 0-based training epoch.
        mode (str): ``'rejection'``, ``'temporary'`` or ``'permanent'``.
        delta_rel (float): :math:`\delta`.
        pseudo_labels (Tensor, optional): ``(N, C)``, NaN where an entry
            has no pseudo-label. Defaults to None (none has one).

    Returns:
        Tensor: ``(N, C)`` bool mask.
    """
    candidates = target == UNKNOWN
    if pseudo_labels is not None:
        candidates = candidates & pseudo_labels.isnan()
    k = num_large_losses(cls_score.numel(), epoch, delta_rel, mode)
    # Non-candidates rank last; a threshold among them (k above the number
    # of candidates) is raised to select every candidate and none of them.
    ranked = cls_score.detach().masked_fill(~candidates, _EXCLUDED)
    return _at_least_kth_largest(ranked, k, _EXCLUDED / 2)


@partial_label_loss(epoch=Integer(low=0), mode=MODE, delta_rel=DELTA_REL)
def large_loss(cls_score: Tensor,
               target: Tensor,
               epoch: Union[int, Tensor],
               mode: str,
               delta_rel: float,
               pseudo_labels: Optional[Tensor] = None) -> Tensor:
    r"""Binary cross-entropy (unannotated assumed negative) whose largest
    unannotated losses are rejected or corrected.

    From the second epoch (``epoch >= 1``, 0-based) the entries of
    :func:`large_loss_selection` (the :math:`k` = :func:`num_large_losses`
    largest losses :math:`-\log(1 - p)` among the unannotated entries
    without a pseudo-label) are modified; with ``mode='permanent'`` the
    entries corrected in earlier batches (pseudo-label :math:`s`, 1 for
    LL-Cp's corrections) are fitted to it:

    .. math::
        \ell = \begin{cases}
        -\log p & t = 1 \text{, or selected and mode temporary or
            permanent} \\
        0 & \text{selected and mode rejection} \\
        -[s\log p + (1 - s)\log(1 - p)]
            & t = 0 \text{ with a pseudo-label } s \text{ (permanent)} \\
        -\log(1 - p) & \text{otherwise}
        \end{cases}

    Observed positives and observed negatives are never selected.

    Args:
        cls_score (Tensor): Logits ``(N, C)``.
        target (Tensor): Tri-state target ``(N, C)`` or indices ``(N,)``.
        epoch (int): 0-based training epoch.
        mode (str): ``'rejection'`` (LL-R), ``'temporary'`` (LL-Ct) or
            ``'permanent'`` (LL-Cp). Defaults to ``'rejection'``.
        delta_rel (float): :math:`\delta`: growth of the modified fraction
            per epoch (R, Ct), the corrected fraction of each batch (Cp).
            Defaults to 0.002.
        pseudo_labels (Tensor, optional): ``(N, C)`` earlier corrections
            (NaN where none), required with ``mode='permanent'`` (all NaN
            before the first) and refused otherwise.
        weight, reduction, avg_factor: See
            :func:`~.utils.reduce_loss`.
    """
    if (pseudo_labels is None) == (mode == 'permanent'):
        raise ValueError(
            "pseudo_labels (the permanent corrections, NaN where none) are "
            "required with mode='permanent' and refused with the other "
            f'modes, got mode={mode!r} and '
            f'{"no" if pseudo_labels is None else ""} pseudo_labels')
    positive = focal_positive(cls_score)
    loss = torch.where(target == POSITIVE, positive, focal_negative(cls_score))
    if pseudo_labels is not None:
        labelled, corrections = prepare_pseudo_labels(pseudo_labels, cls_score)
        loss = torch.where(labelled & (target == UNKNOWN),
                           soft_bce(cls_score, corrections), loss)
    selected = large_loss_selection(cls_score, target, epoch, mode, delta_rel,
                                    pseudo_labels)
    return torch.where(selected, 0.0 if mode == 'rejection' else positive,
                       loss)


@MODELS.register_module()
class LargeLoss(TrainingProgress, PartialLabelLoss):
    r"""Large Loss Matters: reject (LL-R), temporarily correct (LL-Ct) or
    permanently correct (LL-Cp) the largest assumed-negative losses of each
    batch.

    Binary cross-entropy with unannotated labels assumed negative; from
    the second epoch on, in every batch, the :math:`k` largest losses among
    the unannotated entries are treated as likely false negatives
    (:func:`large_loss_selection`):

    - LL-R (``'rejection'``) gives them weight 0 and LL-Ct
      (``'temporary'``) flips their target to 1, for this batch only, with
      :math:`k = \lceil N C (e - 1) \delta \rceil` (1-based epoch
      :math:`e`): the modified fraction grows by :math:`\delta` each epoch.
    - LL-Cp (``'permanent'``) flips the target of
      :math:`k = \lceil N C \delta \rceil` entries per batch (a fixed
      number) and keeps the flip: :class:`~mmlml.hooks.
      LargeLossCorrectionHook` stores the batch's corrected entries in the
      label store after each iteration, and from then on they are positives
      (:math:`-\log p`, read back as ``pseudo_labels``) and no longer
      candidates. The batch that selects an entry already uses the flipped
      target, as in the official code.

    As in the official code, :math:`k` is counted over all ``N x C``
    entries of the batch, the ranking uses the loss under target 0, and
    entries tied with the :math:`k`-th are included. Unlike it, observed
    positives and negatives are never selected (the official code could
    select observed entries once :math:`k` exceeds the unannotated entries
    with nonzero loss); :math:`k` beyond the number of unannotated entries
    selects them all.

    Paper vs official code (LL-Cp): the official code picks LL-Cp's
    :math:`k` and its permanent update with ``P['mod_scheme'] is
    'LL-Cp'``, an identity test of strings that is false for a
    command-line argument, so its LL-Cp runs as LL-Ct (a growing
    :math:`k`, nothing kept). This is the method the paper describes and
    the code intends (``==``), with one difference: the intended code
    flips the entries whose loss is at least the :math:`k`-th largest but
    keeps only those strictly above it (:math:`k - 1` of them without
    ties); here the kept entries are exactly the flipped ones.

    The epoch comes from MMEngine's ``MessageHub`` during training (see
    :class:`TrainingProgress`); call :meth:`set_epoch` outside a Runner.

    ``delta_rel`` is a fraction (per epoch for LL-R and LL-Ct, per batch
    for LL-Cp): the official command line takes percent (its ``0.2`` is
    ``0.002`` here). Selected values in percent (LL-R / LL-Ct / LL-Cp): VOC
    0.2 / 0.2 / 0.1, COCO and NUS-WIDE 0.4 / 0.2 / 0.2, CUB 0.4 / 0.4 /
    0.2. The default 0.002 is VOC's LL-R and LL-Ct, COCO's and NUS-WIDE's
    LL-Ct and LL-Cp, and CUB's LL-Cp.

    ``mode='permanent'`` needs ``model.head.type='PartialLabelLinearClsHead'``
    (or another ``PartialLabel*Head``) and
    ``custom_hooks=[dict(type='LargeLossCorrectionHook')]``; the head then
    hands the loss the batch's earlier corrections as ``pseudo_labels``.

    Official scale: mean over ``N x C``. With MMPretrain's head
    (``avg_factor=N``) use ``loss_weight=1 / C`` to reproduce it.

    Reference: Y. Kim et al., "Large Loss Matters in Weakly Supervised
    Multi-Label Classification", CVPR 2022.

    Args:
        mode (str): ``'rejection'`` (LL-R), ``'temporary'`` (LL-Ct) or
            ``'permanent'`` (LL-Cp). Defaults to ``'rejection'``.
        delta_rel (float): :math:`\delta` in ``[0, 1]``: growth of the
            modified fraction per epoch (R, Ct), or the fraction of each
            batch corrected (Cp). Defaults to 0.002.
        **kwargs: :class:`~.base.PartialLabelLoss`'s ``reduction`` and
            ``loss_weight``, passed on to it.

    Example:
        >>> model = dict(head=dict(type='PartialLabelLinearClsHead',
        ...     loss=dict(_delete_=True, type='LargeLoss', mode='permanent',
        ...               delta_rel=0.001)))
        >>> custom_hooks = [dict(type='LargeLossCorrectionHook')]
    """

    loss_fn = large_loss
    hyperparameters = hyperparameters_of(large_loss, 'mode', 'delta_rel')
    state_hook = 'LargeLossCorrectionHook'

    def __init__(self,
                 *,
                 mode: str = 'rejection',
                 delta_rel: float = 0.002,
                 **kwargs):
        super().__init__(**kwargs)
        self.mode = mode
        self.delta_rel = delta_rel
        check_settings(self)
        if self.mode == 'permanent':
            # Only LL-Cp reads per-sample state: its earlier corrections.
            self.state_inputs = ('pseudo_labels', )

    def loss_kwargs(self, cls_score: Tensor) -> Dict:
        return dict(
            super().loss_kwargs(cls_score), epoch=self.progress(cls_score)[0])
