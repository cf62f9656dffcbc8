"""Entropy-maximisation (EM) loss.

Zhou et al., "Acknowledging the Unknown for Multi-label Learning with Single
Positive Labels", ECCV 2022 (official code: SPML-AckTheUnknown).
"""
from torch import Tensor

from mmlml.registry import MODELS
from mmlml.utils.hyperparameters import (Real, check_settings,
                                         hyperparameters_of)
from .base import PartialLabelLoss, partial_label_loss
from .utils import by_state, entropy, focal_negative, focal_positive

__all__ = ['EMLoss', 'em_loss']


@partial_label_loss(alpha=Real(0.1, low=0))
def em_loss(cls_score: Tensor, target: Tensor, alpha: float) -> Tensor:
    """Entropy-maximisation loss, functional form: the formula, the
    arguments and their defaults are :class:`EMLoss`'s, plus ``weight``,
    ``reduction`` and ``avg_factor`` as in MMPretrain's losses."""
    return by_state(target, focal_positive(cls_score),
                    -alpha * entropy(cls_score), focal_negative(cls_score))


@MODELS.register_module()
class EMLoss(PartialLabelLoss):
    r"""Entropy-maximisation (EM) loss of Zhou et al. (ECCV 2022).

    Observed positives get the cross-entropy, unannotated labels are
    *acknowledged as unknown*: the loss maximises the entropy of their
    predictions instead of pushing them to 0 (paper Eq. 3):

    .. math::
        \ell = \begin{cases}
        -\log p & t = 1 \text{ (observed positive)},\\
        -\alpha\,H(p) & t = 0 \text{ (unannotated)},\\
        -\log(1 - p) & t = -1 \text{ (observed negative)},
        \end{cases}

    with :math:`p = \sigma(x)` and
    :math:`H(p) = -p\log p - (1 - p)\log(1 - p)` in nats. The loss of an
    unannotated label is negative (at least :math:`-\alpha\log 2`).

    Paper vs official code:

    * Observed negatives: in the paper ``-1`` marks APL's soft negative
      pseudo-labels (Eq. 8) and the official EM code refuses any ``-1``; a
      label observed as negative in the data gets the plain
      :math:`-\log(1 - p)` here (no entropy term, no pseudo-label).
    * The official code writes :math:`\log(p + 10^{-5})`; we compute every
      log from the logit (``logsigmoid``), exact and finite for any logit.
      The two differ by about :math:`10^{-5}/p`: negligible unless a
      probability falls below about 1e-3 (the official
      :math:`-\log p` saturates at :math:`\log 10^5 \approx 11.5`).
    * Scale: the paper's Eq. 3 divides by ``C`` and the official code
      averages over the ``N x C`` elements; the stock head divides the sum
      by ``N`` (``avg_factor=N``), so ``loss_weight = 1 / C`` reproduces
      the official magnitudes (and the paper's learning rates).

    Paper's ``alpha`` (Table 6): 0.2 (VOC), 0.1 (COCO), 0.1 (NUS),
    0.01 (CUB).

    Args:
        alpha (float): Strength of the entropy maximisation, ``>= 0``.
            Defaults to 0.1.
        **kwargs: :class:`~.base.PartialLabelLoss`'s ``reduction`` and
            ``loss_weight``, passed on to it.

    Example:
        >>> import torch
        >>> from mmlml.models.losses import EMLoss
        >>> loss = EMLoss(alpha=0.2)
        >>> value = loss(torch.randn(2, 5), torch.tensor([1, 3]))
    """

    loss_fn = em_loss
    hyperparameters = hyperparameters_of(em_loss)

    def __init__(self, *, alpha: float = 0.1, **kwargs):
        super().__init__(**kwargs)
        self.alpha = alpha
        check_settings(self)
