"""Assume negative (AN): binary cross-entropy with every unannotated label
a negative, and the family of soft targets and weights that WAN, AN-LS and
N-LS (:mod:`.wan_loss`, :mod:`.anls_loss`) build on.

Scale: Cole et al.'s code averages over all ``N x C`` entries, while
MMPretrain's head calls ``loss(cls_score, target, avg_factor=N)`` (sum over
classes, mean over samples). With the head, ``loss_weight=1 / C`` reproduces
the official value; ``loss_weight=1`` is ``C`` times it.
"""
from typing import Optional

import torch
from torch import Tensor

from mmlml.registry import MODELS
from mmlml.utils.hyperparameters import Flag, Real
from .base import PartialLabelLoss, partial_label_loss
from .utils import label_states, soft_bce

__all__ = ['assume_negative_loss', 'ANLoss']


@partial_label_loss(
    neg_weight=Real(1.0, low=0, optional=True),
    smoothing=Real(0.0, low=0, high=0.5),
    negatives_only=Flag(False))
def assume_negative_loss(cls_score: Tensor, target: Tensor,
                         neg_weight: Optional[float], smoothing: float,
                         negatives_only: bool) -> Tensor:
    r"""Binary cross-entropy with unannotated labels assumed negative, with
    optional down-weighting and label smoothing of the assumed negatives.

    Each entry gets a soft target :math:`s` and a weight :math:`w` by state
    (:math:`\varepsilon` = ``smoothing``, :math:`\lambda` = ``neg_weight``):

    * observed positive: :math:`s = 1 - \varepsilon` (1 with
      ``negatives_only``), :math:`w = 1`;
    * unannotated: :math:`s = \varepsilon`, :math:`w = \lambda`;
    * observed negative: :math:`s = \varepsilon` (0 with
      ``negatives_only``), :math:`w = 1`.

    .. math::
        \ell = -w\,[s \log p + (1 - s) \log(1 - p)], \qquad p = \sigma(x).

    ``smoothing=0, neg_weight=1`` is AN; ``neg_weight`` < 1 is WAN / DW;
    ``smoothing`` > 0 is AN-LS, or N-LS with ``negatives_only=True``.

    Args:
        cls_score (Tensor): Logits ``(N, C)``.
        target (Tensor): Tri-state target ``(N, C)`` or indices ``(N,)``.
        neg_weight (float, optional): Weight :math:`\lambda` of the assumed
            negatives; ``None`` means ``1 / (C - 1)`` (WAN). Observed
            negatives are known, so they keep weight 1. Defaults to 1.0.
        smoothing (float): Label smoothing :math:`\varepsilon` in
            ``[0, 0.5]``. Defaults to 0.0.
        negatives_only (bool): Smooth the assumed negatives only (N-LS):
            observed positives keep target 1 and observed negatives target
            0. Defaults to False.
        weight, reduction, avg_factor: See
            :func:`~.utils.reduce_loss`.
    """
    weight = neg_weight
    if weight is None:
        num_classes = cls_score.size(1)
        if num_classes < 2:
            raise ValueError('neg_weight=None means 1 / (C - 1), which needs '
                             f'C >= 2 classes, got C = {num_classes}')
        weight = 1.0 / (num_classes - 1)
    known_smoothing = 0.0 if negatives_only else smoothing
    positive, unknown, _ = label_states(target)
    soft_target = torch.where(unknown, smoothing,
                              torch.full_like(cls_score, known_smoothing))
    soft_target = torch.where(positive, 1.0 - known_smoothing, soft_target)
    loss = soft_bce(cls_score, soft_target)
    return torch.where(unknown, weight * loss, loss)


@MODELS.register_module()
class ANLoss(PartialLabelLoss):
    r"""Assume-negative (AN) loss: binary cross-entropy where every
    unannotated label counts as a negative.

    .. math::
        \ell = -\mathbb{1}[t = 1] \log p - \mathbb{1}[t \ne 1] \log(1 - p).

    It equals MMPretrain's ``CrossEntropyLoss(use_sigmoid=True)`` on the
    one-hot target of the observed positives.

    Official scale (Cole et al.): mean over ``N x C``. With MMPretrain's head
    (``avg_factor=N``) use ``loss_weight=1 / C`` to reproduce it. The code
    uses :math:`-\log(p + 10^{-5})`; this stable form differs by at most
    about ``1e-5 / p``.

    Reference: E. Cole et al., "Multi-Label Learning from Single Positive
    Labels", CVPR 2021.

    Args:
        reduction (str), loss_weight (float): See
            :class:`~.base.PartialLabelLoss`.
    """

    loss_fn = assume_negative_loss
