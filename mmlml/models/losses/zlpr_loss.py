"""ZLPR loss.

Su et al., "ZLPR: A Novel Loss for Multi-label Classification", 2022: the
OPML loss of :mod:`.opml_loss` with both constants 1.
"""
from typing import Dict, Optional

from torch import Tensor

from mmlml.registry import MODELS
from .base import PartialLabelLoss
from .opml_loss import opml_loss

__all__ = ['ZLPRLoss', 'zlpr_loss']


def zlpr_loss(cls_score: Tensor,
              target: Tensor,
              weight: Optional[Tensor] = None,
              reduction: str = 'mean',
              avg_factor: Optional[float] = None) -> Tensor:
    """ZLPR loss, functional form: :func:`opml_loss` with ``a = b = 1``
    (see :class:`ZLPRLoss`)."""
    return opml_loss(
        cls_score,
        target,
        weight=weight,
        reduction=reduction,
        avg_factor=avg_factor)


@MODELS.register_module()
class ZLPRLoss(PartialLabelLoss):
    r"""ZLPR loss of Su et al. (2022): :class:`OPMLLoss` with
    ``a = b = 1``,

    .. math::
        L = \log\Big(1 + \sum_{i \in P} e^{-s_i}\Big)
          + \log\Big(1 + \sum_{j \notin P} e^{s_j}\Big),

    per sample, with the same handling of unannotated labels, observed
    negatives, soft targets and weights.

    Args:
        reduction (str), loss_weight (float): See
            :class:`~.base.PartialLabelLoss`.
    """

    loss_fn = opml_loss
    a = b = 1.0  # OPML's constants, fixed

    def loss_kwargs(self, cls_score: Tensor) -> Dict:
        return dict(a=self.a, b=self.b)
