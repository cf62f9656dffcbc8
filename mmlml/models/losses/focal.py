"""Asymmetric-focal baselines: focal loss and ASL with unannotated labels
assumed negative.

Both are :func:`asymmetric_focal_loss`: a focal positive term and a focal,
optionally probability-shifted negative term, each with a constant weight.
"""
from typing import Dict, Optional

import torch
from torch import Tensor

from mmlml.registry import MODELS
from .base import POSITIVE, PartialLabelLoss, check_hparam, partial_label_loss
from .terms import negative_term, positive_term

__all__ = [
    'asymmetric_focal_loss', 'PartialFocalLoss', 'PartialAsymmetricLoss'
]


def _check_gamma(name: str, gamma: float) -> float:
    return check_hparam(name, gamma, low=0)


def _check_clip(clip: float) -> float:
    return check_hparam('clip', clip, low=0, high=1, high_open=True)


def _check_alpha(alpha: Optional[float]) -> Optional[float]:
    if alpha is None:
        return None
    return check_hparam('alpha', alpha, low=0, high=1)


@partial_label_loss
def asymmetric_focal_loss(cls_score: Tensor,
                          target: Tensor,
                          gamma_pos: float = 0.0,
                          gamma_neg: float = 0.0,
                          clip: float = 0.0,
                          pos_weight: float = 1.0,
                          neg_weight: float = 1.0,
                          detach_focal_weight: bool = False) -> Tensor:
    r"""Asymmetric focal loss with every non-positive label a negative.

    .. math::
        \ell = \begin{cases}
        -w_+ (1 - p)^{\gamma_+} \log p & t = 1 \\
        -w_- p_c^{\gamma_-} \log(1 - p_c) & t \in \{0, -1\}
        \end{cases}, \qquad p_c = \max(p - c, 0).

    ``gamma_pos = gamma_neg = clip = 0`` with unit weights is the AN loss.

    Args:
        cls_score (Tensor): Logits ``(N, C)``.
        target (Tensor): Tri-state target ``(N, C)`` or indices ``(N,)``.
        gamma_pos (float): Focusing parameter :math:`\gamma_+` of positives.
            Defaults to 0.0.
        gamma_neg (float): Focusing parameter :math:`\gamma_-` of negatives.
            Defaults to 0.0.
        clip (float): Probability shift :math:`c` of negatives in
            ``[0, 1)``. Defaults to 0.0.
        pos_weight (float): Weight :math:`w_+` of positives. Defaults to
            1.0.
        neg_weight (float): Weight :math:`w_-` of negatives. Defaults to
            1.0.
        detach_focal_weight (bool): Treat the focal weights as constants in
            the backward pass. Defaults to False.
        weight (Tensor, optional): ``(N,)`` or ``(N, C)`` weights.
        reduction (str): ``'none'``, ``'mean'`` or ``'sum'``. Defaults to
            ``'mean'``.
        avg_factor (float, optional): Divisor for ``'mean'``.

    Returns:
        Tensor: The reduced loss, or the ``(N, C)`` matrix with
        ``reduction='none'``.
    """
    gamma_pos = _check_gamma('gamma_pos', gamma_pos)
    gamma_neg = _check_gamma('gamma_neg', gamma_neg)
    clip = _check_clip(clip)
    loss_pos = positive_term(
        cls_score, gamma_pos, detach_focal_weight=detach_focal_weight)
    loss_neg = negative_term(
        cls_score, gamma_neg, clip, detach_focal_weight=detach_focal_weight)
    return torch.where(target == POSITIVE, pos_weight * loss_pos,
                       neg_weight * loss_neg)


