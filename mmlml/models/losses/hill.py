"""Hill loss and focal margin loss.

Zhang, Y., Cheng, Y., Huang, X., Wen, F., Feng, R., Li, Y. and Guo, Y.
"Simple and Robust Loss Design for Multi-Label Learning with Missing
Labels". Official code: https://github.com/xinyu1205/robust-loss-mlml.

The self-paced loss correction of the same paper is in :mod:`.splc`.
"""
from typing import Dict

import torch
from torch import Tensor

from mmlml.registry import MODELS
from .base import POSITIVE, PartialLabelLoss, check_hparam, partial_label_loss
from .terms import negative_term, positive_term

__all__ = ['hill_loss', 'focal_margin_loss', 'HillLoss', 'FocalMarginLoss']


def _check_focal_margin(margin: float, gamma: float) -> None:
    check_hparam('margin', margin, low=0)
    check_hparam('gamma', gamma, low=0)


@partial_label_loss
def hill_loss(cls_score: Tensor,
              target: Tensor,
              lamb: float = 1.5,
              margin: float = 1.0,
              gamma: float = 2.0) -> Tensor:
    r"""Hill loss, functional form (see :class:`HillLoss`).

    Args:
        cls_score (Tensor): Logits ``(N, C)``.
        target (Tensor): Tri-state target ``(N, C)`` (1 observed positive,
            0 unannotated, -1 observed negative) or class indices ``(N,)``.
        lamb (float): :math:`\lambda` of the negative weight
            :math:`\lambda - p`, at least 1. Defaults to 1.5.
        margin (float): Logit margin :math:`m \ge 0` of the positive term.
            Defaults to 1.0.
        gamma (float): Focusing parameter of the positive term.
            Defaults to 2.0.
        weight (Tensor, optional): ``(N,)`` or ``(N, C)`` weights.
        reduction (str): ``'none'``, ``'mean'`` or ``'sum'``.
            Defaults to ``'mean'``.
        avg_factor (float, optional): Divisor of the sum for ``'mean'``.

    Returns:
        Tensor: The reduced loss, or the ``(N, C)`` matrix for ``'none'``.
    """
    check_hparam('lamb', lamb, low=1)
    _check_focal_margin(margin, gamma)
    prob = torch.sigmoid(cls_score)
    return torch.where(target == POSITIVE,
                       positive_term(cls_score, gamma, margin),
                       (lamb - prob) * prob.square())


@partial_label_loss
def focal_margin_loss(cls_score: Tensor,
                      target: Tensor,
                      margin: float = 1.0,
                      gamma: float = 2.0,
                      gamma_neg: float = 0.0) -> Tensor:
    r"""Focal margin loss, functional form (see :class:`FocalMarginLoss`).

    Args:
        cls_score (Tensor): Logits ``(N, C)``.
        target (Tensor): Tri-state target ``(N, C)`` or class indices
            ``(N,)``.
        margin (float): Logit margin :math:`m \ge 0`. Defaults to 1.0.
        gamma (float): Focusing parameter of the positive term.
            Defaults to 2.0.
        gamma_neg (float): Focusing parameter of the negative term; 0 is
            BCE. Defaults to 0.0.
        weight (Tensor, optional): ``(N,)`` or ``(N, C)`` weights.
        reduction (str): ``'none'``, ``'mean'`` or ``'sum'``.
            Defaults to ``'mean'``.
        avg_factor (float, optional): Divisor of the sum for ``'mean'``.

    Returns:
        Tensor: The reduced loss, or the ``(N, C)`` matrix for ``'none'``.
    """
    _check_focal_margin(margin, gamma)
    check_hparam('gamma_neg', gamma_neg, low=0)
    return torch.where(target == POSITIVE,
                       positive_term(cls_score, gamma, margin),
                       negative_term(cls_score, gamma_neg))


