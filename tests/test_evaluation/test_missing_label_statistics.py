"""MissingLabelStatistics and histogram_auc: exact statistics against
numpy, metrics against brute force, argument checks."""
import numpy as np
import pytest
import torch
from missing_label_reference import (METRICS, random_labels, reference_metrics,
                                     reference_stats)

from mmlml.evaluation import MissingLabelStatistics, histogram_auc


# ------------------------------------------------------- unit: statistics
def test_statistics_match_numpy_exactly():
    rng = np.random.RandomState(0)
    n, c, num_bins, logit_range, thr = 90, 7, 12, 3., 0.4
    observed, full = random_labels(rng, n, c)
    logits = (rng.randn(n, c) * 2.5).astype(np.float32)
    stats = MissingLabelStatistics(
        c, num_bins=num_bins, logit_range=logit_range, thr=thr)
    for rows in np.array_split(np.arange(n), 4):  # several batches
        stats.update(
            torch.from_numpy(logits[rows]), torch.from_numpy(observed[rows]),
            torch.from_numpy(full[rows]))
    hist, counts, sums, _, _ = reference_stats(logits, observed, full,
                                               num_bins, logit_range, thr)
    np.testing.assert_array_equal(stats.hist.numpy(), hist)
    np.testing.assert_array_equal(stats.counts.numpy(), counts)
    np.testing.assert_allclose(stats.score_sums.numpy(), sums, rtol=1e-12)
    assert int(stats.num_samples) == n
    assert stats.hist.dtype == torch.int64
    assert stats.hist.shape == (2, c, num_bins)
    # Every unannotated entry is in exactly one bin, clamped ones included.
    assert stats.hist.sum() == (observed == 0).sum()
    assert stats.hist[..., 0].sum() > 0 and stats.hist[..., -1].sum() > 0

    stats.all_reduce()  # a no-op without distributed training
    np.testing.assert_array_equal(stats.hist.numpy(), hist)
    stats.reset()
    assert stats.hist.sum() == 0 and stats.score_sums.sum() == 0


def test_statistics_half_precision_and_nan_do_not_crash():
    stats = MissingLabelStatistics(5, num_bins=4)
    inf = float('inf')
    logits = torch.tensor([[float('nan'), 1e4, -1e4, inf, -inf]],
                          dtype=torch.float16)
    stats.update(logits, torch.zeros(1, 5), torch.tensor([[1, 0, 1, 1, 0]]))
    assert stats.hist.sum() == 5
    assert stats.hist[0, 0, 0] == 1  # NaN: first bin
    assert stats.hist[1, 1, -1] == 1 and stats.hist[0, 2, 0] == 1
    assert stats.hist[0, 3, -1] == 1 and stats.hist[1, 4, 0] == 1
    assert stats.counts[0].tolist() == [0, 0, 0, 1, 0]


def test_statistics_bad_shapes():
    stats = MissingLabelStatistics(4)
    with pytest.raises(ValueError, match=r'shape \(N, 4\)'):
        stats.update(torch.zeros(2, 3), torch.zeros(2, 3), torch.zeros(2, 3))
    with pytest.raises(ValueError, match='same shape'):
        stats.update(torch.zeros(2, 4), torch.zeros(3, 4), torch.zeros(2, 4))
    with pytest.raises(ValueError, match='num_classes'):
        MissingLabelStatistics(0)


# ---------------------------------------------------------- unit: metrics
def test_histogram_auc_small_cases():
    auc, bound = histogram_auc(
        torch.tensor([0, 0, 2]), torch.tensor([3, 1, 0]))
    assert auc.item() == 1. and bound.item() == 0.
    auc, bound = histogram_auc(
        torch.tensor([2, 0, 0]), torch.tensor([0, 0, 5]))
    assert auc.item() == 0.
    auc, bound = histogram_auc(torch.tensor([1, 1]), torch.tensor([1, 1]))
    assert auc.item() == 0.5 and bound.item() == 0.25
    # Per row of a batch of histograms; NaN without pairs.
    auc, _ = histogram_auc(
        torch.tensor([[0, 1], [0, 0]]), torch.tensor([[1, 0], [1, 0]]))
    assert auc[0].item() == 1. and torch.isnan(auc[1])


