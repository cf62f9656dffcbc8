"""Assume-negative baselines: AN, WAN / DW, AN-LS, N-LS and MSE⁻.

All of them treat an unannotated label as a negative. AN, WAN, AN-LS and
N-LS are one family, binary cross-entropy against a per-state soft target
with a per-state weight (:func:`assume_negative_loss`); MSE⁻ replaces the
negative log-loss by a squared error (:func:`negative_mse_loss`).

Scale: Cole et al.'s code averages over all ``N x C`` entries, while
MMPretrain's head calls ``loss(cls_score, target, avg_factor=N)`` (sum over
classes, mean over samples). With the head, ``loss_weight=1 / C`` reproduces
the official value; ``loss_weight=1`` is ``C`` times it.
"""
from typing import Dict, Optional

import torch
from torch import Tensor

from mmlml.registry import MODELS
from .base import (NEGATIVE, POSITIVE, UNKNOWN, PartialLabelLoss, check_hparam,
                   partial_label_loss)
from .terms import positive_term, soft_bce

__all__ = [
    'assume_negative_loss', 'negative_mse_loss', 'ANLoss', 'WANLoss',
    'ANLSLoss', 'NegativeMSELoss'
]


def _check_neg_weight(neg_weight: Optional[float]) -> Optional[float]:
    if neg_weight is None:
        return None
    return check_hparam('neg_weight', neg_weight, low=0)


def _check_smoothing(smoothing: float) -> float:
    return check_hparam('smoothing', smoothing, low=0, high=0.5)


@partial_label_loss
def assume_negative_loss(cls_score: Tensor,
                         target: Tensor,
                         neg_weight: Optional[float] = 1.0,
                         smoothing: float = 0.0,
                         negatives_only: bool = False) -> Tensor:
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
        weight (Tensor, optional): ``(N,)`` or ``(N, C)`` weights.
        reduction (str): ``'none'``, ``'mean'`` or ``'sum'``. Defaults to
            ``'mean'``.
        avg_factor (float, optional): Divisor for ``'mean'``.

    Returns:
        Tensor: The reduced loss, or the ``(N, C)`` matrix with
        ``reduction='none'``.
    """
    weight = _check_neg_weight(neg_weight)
    smoothing = _check_smoothing(smoothing)
    if weight is None:
        num_classes = cls_score.size(1)
        if num_classes < 2:
            raise ValueError('neg_weight=None means 1 / (C - 1), which needs '
                             f'C >= 2 classes, got C = {num_classes}')
        weight = 1.0 / (num_classes - 1)
    known_smoothing = 0.0 if negatives_only else smoothing
    positive = (target == POSITIVE).to(cls_score)
    unknown = (target == UNKNOWN).to(cls_score)
    negative = (target == NEGATIVE).to(cls_score)
    soft_target = (positive * (1.0 - known_smoothing) + unknown * smoothing +
                   negative * known_smoothing)
    element_weight = None if weight == 1.0 else 1.0 + unknown * (weight - 1)
    return soft_bce(cls_score, soft_target, element_weight)


@partial_label_loss
def negative_mse_loss(cls_score: Tensor, target: Tensor) -> Tensor:
    r"""Binary cross-entropy on positives, squared error on negatives.

    .. math::
        \ell = \begin{cases} -\log p & \text{observed positive} \\
        p^2 & \text{otherwise (unannotated or observed negative)}
        \end{cases}

    Args:
        cls_score (Tensor): Logits ``(N, C)``.
        target (Tensor): Tri-state target ``(N, C)`` or indices ``(N,)``.
        weight (Tensor, optional): ``(N,)`` or ``(N, C)`` weights.
        reduction (str): ``'none'``, ``'mean'`` or ``'sum'``. Defaults to
            ``'mean'``.
        avg_factor (float, optional): Divisor for ``'mean'``.

    Returns:
        Tensor: The reduced loss, or the ``(N, C)`` matrix with
        ``reduction='none'``.
    """
    prob = torch.sigmoid(cls_score)
    return torch.where(target == POSITIVE, positive_term(cls_score),
                       prob * prob)


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
        reduction (str): ``'none'``, ``'mean'`` or ``'sum'``. Defaults to
            ``'mean'``.
        loss_weight (float): Multiplier of the loss. Defaults to 1.0.
    """

    loss_fn = assume_negative_loss


