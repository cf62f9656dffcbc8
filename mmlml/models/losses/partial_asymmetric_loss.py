"""Asymmetric loss (ASL) with unannotated labels assumed negative, and the
asymmetric focal loss it shares with the focal baseline
(:mod:`.partial_focal_loss`)."""

import torch
from torch import Tensor

from mmlml.registry import MODELS
from mmlml.utils.hyperparameters import (Flag, Real, check_settings,
                                         hyperparameters_of)
from .base import PartialLabelLoss, partial_label_loss
from .utils import POSITIVE, focal_negative, focal_positive

__all__ = ['asymmetric_focal_loss', 'PartialAsymmetricLoss']


@partial_label_loss(
    gamma_pos=Real(0.0, low=0),
    gamma_neg=Real(0.0, low=0),
    clip=Real(0.0, low=0, high=1, high_open=True),
    pos_weight=Real(1.0, low=0),
    neg_weight=Real(1.0, low=0),
    detach_focal_weight=Flag(False))
def asymmetric_focal_loss(cls_score: Tensor, target: Tensor, gamma_pos: float,
                          gamma_neg: float, clip: float, pos_weight: float,
                          neg_weight: float,
                          detach_focal_weight: bool) -> Tensor:
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
        weight, reduction, avg_factor: See
            :func:`~.utils.reduce_loss`.
    """
    positive = focal_positive(
        cls_score, gamma_pos, detach_focal_weight=detach_focal_weight)
    negative = focal_negative(cls_score, gamma_neg, clip, detach_focal_weight)
    return torch.where(target == POSITIVE, pos_weight * positive,
                       neg_weight * negative)


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
        **kwargs: :class:`~.base.PartialLabelLoss`'s ``reduction`` and
            ``loss_weight``, passed on to it.
    """

    loss_fn = asymmetric_focal_loss
    hyperparameters = hyperparameters_of(
        asymmetric_focal_loss,
        'gamma_pos',
        gamma_neg=4.0,
        clip=0.05,
        detach_focal_weight=True)

    def __init__(self,
                 *,
                 gamma_pos: float = 0.0,
                 gamma_neg: float = 4.0,
                 clip: float = 0.05,
                 detach_focal_weight: bool = True,
                 **kwargs):
        super().__init__(**kwargs)
        self.gamma_pos = gamma_pos
        self.gamma_neg = gamma_neg
        self.clip = clip
        self.detach_focal_weight = detach_focal_weight
        check_settings(self)
