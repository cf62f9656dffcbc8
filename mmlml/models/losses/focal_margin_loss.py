"""Focal margin loss.

Zhang, Y., Cheng, Y., Huang, X., Wen, F., Feng, R., Li, Y. and Guo, Y.
"Simple and Robust Loss Design for Multi-Label Learning with Missing
Labels" (eq. 11). Official code:
https://github.com/xinyu1205/robust-loss-mlml.
"""

import torch
from torch import Tensor

from mmlml.registry import MODELS
from mmlml.utils.hyperparameters import (Real, check_settings,
                                         hyperparameters_of)
from .base import PartialLabelLoss, partial_label_loss
from .utils import POSITIVE, focal_negative, focal_positive

__all__ = ['focal_margin_loss', 'FocalMarginLoss']


@partial_label_loss(
    margin=Real(1.0, low=0),
    gamma=Real(2.0, low=0),
    gamma_neg=Real(0.0, low=0))
def focal_margin_loss(cls_score: Tensor, target: Tensor, margin: float,
                      gamma: float, gamma_neg: float) -> Tensor:
    """Focal margin loss, functional form: the formula, the arguments and
    their defaults are :class:`FocalMarginLoss`'s, plus ``weight``,
    ``reduction`` and ``avg_factor`` as in MMPretrain's losses."""
    return torch.where(target == POSITIVE,
                       focal_positive(cls_score, gamma, margin),
                       focal_negative(cls_score, gamma_neg))


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
        **kwargs: :class:`~.base.PartialLabelLoss`'s ``reduction`` and
            ``loss_weight``, passed on to it.

    Example:
        >>> import torch
        >>> from mmlml.models.losses import FocalMarginLoss
        >>> logits = torch.tensor([[0., 1.]])
        >>> FocalMarginLoss(reduction='none')(logits, torch.tensor([[0., 1.]]))
        tensor([[0.6931, 0.1733]])
    """

    loss_fn = focal_margin_loss
    hyperparameters = hyperparameters_of(focal_margin_loss)

    def __init__(self,
                 *,
                 margin: float = 1.0,
                 gamma: float = 2.0,
                 gamma_neg: float = 0.0,
                 **kwargs):
        super().__init__(**kwargs)
        self.margin = margin
        self.gamma = gamma
        self.gamma_neg = gamma_neg
        check_settings(self)
