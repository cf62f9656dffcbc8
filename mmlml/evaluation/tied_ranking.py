"""Every class's scores ranked with their ties, in one sort of the block:
the kernel of the per-class average precision of OPML-SP's correction
(:func:`~mmlml.hooks.class_ap_correction_hook.average_precision_per_class`)
and of CRISP's class-prior bound
(:func:`~mmlml.hooks.class_prior_hook.estimate_class_priors`), which both
count every entry tied with a score as "at or above" it."""
import math
from typing import NamedTuple

import torch
from torch import Tensor

__all__ = ['TiedRanking', 'check_scores_and_positives', 'rank_with_ties']


class TiedRanking(NamedTuple):
    """Every class's entries sorted by decreasing score, with the groups
    of tied scores (see :func:`rank_with_ties`)."""
    #: ``(N, C)`` sorted scores, ``-inf`` for the entries not scored (last).
    values: Tensor
    #: ``(N, C)`` bool, the scored positive entries in the same order.
    hits: Tensor
    #: ``(N, C)`` the last row of each row's group of tied scores, so that
    #: ``hits.cumsum(0).gather(0, end_row)`` counts the positives scored
    #: at or above each row.
    end_row: Tensor


def check_scores_and_positives(scores: Tensor, positives: Tensor) -> None:
    """Raise ``ValueError`` unless ``scores`` and ``positives`` are both
    ``(N, C)``."""
    if scores.shape != positives.shape or scores.dim() != 2:
        raise ValueError('scores and positives must have the same shape '
                         f'(N, C), got {tuple(scores.shape)} and '
                         f'{tuple(positives.shape)}')


def rank_with_ties(scores: Tensor, positives: Tensor) -> TiedRanking:
    """Sort every column of ``scores`` (``(N, C)``, NaN for an entry not
    scored) by decreasing score, in one sort for all classes,
    and find the end of each group of tied scores: the counts "at or above
    a score" of the average precision and of the class-prior bound count
    every entry tied with it (the label store keeps float16 scores, so ties
    happen)."""
    num_samples = scores.size(0)
    scored = ~torch.isnan(scores)
    key = scores.masked_fill(~scored, -math.inf)  # unscored last
    values, order = torch.sort(key, dim=0, descending=True, stable=True)
    hits = (positives & scored).gather(0, order)
    # The last row of each group of tied scores (unscored rows are -inf,
    # below every score, so a group never runs into them).
    group_end = torch.ones_like(hits)
    group_end[:-1] = values[1:] != values[:-1]
    rows = torch.arange(num_samples, device=scores.device)[:, None]
    end_row = torch.where(group_end, rows, num_samples)
    end_row = end_row.flip(0).cummin(0).values.flip(0)
    return TiedRanking(values, hits, end_row.clamp(max=num_samples - 1))
