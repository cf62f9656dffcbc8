"""Weak assume negative (WAN / DW): AN with the assumed negatives
down-weighted."""
from typing import Optional

from mmlml.registry import MODELS
from mmlml.utils.hyperparameters import check_settings, hyperparameters_of
from .an_loss import assume_negative_loss
from .base import PartialLabelLoss

__all__ = ['WANLoss']


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
        **kwargs: :class:`~.base.PartialLabelLoss`'s ``reduction`` and
            ``loss_weight``, passed on to it.
    """

    loss_fn = assume_negative_loss
    hyperparameters = hyperparameters_of(assume_negative_loss, neg_weight=None)

    def __init__(self, *, neg_weight: Optional[float] = None, **kwargs):
        super().__init__(**kwargs)
        self.neg_weight = neg_weight
        check_settings(self)
