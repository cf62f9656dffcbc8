"""BCE on positives, squared error on negatives (MSE⁻), the ablation of
the Hill paper (Table VI)."""
import torch
from torch import Tensor

from mmlml.registry import MODELS
from .base import PartialLabelLoss, partial_label_loss
from .utils import POSITIVE, focal_positive

__all__ = ['negative_mse_loss', 'NegativeMSELoss']


@partial_label_loss()
def negative_mse_loss(cls_score: Tensor, target: Tensor) -> Tensor:
    """MSE⁻, functional form: the formula is :class:`NegativeMSELoss`'s;
    ``weight``, ``reduction`` and ``avg_factor`` as in MMPretrain's
    losses."""
    return torch.where(target == POSITIVE, focal_positive(cls_score),
                       torch.sigmoid(cls_score).square())


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
        reduction (str), loss_weight (float): See
            :class:`~.base.PartialLabelLoss`.
    """

    loss_fn = negative_mse_loss
