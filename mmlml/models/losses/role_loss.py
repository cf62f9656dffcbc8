"""Regularized online label estimation (ROLE), Cole et al., CVPR 2021."""
from typing import Any, Dict

import torch
from torch import Tensor

from mmlml.registry import MODELS
from mmlml.utils.hyperparameters import hyperparameters_of
from .base import partial_label_loss
from .epr_loss import EPRLoss, epr_loss, expected_positive_penalty
from .utils import (by_state, check_state_tensor, focal_negative,
                    focal_positive, soft_bce)

__all__ = ['ROLELoss', 'role_loss']


@partial_label_loss(
    expected_positives=epr_loss.hyperparameters['expected_positives'])
def role_loss(cls_score: Tensor, target: Tensor, expected_positives: float,
              label_estimates: Tensor) -> Tensor:
    r"""ROLE loss, functional form: the formula and the arguments are
    :class:`ROLELoss`'s, plus ``label_estimates`` (``(N, C)`` logits of the
    label estimator for the batch), ``weight``, ``reduction`` and
    ``avg_factor`` as in MMPretrain's losses.

    The regulariser term, one number per batch, is added to each of the
    ``N x C`` entries (as in :func:`~.epr_loss.epr_loss`), so that the
    mean of the returned matrix is the official loss. ``weight`` scales
    these shares too (the batch means inside the regulariser are
    unweighted).
    """
    estimates = check_state_tensor('label_estimates', label_estimates,
                                   cls_score, ' of logits')
    num_samples, num_classes = cls_score.shape
    if expected_positives > num_classes:
        raise ValueError(f'expected_positives ({expected_positives}) '
                         f'exceeds the number of classes ({num_classes})')
    prob, estimated = torch.sigmoid(cls_score), torch.sigmoid(estimates)
    # Each half fits the other's detached probabilities; its observed
    # labels add their log-loss.
    loss = _role_half(cls_score, target, estimated.detach()) + _role_half(
        estimates, target, prob.detach())
    if num_samples == 0:
        return loss
    penalty = expected_positive_penalty(prob, expected_positives) + \
        expected_positive_penalty(estimated, expected_positives)
    return loss + 0.5 * penalty


def _role_half(logits: Tensor, target: Tensor, other: Tensor) -> Tensor:
    r"""One half of ROLE's element terms, differentiable in ``logits``:
    :math:`\tfrac12[\operatorname{BCE}(\sigma(x), o) + \ell_t(x)]`, with
    :math:`o` the other half's detached probabilities and :math:`\ell_t`
    the log-loss of an observed label (none where unannotated)."""
    observed = by_state(target, focal_positive(logits), 0.0,
                        focal_negative(logits))
    return 0.5 * (soft_bce(logits, other) + observed)


