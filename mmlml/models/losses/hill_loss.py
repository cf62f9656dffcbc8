"""Hill loss.

Zhang, Y., Cheng, Y., Huang, X., Wen, F., Feng, R., Li, Y. and Guo, Y.
"Simple and Robust Loss Design for Multi-Label Learning with Missing
Labels". Official code: https://github.com/xinyu1205/robust-loss-mlml.

The focal margin loss and the self-paced loss correction of the same paper
are in :mod:`.focal_margin_loss` and :mod:`.splc_loss`.
"""
import torch
from torch import Tensor

from mmlml.registry import MODELS
from mmlml.utils.hyperparameters import (Real, check_settings,
                                         hyperparameters_of)
from .base import PartialLabelLoss, partial_label_loss
from .utils import POSITIVE, focal_positive

__all__ = ['hill_loss', 'HillLoss']


@partial_label_loss(
    lamb=Real(1.5, low=1), margin=Real(1.0, low=0), gamma=Real(2.0, low=0))
def hill_loss(cls_score: Tensor, target: Tensor, lamb: float, margin: float,
              gamma: float) -> Tensor:
    """Hill loss, functional form: the formula, the arguments and their
    defaults are :class:`HillLoss`'s, plus ``weight``, ``reduction`` and
    ``avg_factor`` as in MMPretrain's losses."""
    prob = torch.sigmoid(cls_score)
    return torch.where(target == POSITIVE,
                       focal_positive(cls_score, gamma, margin),
                       (lamb - prob) * prob.square())


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
        **kwargs: :class:`~.base.PartialLabelLoss`'s ``reduction`` and
            ``loss_weight``, passed on to it.

    Example:
        >>> import torch
        >>> from mmlml.models.losses import HillLoss
        >>> loss = HillLoss(reduction='none')
        >>> loss(torch.tensor([[0., 1.]]), torch.tensor([[0., 1.]]))
        tensor([[0.2500, 0.1733]])
    """

    loss_fn = hill_loss
    hyperparameters = hyperparameters_of(hill_loss)

    def __init__(self,
                 *,
                 lamb: float = 1.5,
                 margin: float = 1.0,
                 gamma: float = 2.0,
                 **kwargs):
        super().__init__(**kwargs)
        self.lamb = lamb
        self.margin = margin
        self.gamma = gamma
        check_settings(self)