@pytest.mark.parametrize('num_bins,logit_range,atol', [(8, 4., None),
                                                       (20000, 12., 2e-3)])
def test_metrics_against_brute_force(num_bins, logit_range, atol):
    rng = np.random.RandomState(1)
    n, c, thr = 120, 6, 0.3
    observed, full = random_labels(rng, n, c)
    # Missing positives score higher on average: an informative model.
    logits = (rng.randn(n, c) * 2 + 2.5 * full - 1.5).astype(np.float32)
    stats = MissingLabelStatistics(
        c, num_bins=num_bins, logit_range=logit_range, thr=thr)
    stats.update(
        torch.from_numpy(logits), torch.from_numpy(observed),
        torch.from_numpy(full))
    got = stats.compute()
    want = reference_metrics(logits, observed, full, thr)

    for name in ('frac_missing', 'pos_rate', 'score_pos', 'score_neg',
                 'recall', 'precision'):
        assert got[name] == pytest.approx(want[name], rel=1e-9), name
    # The binned AUC is within its stated bound of the exact one ...
    assert abs(got['auc'] - want['auc']) <= got['auc_error_bound'] + 1e-12
    assert 0.6 < want['auc'] < 1
    # ... and close to it with fine bins.
    if atol is not None:
        assert got['auc'] == pytest.approx(want['auc'], abs=atol)
        assert got['auc_macro'] == pytest.approx(want['auc_macro'], abs=atol)
    assert got['auc_macro_classes'] == c
    unknown = observed == 0
    assert got['num_missing_pos'] == (unknown & (full == 1)).sum()
    assert got['num_unannotated_neg'] == (unknown & (full == 0)).sum()
    assert got['num_observed_pos'] == (observed == 1).sum()
    assert got['num_samples'] == n


def test_metrics_left_out_when_undefined():
    stats = MissingLabelStatistics(3)
    # Fully labelled: nothing is unannotated.
    stats.update(
        torch.randn(4, 3), torch.tensor([[1, -1, -1]] * 4),
        torch.tensor([[1, 0, 0]] * 4))
    got = stats.compute()
    assert got['frac_missing'] == 0.
    assert not set(METRICS[1:]) & set(got)
    # Unannotated negatives only, none above the threshold.
    stats.reset()
    stats.update(torch.full((2, 3), -5.), torch.zeros(2, 3), torch.zeros(2, 3))
    got = stats.compute()
    assert got['pos_rate'] == 0. and got['precision'] == 0.
    assert 'recall' not in got and 'auc' not in got and 'score_neg' in got


# ------------------------------------------------------------- arguments
# The binning arguments share one validator with the hook, whose test
# covers each of them.
@pytest.mark.parametrize('kwargs,match', [
    (dict(num_classes=0), 'num_classes'),
    (dict(num_classes=2.), 'num_classes'),
    (dict(num_classes=True), 'num_classes'),
    (dict(num_classes=3, num_bins=1), 'num_bins'),
    (dict(num_classes=3, logit_range=-1), 'logit_range'),
])
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        MissingLabelStatistics(**kwargs)


def test_numpy_scalar_arguments():
    stats = MissingLabelStatistics(
        np.int64(3),
        num_bins=np.int32(4),
        logit_range=np.float32(2.),
        thr=np.float64(0.25))
    assert (stats.num_classes, stats.num_bins) == (3, 4)
    assert type(stats.num_bins) is int and type(stats.thr) is float
    assert stats.hist.shape == (2, 3, 4) and stats.thr == 0.25
    assert stats.metric_names == METRICS
