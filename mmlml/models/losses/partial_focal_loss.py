"""Sigmoid focal loss with unannotated labels assumed negative."""
from typing import Dict, Optional

from torch import Tensor

from mmlml.registry import MODELS
from mmlml.utils.hyperparameters import Real, check_settings
from .base import PartialLabelLoss
from .partial_asymmetric_loss import asymmetric_focal_loss

__all__ = ['PartialFocalLoss']


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
        **kwargs: :class:`~.base.PartialLabelLoss`'s ``reduction`` and
            ``loss_weight``, passed on to it.
    """

    loss_fn = asymmetric_focal_loss
    hyperparameters = dict(
        gamma=Real(2.0, low=0), alpha=Real(0.75, low=0, high=1, optional=True))

    def __init__(self,
                 *,
                 gamma: float = 2.0,
                 alpha: Optional[float] = 0.75,
                 **kwargs):
        super().__init__(**kwargs)
        self.gamma = gamma
        self.alpha = alpha
        check_settings(self)

    def loss_kwargs(self, cls_score: Tensor) -> Dict:
        pos_weight, neg_weight = ((1.0, 1.0) if self.alpha is None else
                                  (self.alpha, 1.0 - self.alpha))
        return dict(
            gamma_pos=self.gamma,
            gamma_neg=self.gamma,
            pos_weight=pos_weight,
            neg_weight=neg_weight,
            clip=0.0,
            detach_focal_weight=False)
