"""The ranking with ties that the per-class AP of ClassAPCorrectionHook
and the class-prior estimate of ClassPriorHook share."""
import math

import pytest
import torch

from mmlml.evaluation.tied_ranking import (check_scores_and_positives,
                                           rank_with_ties)


def test_rank_with_ties_shared_by_ap_and_class_priors():
    """The ranking that the AP and the class-prior estimate share: one
    sort of each column, unscored entries last, every row pointing at the
    last row of its group of tied scores."""
    nan = float('nan')
    scores = torch.tensor([[0.5], [0.75], [nan], [0.5], [0.25]])
    positives = torch.tensor([[True], [False], [True], [True], [False]])
    values, hits, end_row = rank_with_ties(scores, positives)
    assert values[:, 0].tolist() == [0.75, 0.5, 0.5, 0.25, -math.inf]
    assert hits[:, 0].tolist() == [False, True, True, False, False]
    assert end_row[:, 0].tolist() == [0, 2, 2, 3, 4]


def test_scores_and_positives_of_other_shapes_are_refused():
    with pytest.raises(
            ValueError,
            match=r'same shape \(N, C\), got '
            r'\(3, 2\) and \(3, 1\)'):
        check_scores_and_positives(
            torch.zeros(3, 2), torch.zeros(3, 1, dtype=torch.bool))
    with pytest.raises(ValueError, match=r'got \(3,\) and \(3,\)'):
        check_scores_and_positives(
            torch.zeros(3), torch.zeros(3, dtype=torch.bool))
