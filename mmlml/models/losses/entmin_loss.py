"""Entropy minimisation on unannotated labels (EntMin)."""
from torch import Tensor

from mmlml.registry import MODELS
from mmlml.utils.hyperparameters import (REQUIRED, Real, check_settings,
                                         hyperparameters_of)
from .base import PartialLabelLoss, partial_label_loss
from .utils import by_state, entropy, focal_negative, focal_positive

__all__ = ['entmin_loss', 'EntMinLoss']


@partial_label_loss(
    alpha=Real(
        low=0,
        hint='the weight of the entropy term (Zhou et al. selected 0.01 VOC, '
        '0.9 COCO, 0.4 NUS-WIDE, 0.4 CUB)'))
def entmin_loss(cls_score: Tensor, target: Tensor, alpha: float) -> Tensor:
    """Entropy minimisation, functional form: the formula and the
    arguments are :class:`EntMinLoss`'s (``alpha`` is required), plus
    ``weight``, ``reduction`` and ``avg_factor`` as in MMPretrain's
    losses."""
    return by_state(target, focal_positive(cls_score),
                    alpha * entropy(cls_score), focal_negative(cls_score))


@MODELS.register_module()
class EntMinLoss(PartialLabelLoss):
    r"""Entropy minimisation (EntMin) on unannotated labels.

    .. math::
        \ell = -\mathbb{1}[t = 1] \log p + \alpha\,\mathbb{1}[t = 0]\, H(p)
        - \mathbb{1}[t = -1] \log(1 - p).

    Grandvalet and Bengio's semi-supervised regulariser, applied to the
    unannotated labels: it pushes their predictions to 0 or 1, whichever is
    nearer. Zhou et al. (ECCV 2022) report it as the counter-example of
    their entropy *maximisation* (EM) loss, whose unannotated term is
    :math:`-\alpha H(p)`; it trains poorly and unstably with single
    positive labels. Observed negatives are known, so they get the log-loss
    and no entropy term. ``alpha`` has no default: the selected values span
    two orders of magnitude (0.01 VOC, 0.9 COCO, 0.4 NUS-WIDE, 0.4 CUB).

    Scale: Zhou et al. compare it within Cole et al.'s framework, which
    averages over ``N x C``; with MMPretrain's head (``avg_factor=N``) use
    ``loss_weight=1 / C`` for that value. That framework takes logs of
    :math:`p + 10^{-5}`; the stable form here differs by at most about
    ``1e-5 / p``.

    Reference: Y. Grandvalet and Y. Bengio, "Semi-supervised Learning by
    Entropy Minimization", NeurIPS 2004; D. Zhou et al., "Acknowledging the
    Unknown for Multi-label Learning with Single Positive Labels", ECCV 2022.

    Args:
        alpha (float): Weight :math:`\alpha \ge 0` of the entropy. Required.
        **kwargs: :class:`~.base.PartialLabelLoss`'s ``reduction`` and
            ``loss_weight``, passed on to it.
    """

    loss_fn = entmin_loss
    hyperparameters = hyperparameters_of(entmin_loss)

    def __init__(self, *, alpha: float = REQUIRED, **kwargs):
        super().__init__(**kwargs)
        self.alpha = alpha
        check_settings(self)
