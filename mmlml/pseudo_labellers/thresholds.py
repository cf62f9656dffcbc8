"""From scores to pseudo-labels: the thresholds of VLPL and AEVLP."""
from typing import NamedTuple, Optional

import torch
from torch import Tensor

from mmlml.utils.hyperparameters import (Flag, Integer, Real, Rule,
                                         check_hyperparameters)

__all__ = [
    'PseudoLabels', 'THRESHOLDS', 'THRESHOLD_RULES',
    'check_threshold_arguments', 'select_pseudo_labels'
]

#: The arguments of :func:`select_pseudo_labels` (and of the hook that
#: calls it).
THRESHOLDS = dict(
    pos_thr=Real(0.3, low=0, high=1),
    neg_thr=Real(None, low=0, high=1, high_open=True, optional=True),
    neg_fraction=Real(None, low=0, high=1, high_open=True, optional=True),
    pos_topk=Integer(None, low=1, optional=True),
    soft=Flag(False))

#: What :data:`THRESHOLDS` must satisfy together.
THRESHOLD_RULES = (
    Rule(lambda neg_thr, pos_thr: neg_thr is None or neg_thr < pos_thr,
         'neg_thr must lie in [0, pos_thr={pos_thr}), got {neg_thr!r}'),
    Rule(
        lambda soft, neg_thr, neg_fraction, pos_topk: not soft or
        (neg_thr, neg_fraction, pos_topk) == (None, None, None),
        'soft=True writes the score of every unannotated entry: it takes '
        'no neg_thr, neg_fraction or pos_topk'),
)


class PseudoLabels(NamedTuple):
    """Entries to pseudo-label: ``(M,)`` sample and class indices and the
    ``(M,)`` float32 soft targets (1 pseudo-positive, 0 pseudo-negative)."""

    samples: Tensor
    classes: Tensor
    values: Tensor


def check_threshold_arguments(pos_thr: float = 0.3,
                              neg_thr: Optional[float] = None,
                              neg_fraction: Optional[float] = None,
                              pos_topk: Optional[int] = None,
                              soft: bool = False) -> None:
    """Refuse arguments of :func:`select_pseudo_labels` that make no
    sense (with a ``ValueError`` naming them): :data:`THRESHOLDS` and
    :data:`THRESHOLD_RULES`."""
    check_hyperparameters(
        THRESHOLDS,
        dict(
            pos_thr=pos_thr,
            neg_thr=neg_thr,
            neg_fraction=neg_fraction,
            pos_topk=pos_topk,
            soft=soft),
        'select_pseudo_labels',
        rules=THRESHOLD_RULES)


def _rank_mask(scores: Tensor, k: int, largest: bool) -> Tensor:
    """``(N, C)`` bool: the ``k`` largest (smallest) scores of each row."""
    mask = torch.zeros_like(scores, dtype=torch.bool)
    k = min(int(k), scores.size(1))
    if k > 0:
        index = scores.topk(k, dim=1, largest=largest).indices
        mask.scatter_(1, index, True)
    return mask


def select_pseudo_labels(scores: Tensor,
                         observed: Tensor,
                         pos_thr: float = 0.3,
                         neg_thr: Optional[float] = None,
                         neg_fraction: Optional[float] = None,
                         pos_topk: Optional[int] = None,
                         soft: bool = False) -> PseudoLabels:
    """The pseudo-labels of a matrix of scores, for the unannotated entries
    only (observed label 0: an observed positive or negative is never
    pseudo-labelled, as in both official codes, which apply pseudo-labels
    where the observed label is 0).

    - pseudo-positive (1) where the score is ``>= pos_thr`` (VLPL: 0.3;
      AEVLP: 0.5 or 0.6) and, with ``pos_topk``, among the ``pos_topk``
      largest scores of its row (AEVLP: 3, CUB 32); ``>=`` as AEVLP's
      code, VLPL's takes ``>`` (they differ only on a score equal to the
      threshold);
    - pseudo-negative (0) where it is ``<= neg_thr`` (when given), or, with
      ``neg_fraction``, among the ``floor(neg_fraction * C)`` smallest
      scores of its row (VLPL's ``partial``, 0 in the paper), unless it is
      a pseudo-positive;
    - nothing elsewhere.

    With ``soft=True``, every unannotated entry gets its score as a soft
    target instead.

    Args:
        scores (Tensor): ``(N, C)`` probabilities in ``[0, 1]``.
        observed (Tensor): ``(N, C)`` observed labels (1, 0, -1).
        pos_thr, neg_thr, neg_fraction, pos_topk, soft: See above
            (:func:`check_threshold_arguments`).

    Returns:
        PseudoLabels: The entries, in row-major order.
    """
    check_threshold_arguments(pos_thr, neg_thr, neg_fraction, pos_topk, soft)
    scores = torch.as_tensor(scores, dtype=torch.float32)
    observed = torch.as_tensor(observed)
    if scores.shape != observed.shape or scores.dim() != 2:
        raise ValueError(f'scores {tuple(scores.shape)} and observed labels '
                         f'{tuple(observed.shape)} must be the same (N, C)')
    if not bool(((scores >= 0) & (scores <= 1)).all()):
        raise ValueError('scores must be probabilities in [0, 1] (no NaN)')
    unannotated = observed == 0
    if soft:
        samples, classes = unannotated.nonzero(as_tuple=True)
        return PseudoLabels(samples, classes, scores[samples, classes])
    positive = scores >= pos_thr
    if pos_topk is not None:
        positive &= _rank_mask(scores, pos_topk, largest=True)
    negative = torch.zeros_like(positive)
    if neg_thr is not None:
        negative |= scores <= neg_thr
    if neg_fraction:
        negative |= _rank_mask(
            scores, int(neg_fraction * scores.size(1)), largest=False)
    labels = torch.full_like(scores, float('nan'))
    labels[negative & ~positive & unannotated] = 0.
    labels[positive & unannotated] = 1.
    samples, classes = (~labels.isnan()).nonzero(as_tuple=True)
    return PseudoLabels(samples, classes, labels[samples, classes])