@MODELS.register_module()
class PartialFocalLoss(PartialLabelLoss):
    r"""Sigmoid focal loss with unannotated labels assumed negative.

    .. math::
        \ell = \begin{cases}
        -\alpha (1 - p)^{\gamma} \log p & t = 1 \\
        -(1 - \alpha)\, p^{\gamma} \log(1 - p) & t \in \{0, -1\}
        \end{cases}

    :math:`\alpha` weighs positives and :math:`1 - \alpha` negatives, as in
    RetinaNet (Lin et al.) and torchvision's ``sigmoid_focal_loss``.
    Zhou et al. (ECCV 2022) tuned :math:`\alpha \in \{0.25, 0.5, 0.75\}`
    with :math:`\gamma = 2` and chose 0.75 on all four single-positive
    benchmarks, hence the default. ``alpha=None`` drops the weights (the
    "FAN" loss of the LASD paper), which is twice ``alpha=0.5``. The focal
    weights are differentiated through, as in RetinaNet.

    Scale: Zhou et al. ran it in Cole et al.'s framework, i.e. mean over
    ``N x C``; with MMPretrain's head (``avg_factor=N``) use
    ``loss_weight=1 / C`` for that value.

    Reference: T.-Y. Lin et al., "Focal Loss for Dense Object Detection",
    ICCV 2017.

    Args:
        gamma (float): Focusing parameter :math:`\gamma`. Defaults to 2.0.
        alpha (float, optional): Balance :math:`\alpha` in ``[0, 1]``, or
            None for no weighting. Defaults to 0.75.
        reduction (str): ``'none'``, ``'mean'`` or ``'sum'``. Defaults to
            ``'mean'``.
        loss_weight (float): Multiplier of the loss. Defaults to 1.0.
    """

    loss_fn = asymmetric_focal_loss

    def __init__(self,
                 gamma: float = 2.0,
                 alpha: Optional[float] = 0.75,
                 reduction: str = 'mean',
                 loss_weight: float = 1.0):
        super().__init__(reduction=reduction, loss_weight=loss_weight)
        self.gamma = _check_gamma('gamma', gamma)
        self.alpha = _check_alpha(alpha)

    def extra_repr(self) -> str:
        return (f'reduction={self.reduction!r}, '
                f'loss_weight={self.loss_weight}, gamma={self.gamma}, '
                f'alpha={self.alpha}')

    def loss_kwargs(self) -> Dict:
        pos_weight, neg_weight = ((1.0, 1.0) if self.alpha is None else
                                  (self.alpha, 1.0 - self.alpha))
        return dict(
            gamma_pos=self.gamma,
            gamma_neg=self.gamma,
            pos_weight=pos_weight,
            neg_weight=neg_weight)


@MODELS.register_module()
class PartialAsymmetricLoss(PartialLabelLoss):
    r"""Asymmetric loss (ASL) with unannotated labels assumed negative.

    .. math::
        \ell = \begin{cases}
        -(1 - p)^{\gamma_+} \log p & t = 1 \\
        -p_c^{\gamma_-} \log(1 - p_c) & t \in \{0, -1\}
        \end{cases}, \qquad p_c = \max(p - c, 0).

    The defaults are the official configuration (:math:`\gamma_+ = 0`,
    :math:`\gamma_- = 4`, :math:`c = 0.05`, focal weights excluded from the
    gradient). The probability shift :math:`c` is what the LASD paper calls
    "ASL-PS"; its plain "ASL" is ``clip=0``. Zhou et al. (ECCV 2022) tuned
    :math:`\gamma_- \in \{1, 2\}`, :math:`c \in \{0, 0.05, 0.2\}` and chose
    :math:`\gamma_- = 2, c = 0.2` (VOC, COCO, NUS-WIDE) and
    :math:`\gamma_- = 1, c = 0` (CUB).

    Official scale: sum over ``N x C``; ``reduction='sum'`` reproduces it,
    also inside MMPretrain's head. The official code clamps probabilities at
    ``1e-8`` before the log; the log-sigmoid form here agrees up to rounding
    wherever that clamp is inactive (:math:`|x| < 18`) and stays finite
    beyond.

    Reference: T. Ridnik et al., "Asymmetric Loss For Multi-Label
    Classification", ICCV 2021.

    Args:
        gamma_pos (float): Focusing parameter :math:`\gamma_+` of positives.
            Defaults to 0.0.
        gamma_neg (float): Focusing parameter :math:`\gamma_-` of negatives.
            Defaults to 4.0.
        clip (float): Probability shift :math:`c` in ``[0, 1)``. Defaults
            to 0.05.
        detach_focal_weight (bool): Exclude the focal weights from the
            gradient, as the official training does. Defaults to True.
        reduction (str): ``'none'``, ``'mean'`` or ``'sum'``. Defaults to
            ``'mean'``.
        loss_weight (float): Multiplier of the loss. Defaults to 1.0.
    """

    loss_fn = asymmetric_focal_loss

    def __init__(self,
                 gamma_pos: float = 0.0,
                 gamma_neg: float = 4.0,
                 clip: float = 0.05,
                 detach_focal_weight: bool = True,
                 reduction: str = 'mean',
                 loss_weight: float = 1.0):
        super().__init__(reduction=reduction, loss_weight=loss_weight)
        self.gamma_pos = _check_gamma('gamma_pos', gamma_pos)
        self.gamma_neg = _check_gamma('gamma_neg', gamma_neg)
        self.clip = _check_clip(clip)
        self.detach_focal_weight = bool(detach_focal_weight)

    def loss_kwargs(self) -> Dict:
        return dict(
            gamma_pos=self.gamma_pos,
            gamma_neg=self.gamma_neg,
            clip=self.clip,
            detach_focal_weight=self.detach_focal_weight)