@MODELS.register_module()
class ROLELoss(EPRLoss):
    r"""Regularized online label estimation (ROLE) of Cole et al.
    ("Multi-Label Learning from Single Positive Labels", CVPR 2021, Sec. 3).

    A label estimator (:class:`~mmlml.models.heads.ROLELabelEstimator`, a
    learnable logit :math:`z_{nc}` per training sample and class, part of
    the model) is trained jointly with the classifier. With
    :math:`p = \sigma(x)` the classifier's and
    :math:`\hat y = \sigma(z)` the estimator's probabilities, and
    :math:`\operatorname{sg}` the stop-gradient:

    .. math::
        L = \frac{1}{NC}\sum_{n,c}\tfrac12\Big(
        \mathbb{1}[t_{nc} = 1]\,\big(-\log p_{nc} - \log\hat y_{nc}\big)
        + \operatorname{BCE}\big(p_{nc}, \operatorname{sg}(\hat y_{nc})\big)
        + \operatorname{BCE}\big(\hat y_{nc}, \operatorname{sg}(p_{nc})\big)
        \Big) + \tfrac12\big(R(p) + R(\hat y)\big),

    .. math::
        \operatorname{BCE}(a, b) = -b\log a - (1 - b)\log(1 - a), \qquad
        R(q) = \frac{1}{C^2}\Big(\frac{1}{N}\sum_{n,c} q_{nc} - k\Big)^2.

    So the classifier's gradient comes from its observed-positive term,
    its fit to the (detached) estimates and its own expected-positives
    regulariser, and the estimator's from the mirror terms. The
    cross-entropies cover every entry, observed positives included; the
    observed-positive terms (on both halves) are added to them.

    Paper vs official code: the paper writes the loss as the average of
    two symmetric losses, each with EPR's regulariser; the official
    ``loss_role`` computes exactly the formula above: the element terms
    averaged over ``N x C``, plus :math:`\tfrac12(R(p) + R(\hat y))`,
    where :math:`R` is EPR's regulariser divided by :math:`C^2` and *not*
    averaged again. This loss equals it (the official code's
    :math:`-\log(q + 10^{-5})` is computed here from logits, which differs
    by at most about :math:`10^{-5}/q`). Observed negatives (``-1``; the
    official code refuses them) get :math:`-\log(1 - p) - \log(1 - \hat
    y)`, the mirror of the positives, matching the estimator's initial
    :math:`\hat y = 0.005` there.

    Scale: the official value is ``reduction='mean'`` without
    ``avg_factor``; the stock head (``avg_factor=N``) gives :math:`C L`,
    so ``loss_weight=1 / C`` reproduces the official scale (which matters
    little with Adam, the official optimizer). ``reduction='none'``
    returns the ``(N, C)`` matrix whose mean is :math:`L` (each entry
    carries the regulariser term).

    Needs a head that hands it the batch's estimator logits as
    ``label_estimates``: ``type='PartialLabelLinearClsHead'`` (or
    ``'PartialLabelCSRAClsHead'``) with
    ``label_estimator=dict(type='ROLELabelEstimator', num_samples=N,
    num_classes=C)``, and ``custom_hooks=[dict(type='LabelEstimatorHook')]``
    to initialise it; the official optimizer settings are Adam, no weight
    decay, the estimator's learning rate 10 times the network's (see
    :class:`~mmlml.models.heads.ROLELabelEstimator`). The official code
    trains a linear classifier on fixed features first (25 epochs, lr
    1e-3) and then fine-tunes end to end from it, estimator included.

    Args:
        expected_positives (float): :math:`k`, the mean number of positives
            per image of the fully labelled training set (Cole et al.: 1.5
            VOC, 2.9 COCO, 1.9 NUS-WIDE, 31.4 CUB). Required. ROLE adds
            the label estimator to EPR's regulariser and keeps
            :class:`~.epr_loss.EPRLoss`'s one setting and its constructor.
        reduction (str), loss_weight (float): See
            :class:`~.base.PartialLabelLoss`.

    Example:
        >>> import torch
        >>> from mmlml.models.losses import ROLELoss
        >>> loss = ROLELoss(expected_positives=1.0)
        >>> cls_score = torch.zeros(2, 3, requires_grad=True)
        >>> estimates = torch.zeros(2, 3, requires_grad=True)
        >>> value = loss(cls_score, torch.tensor([0, 2]),
        ...              label_estimates=estimates)
        >>> round(value.item(), 4)
        0.952
    """

    loss_fn = role_loss
    hyperparameters = hyperparameters_of(role_loss)
    state_inputs = ('label_estimates', )
    state_hook = 'LabelEstimatorHook'

    def check_state(self, state: Dict[str, Any]) -> None:
        """Refuse a call without the estimator's logits, saying how to set
        the estimator up."""
        if 'label_estimates' in state:
            return super().check_state(state)
        unknown = sorted(set(state) - set(self.state_inputs))
        if unknown:
            raise TypeError(f'ROLELoss got unexpected keyword argument(s) '
                            f'{unknown}')
        raise RuntimeError(
            'ROLELoss needs the label estimator\'s logits of the batch '
            "(label_estimates) at every call: use model.head=dict("
            "type='PartialLabelLinearClsHead' (or 'PartialLabelCSRAClsHead'"
            "), label_estimator=dict(type='ROLELabelEstimator', "
            'num_samples=<training set size>, num_classes=<C>)) and add '
            "custom_hooks=[dict(type='LabelEstimatorHook')].")