@MODELS.register_module()
class HillLoss(PartialLabelLoss):
    r"""Hill loss of Zhang et al., "Simple and Robust Loss Design for
    Multi-Label Learning with Missing Labels" (eq. 5 and 11).

    Observed positives take the focal margin loss, every other label
    (unannotated and observed negatives alike) the Hill loss, a re-weighted
    squared error that gives little weight to confident predictions, which
    are likely missing positives:

    .. math::
        \ell(x, t) =
        \begin{cases}
            -(1 - p_m)^{\gamma} \log p_m, \quad p_m = \sigma(x - m)
                & t = 1, \\
            (\lambda - p)\, p^2, \quad p = \sigma(x) & t \in \{0, -1\}.
        \end{cases}

    :math:`\lambda = 1.5` makes the second derivative of the negative term
    vanish at :math:`p = 0.5`. The loss is stateless.

    Note:
        Scale: the official implementation sums over the N x C matrix. With
        MMPretrain's head (``avg_factor=N``) the default ``'mean'`` gives
        that sum divided by the batch size; ``reduction='sum'`` gives the
        official value. The official code computes ``log(sigmoid(x - m))``,
        which is ``-inf`` for very negative logits; here ``logsigmoid`` keeps
        it finite (identical values otherwise).

    Args:
        lamb (float): :math:`\lambda`, at least 1 so that the loss is
            non-negative. Defaults to 1.5.
        margin (float): Logit margin :math:`m \ge 0` of the positive term
            (the paper recommends 0.5 to 1.0). Defaults to 1.0.
        gamma (float): Focusing parameter :math:`\gamma \ge 0` of the
            positive term. Defaults to 2.0.
        reduction (str): ``'none'``, ``'mean'`` or ``'sum'``.
            Defaults to ``'mean'``.
        loss_weight (float): Multiplier of the loss. Defaults to 1.0.

    Shape:
        - cls_score: ``(N, C)`` logits.
        - target: ``(N, C)`` in {-1, 0, 1}, or ``(N,)`` class indices.
        - output: scalar, or ``(N, C)`` with ``reduction='none'``.

    Example:
        >>> import torch
        >>> from mmlml.models.losses import HillLoss
        >>> loss = HillLoss(reduction='none')
        >>> loss(torch.tensor([[0., 1.]]), torch.tensor([[0., 1.]]))
        tensor([[0.2500, 0.1733]])
    """

    loss_fn = hill_loss

    def __init__(self,
                 lamb: float = 1.5,
                 margin: float = 1.0,
                 gamma: float = 2.0,
                 reduction: str = 'mean',
                 loss_weight: float = 1.0):
        super().__init__(reduction=reduction, loss_weight=loss_weight)
        self.lamb = check_hparam('lamb', lamb, low=1)
        self.margin = check_hparam('margin', margin, low=0)
        self.gamma = check_hparam('gamma', gamma, low=0)

    def loss_kwargs(self) -> Dict:
        return dict(lamb=self.lamb, margin=self.margin, gamma=self.gamma)


@MODELS.register_module()
class FocalMarginLoss(PartialLabelLoss):
    r"""Focal margin loss of Zhang et al., "Simple and Robust Loss Design
    for Multi-Label Learning with Missing Labels" (eq. 11).

    The focal loss of observed positives is evaluated at a logit lowered by
    a margin :math:`m`, which moves its emphasis from hard to semi-hard
    positives; every other label (unannotated and observed negatives) is a
    negative:

    .. math::
        \ell(x, t) =
        \begin{cases}
            -(1 - p_m)^{\gamma} \log p_m, \quad p_m = \sigma(x - m)
                & t = 1, \\
            -p^{\gamma_-} \log(1 - p), \quad p = \sigma(x)
                & t \in \{0, -1\}.
        \end{cases}

    With the default ``gamma_neg=0`` the negative term is BCE's: this is
    the "Focal margin+" row of the paper's Table VI (the positive
    term replaced, BCE otherwise). The "Focal margin" row of Table VII, the
    base of Focal margin + SPLC, has a different score; the official SPLC
    code applies the focal weight :math:`p^{\gamma}` to negatives too, so
    that row is most likely ``gamma_neg=gamma`` (= :class:`SPLCLoss` before
    its correction starts). ``margin=0`` gives the focal loss on positives.

    Note:
        Scale: the official code sums over the N x C matrix; the default
        ``'mean'`` with MMPretrain's ``avg_factor=N`` divides that sum by the
        batch size. Stateless.

    Args:
        margin (float): Logit margin :math:`m \ge 0` (the paper recommends
            0.5 to 1.0). Defaults to 1.0.
        gamma (float): Focusing parameter :math:`\gamma \ge 0` of the
            positive term. Defaults to 2.0.
        gamma_neg (float): Focusing parameter :math:`\gamma_- \ge 0` of the
            negative term. Defaults to 0.0 (BCE).
        reduction (str): ``'none'``, ``'mean'`` or ``'sum'``.
            Defaults to ``'mean'``.
        loss_weight (float): Multiplier of the loss. Defaults to 1.0.

    Shape:
        - cls_score: ``(N, C)`` logits.
        - target: ``(N, C)`` in {-1, 0, 1}, or ``(N,)`` class indices.
        - output: scalar, or ``(N, C)`` with ``reduction='none'``.

    Example:
        >>> import torch
        >>> from mmlml.models.losses import FocalMarginLoss
        >>> loss = FocalMarginLoss(reduction='none')
        >>> loss(torch.tensor([[0., 1.]]), torch.tensor([[0., 1.]]))
        tensor([[0.6931, 0.1733]])
    """

    loss_fn = focal_margin_loss

    def __init__(self,
                 margin: float = 1.0,
                 gamma: float = 2.0,
                 gamma_neg: float = 0.0,
                 reduction: str = 'mean',
                 loss_weight: float = 1.0):
        super().__init__(reduction=reduction, loss_weight=loss_weight)
        self.margin = check_hparam('margin', margin, low=0)
        self.gamma = check_hparam('gamma', gamma, low=0)
        self.gamma_neg = check_hparam('gamma_neg', gamma_neg, low=0)

    def loss_kwargs(self) -> Dict:
        return dict(
            margin=self.margin, gamma=self.gamma, gamma_neg=self.gamma_neg)
