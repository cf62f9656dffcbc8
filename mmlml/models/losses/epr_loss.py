"""Expected positive regularisation (EPR), Cole et al., CVPR 2021."""
import torch
from torch import Tensor

from mmlml.registry import MODELS
from mmlml.utils.hyperparameters import (REQUIRED, Real, check_settings,
                                         hyperparameters_of)
from .base import PartialLabelLoss, partial_label_loss
from .utils import by_state, focal_negative, focal_positive

__all__ = ['expected_positive_penalty', 'epr_loss', 'EPRLoss']


def expected_positive_penalty(prob: Tensor,
                              expected_positives: float) -> Tensor:
    r"""EPR's regulariser scaled as in the official code,
    :math:`R / C^2 = \big(\frac{1}{N}\sum_{n,c} p_{nc} - k\big)^2 / C^2`."""
    num_classes = prob.size(1)
    return (prob.sum(dim=1).mean() - expected_positives).pow(2) / \
        num_classes**2


@partial_label_loss(
    expected_positives=Real(
        low=0,
        low_open=True,
        hint='the mean number of positive labels per image in the fully '
        'labelled training set (Cole et al.: 1.5 VOC, 2.9 COCO, 1.9 '
        'NUS-WIDE, 31.4 CUB)'))
def epr_loss(cls_score: Tensor, target: Tensor,
             expected_positives: float) -> Tensor:
    r"""Observed labels' log-loss plus the expected positive regulariser.

    .. math::
        \ell_{nc} = -\mathbb{1}[t_{nc} = 1] \log p_{nc}
        - \mathbb{1}[t_{nc} = -1] \log(1 - p_{nc}) + \frac{R}{C^2},
        \qquad R = \Big(\frac{1}{N}\sum_{n} \sum_{c} p_{nc} - k\Big)^2.

    Unannotated labels get no log-loss. :math:`R` is one number per batch;
    each of the ``N x C`` entries carries the same share :math:`R / C^2`,
    so that the mean over ``N x C`` is exactly Cole et al.'s
    ``mean(log-loss) + R / C^2``, the sum is ``N C`` times it, and
    MMPretrain's head (sum / ``N``) gives ``C`` times it. ``weight``
    scales these shares too (the batch estimate inside :math:`R` is
    unweighted).

    Args:
        cls_score (Tensor): Logits ``(N, C)``.
        target (Tensor): Tri-state target ``(N, C)`` or indices ``(N,)``.
        expected_positives (float): :math:`k`, the expected number of
            positives per image, in ``(0, C]``.
        weight, reduction, avg_factor: See
            :func:`~.utils.reduce_loss`.
    """
    num_samples, num_classes = cls_score.shape
    if expected_positives > num_classes:
        raise ValueError(f'expected_positives ({expected_positives}) '
                         f'exceeds the number of classes ({num_classes})')
    observed = by_state(target, focal_positive(cls_score), 0.0,
                        focal_negative(cls_score))
    if num_samples == 0:
        return observed
    return observed + expected_positive_penalty(
        torch.sigmoid(cls_score), expected_positives)


@MODELS.register_module()
class EPRLoss(PartialLabelLoss):
    r"""Expected positive regularisation (EPR): learn from the observed
    labels only and keep the batch's mean number of predicted positives
    near :math:`k`.

    .. math::
        L = \frac{1}{NC} \sum_{n,c} \big(-\mathbb{1}[t_{nc} = 1] \log p_{nc}
        - \mathbb{1}[t_{nc} = -1] \log(1 - p_{nc})\big)
        + \frac{1}{C^2}\Big(\frac{1}{N}\sum_{n,c} p_{nc} - k\Big)^2.

    This is the official value (Cole et al.'s code: log-loss averaged over
    ``N x C`` plus the regulariser, which is *not* averaged again), obtained
    with ``reduction='mean'`` and no ``avg_factor``. The regulariser is
    spread evenly over the ``N x C`` entries (see :func:`epr_loss`), so
    ``reduction='none'`` still returns an ``(N, C)`` matrix whose mean is
    :math:`L`. With MMPretrain's head (``avg_factor=N``) the loss is
    :math:`C L`: use ``loss_weight=1 / C`` to reproduce :math:`L`. Observed
    negatives (absent in single-positive data) get :math:`-\log(1 - p)`.
    The code uses :math:`-\log(p + 10^{-5})`; the stable form here differs
    by at most about ``1e-5 / p``.

    Reference: E. Cole et al., "Multi-Label Learning from Single Positive
    Labels", CVPR 2021.

    Args:
        expected_positives (float): :math:`k`, the mean number of positives
            per image of the fully labelled training set (1.5 VOC, 2.9 COCO,
            1.9 NUS-WIDE, 31.4 CUB). Required.
        **kwargs: :class:`~.base.PartialLabelLoss`'s ``reduction`` and
            ``loss_weight``, passed on to it.
    """

    loss_fn = epr_loss
    hyperparameters = hyperparameters_of(epr_loss)

    def __init__(self, *, expected_positives: float = REQUIRED, **kwargs):
        super().__init__(**kwargs)
        self.expected_positives = expected_positives
        check_settings(self)