@MODELS.register_module()
class WANLoss(PartialLabelLoss):
    r"""Weighted assume-negative (WAN) loss: AN with the assumed negatives
    down-weighted.

    .. math::
        \ell = -\mathbb{1}[t = 1] \log p - \lambda\,\mathbb{1}[t = 0]
        \log(1 - p) - \mathbb{1}[t = -1] \log(1 - p).

    Cole et al. set :math:`\lambda = 1/(C - 1)` (``neg_weight=None``); the
    "DW" baseline of Zhou et al. (ECCV 2022) tunes it (0.1 for VOC, COCO
    and NUS-WIDE, 0.02 for CUB). Observed negatives are not assumptions and
    keep weight 1 (single-positive data has none).

    Official scale (Cole et al.): mean over ``N x C``; with MMPretrain's head
    use ``loss_weight=1 / C``.

    Reference: E. Cole et al., "Multi-Label Learning from Single Positive
    Labels", CVPR 2021.

    Args:
        neg_weight (float, optional): Weight :math:`\lambda` of the assumed
            negatives; ``None`` means ``1 / (C - 1)`` with ``C`` read from
            ``cls_score``. Defaults to None.
        reduction (str): ``'none'``, ``'mean'`` or ``'sum'``. Defaults to
            ``'mean'``.
        loss_weight (float): Multiplier of the loss. Defaults to 1.0.
    """

    loss_fn = assume_negative_loss

    def __init__(self,
                 neg_weight: Optional[float] = None,
                 reduction: str = 'mean',
                 loss_weight: float = 1.0):
        super().__init__(reduction=reduction, loss_weight=loss_weight)
        self.neg_weight = _check_neg_weight(neg_weight)

    def loss_kwargs(self) -> Dict:
        return dict(neg_weight=self.neg_weight)


@MODELS.register_module()
class ANLSLoss(PartialLabelLoss):
    r"""Assume-negative loss with label smoothing (AN-LS), or with smoothing
    on the assumed negatives only (N-LS).

    .. math::
        \ell = -[s \log p + (1 - s) \log(1 - p)], \qquad
        s = \begin{cases} 1 - \varepsilon & t = 1 \\
        \varepsilon & t = 0 \\ \varepsilon & t = -1 \end{cases}
        \quad\text{(AN-LS)}, \qquad
        s = \begin{cases} 1 & t = 1 \\ \varepsilon & t = 0 \\ 0 & t = -1
        \end{cases} \quad\text{(N-LS)}.

    As in Cole et al.'s code, ``smoothing=0.1`` means targets 0.9 / 0.1
    (the usual two-class label smoothing would be
    :math:`1 - \varepsilon/2`, as Xie et al. write AN-LS in the LASD
    paper's appendix). AN-LS smooths every label, so it regularises the
    observed negatives too; N-LS (Zhou et al., ECCV 2022) smooths only the
    assumed negatives, so observed positives and negatives keep their hard
    targets. Selected values: AN-LS 0.1; N-LS 0.3 for VOC, 0.1 for COCO,
    NUS-WIDE and CUB.

    Official scale (Cole et al.): mean over ``N x C``; with MMPretrain's head
    use ``loss_weight=1 / C``.

    Reference: E. Cole et al., "Multi-Label Learning from Single Positive
    Labels", CVPR 2021; D. Zhou et al., "Acknowledging the Unknown for
    Multi-label Learning with Single Positive Labels", ECCV 2022 (N-LS).

    Args:
        smoothing (float): :math:`\varepsilon` in ``[0, 0.5]``. Defaults to
            0.1.
        negatives_only (bool): N-LS instead of AN-LS. Defaults to False.
        reduction (str): ``'none'``, ``'mean'`` or ``'sum'``. Defaults to
            ``'mean'``.
        loss_weight (float): Multiplier of the loss. Defaults to 1.0.
    """

    loss_fn = assume_negative_loss

    def __init__(self,
                 smoothing: float = 0.1,
                 negatives_only: bool = False,
                 reduction: str = 'mean',
                 loss_weight: float = 1.0):
        super().__init__(reduction=reduction, loss_weight=loss_weight)
        self.smoothing = _check_smoothing(smoothing)
        self.negatives_only = bool(negatives_only)

    def loss_kwargs(self) -> Dict:
        return dict(
            smoothing=self.smoothing, negatives_only=self.negatives_only)


@MODELS.register_module()
class NegativeMSELoss(PartialLabelLoss):
    r"""BCE on positives and squared error on negatives (MSE⁻).

    .. math::
        \ell = -\mathbb{1}[t = 1] \log p + \mathbb{1}[t \ne 1]\, p^2.

    The "MSE⁻" row of the Hill paper's ablation (Table VI): BCE with the
    negative part replaced by the mean squared error :math:`(p - 0)^2`, i.e.
    the Hill loss :math:`(\lambda - p) p^2` without its re-weighting.
    Unannotated labels and observed negatives are both negatives.

    Official scale (the Hill code): sum over ``N x C``; ``reduction='sum'``
    reproduces it, also inside MMPretrain's head.

    Reference: Y. Zhang et al., "Simple and Robust Loss Design for
    Multi-Label Learning with Missing Labels", arXiv:2112.07368.

    Args:
        reduction (str): ``'none'``, ``'mean'`` or ``'sum'``. Defaults to
            ``'mean'``.
        loss_weight (float): Multiplier of the loss. Defaults to 1.0.
    """

    loss_fn = negative_mse_loss
