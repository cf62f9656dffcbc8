from fractions import Fraction

import numpy as np
import pytest

from mmlml.datasets import (make_partial_labels, num_kept_positives,
                            split_train_val)


def _random_full(num_samples=200, num_classes=20, p=0.3, seed=0):
    rng = np.random.RandomState(seed)
    return (rng.rand(num_samples, num_classes) < p).astype(np.int64)


def _cole_reference(labels,
                    num_pos=1,
                    num_neg=0,
                    seed=1200,
                    shuffle_negatives=True):
    """Independent transcription of Cole et al.'s observation generator."""
    labels = np.array(labels, dtype=np.float64)
    labels[labels == 0] = -1
    rng = np.random.RandomState(seed)
    obs = np.zeros_like(labels)
    for i in range(labels.shape[0]):
        idx_pos = np.nonzero(labels[i, :] == 1)[0]
        rng.shuffle(idx_pos)
        obs[i, idx_pos[:num_pos]] = 1
        if shuffle_negatives:
            idx_neg = np.nonzero(labels[i, :] == -1)[0]
            rng.shuffle(idx_neg)
            obs[i, idx_neg[:num_neg]] = -1
    return obs


# ------------------------------------------------------------ single positive
def test_single_positive_matches_cole_generator():
    full = _random_full()
    obs = make_partial_labels(full, 'single_positive')
    ref = _cole_reference(full)
    np.testing.assert_array_equal(obs, ref)
    assert obs.dtype == np.uint8
    assert obs.shape == full.shape


def test_cole_reference_has_teeth():
    # Dropping the (useless) negative shuffle changes the chosen positives,
    # so the comparison above really checks the random stream.
    full = _random_full()
    ref = _cole_reference(full)
    without_neg = _cole_reference(full, shuffle_negatives=False)
    changed = (ref != without_neg).any(axis=1).sum()
    assert changed > 50
    assert (make_partial_labels(full, 'single_positive') != without_neg).any()


def test_single_positive_other_seed_and_dtypes():
    full = _random_full(seed=3)
    ref = _cole_reference(full, seed=7)
    for arr in (full, full.astype(bool), full.astype(np.float32),
                full.astype(np.uint8), full.tolist()):
        np.testing.assert_array_equal(
            make_partial_labels(arr, 'single_positive', seed=7), ref)


def test_single_positive_one_per_nonempty_row():
    full = _random_full()
    obs = make_partial_labels(full, 'single_positive')
    num_pos = full.sum(axis=1)
    np.testing.assert_array_equal(obs.sum(axis=1), np.minimum(num_pos, 1))
    assert np.all(obs <= full)


def test_single_positive_empty_rows_consume_negative_shuffle():
    full = _random_full(num_samples=50)
    full[[0, 7, 20]] = 0
    obs = make_partial_labels(full, 'single_positive')
    assert obs[[0, 7, 20]].sum() == 0
    np.testing.assert_array_equal(obs, _cole_reference(full))


# ---------------------------------------------------------------- ratio mode
# Keep counts k = floor(n * (1 - r)) + 1 for n = 1 .. 18 (Zhang et al.'s
# released COCO files: r=0.5 is "75% left", r=0.8 is "40% left").
KEEP_TABLE = {
    0.5: [1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10],
    0.8: [1, 1, 1, 1, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 4, 4, 4, 4],
    1: [1] * 18,
}


@pytest.mark.parametrize('ratio', [0.5, 0.8, 1])
def test_num_kept_positives_table(ratio):
    counts = [num_kept_positives(n, ratio) for n in range(1, 19)]
    assert counts == KEEP_TABLE[ratio]
    assert num_kept_positives(0, ratio) == 0


@pytest.mark.parametrize('ratio', [0.5, 0.8, 1])
def test_ratio_keep_counts_per_row(ratio):
    # Row n (0-based) has n + 1 positives among 20 classes.
    full = np.zeros((18, 20), dtype=np.uint8)
    for n in range(1, 19):
        full[n - 1, :n] = 1
    obs = make_partial_labels(full, 'ratio', ratio=ratio, seed=5)
    assert obs.sum(axis=1).tolist() == KEEP_TABLE[ratio]


def test_ratio_floating_point_trap():
    # float arithmetic gives 1 - 0.8 = 0.19999999999999996 and keeps one.
    assert int(5 * (1 - 0.8)) + 1 == 1
    assert num_kept_positives(5, 0.8) == 2
    assert num_kept_positives(10, 0.8) == 3
    assert num_kept_positives(15, 0.8) == 4
    assert num_kept_positives(5, np.float64(0.8)) == 2
    assert num_kept_positives(5, Fraction(4, 5)) == 2
    assert num_kept_positives(10, 0.7) == 4


def test_ratio_extremes():
    full = _random_full()
    num_pos = full.sum(axis=1)
    keep_all = make_partial_labels(full, 'ratio', ratio=0)
    np.testing.assert_array_equal(keep_all, full)
    keep_one = make_partial_labels(full, 'ratio', ratio=1)
    np.testing.assert_array_equal(keep_one.sum(axis=1), np.minimum(num_pos, 1))
    assert make_partial_labels(full, 'ratio', ratio=0).dtype == np.uint8


def test_ratio_subset_determinism_and_seeds():
    full = _random_full(num_samples=300, num_classes=30, p=0.4)
    obs = make_partial_labels(full, 'ratio', ratio=0.5, seed=11)
    # A subset of the positives.
    assert np.all(obs <= full)
    assert set(np.unique(obs).tolist()) <= {0, 1}
    # Deterministic for a seed, different for another seed.
    np.testing.assert_array_equal(
        obs, make_partial_labels(full, 'ratio', ratio=0.5, seed=11))
    assert (obs != make_partial_labels(full, 'ratio', ratio=0.5,
                                       seed=12)).any()
    # The input is not modified.
    np.testing.assert_array_equal(full, _random_full(300, 30, 0.4))
    # Same seed: nested across ratios (the draws depend on n only).
    obs_08 = make_partial_labels(full, 'ratio', ratio=0.8, seed=11)
    assert np.all(obs_08 <= obs)


def test_ratio_uniformity():
    # 3000 rows with the same 3 positives, keep 2 (r=0.5): each of the
    # 3 possible pairs should appear about 1000 times.
    full = np.zeros((3000, 6), dtype=np.uint8)
    full[:, [1, 3, 4]] = 1
    obs = make_partial_labels(full, 'ratio', ratio=0.5, seed=0)
    assert np.all(obs.sum(axis=1) == 2)
    pairs, counts = np.unique(obs[:, [1, 3, 4]], axis=0, return_counts=True)
    assert len(pairs) == 3
    assert np.all(np.abs(counts - 1000) < 4 * np.sqrt(3000 * 2 / 9))
    # Single positive among 4 classes: each about 1/4 of the rows.
    full = np.zeros((4000, 4), dtype=np.uint8) + 1
    obs = make_partial_labels(full, 'single_positive', seed=0)
    freq = obs.sum(axis=0).astype(np.int64)
    assert np.all(np.abs(freq - 1000) < 4 * np.sqrt(4000 * 3 / 16))


def test_ratio_empty_rows():
    full = _random_full(num_samples=40)
    full[[3, 4, 39]] = 0
    obs = make_partial_labels(full, 'ratio', ratio=0.5)
    assert obs[[3, 4, 39]].sum() == 0
    # Empty rows draw nothing: removing them leaves the others unchanged.
    keep = np.setdiff1d(np.arange(40), [3, 4, 39])
    np.testing.assert_array_equal(
        obs[keep], make_partial_labels(full[keep], 'ratio', ratio=0.5))


def test_empty_matrices():
    for mode, ratio in (('single_positive', None), ('ratio', 0.5)):
        obs = make_partial_labels(np.zeros((0, 5)), mode, ratio=ratio)
        assert obs.shape == (0, 5)
        obs = make_partial_labels(np.zeros((4, 0)), mode, ratio=ratio)
        assert obs.shape == (4, 0)


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    'kwargs, match',
    [
        (dict(mode='single_positive', ratio=0.5), 'must be None'),
        (dict(mode='ratio'), 'required'),
        (dict(mode='ratio', ratio=-0.1), r'\[0, 1\]'),
        (dict(mode='ratio', ratio=1.5), r'\[0, 1\]'),
        (dict(mode='ratio', ratio=float('nan')), 'finite real number'),
        (dict(mode='ratio', ratio='0.5'), 'real number'),
        (dict(mode='ratio', ratio=True), 'real number'),
        (dict(mode='missing'), 'mode'),
        # The wrapper's other modes generate nothing.
        (dict(mode='full'), "Only the modes .* generate labels.*mode='full'"),
    ])
def test_bad_mode_or_ratio(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_partial_labels(_random_full(10, 4), **kwargs)


@pytest.mark.parametrize('full, match', [
    (np.array([[0, 1, 2]]), 'only 0 and 1'),
    (np.array([[0, -1, 1]]), 'only 0 and 1'),
    (np.array([[0.5, 1.0]]), 'only 0 and 1'),
    (np.array([[np.nan, 1.0]]), 'only 0 and 1'),
    (np.array([0, 1, 1]), '2-D'),
    (np.zeros((2, 3, 4)), '2-D'),
    (np.array([['a', 'b']]), 'dtype'),
])
def test_bad_labels(full, match):
    for mode, ratio in (('single_positive', None), ('ratio', 0.5)):
        with pytest.raises(ValueError, match=match):
            make_partial_labels(full, mode, ratio=ratio)


# --------------------------------------------------------------------- split
@pytest.mark.parametrize(
    'num_samples, num_train, num_val, first_val',
    [
        (5717, 4574, 1143, [5, 6, 11, 15, 22, 23, 29, 34, 53, 66]),  # VOC
        (5994, 4795, 1199, [5, 6, 11, 15, 22, 23, 29, 34, 53, 66]),  # CUB
        (82081, 65665, 16416, [3, 4, 34, 37, 48, 64, 69, 76, 81, 82]),  # COCO
        (150000, 120000, 30000, [2, 4, 5, 7, 9, 11, 12, 19, 43, 44]),  # NUS
    ])
def test_split_matches_cole(num_samples, num_train, num_val, first_val):
    train_idx, val_idx = split_train_val(num_samples)
    assert len(train_idx) == num_train
    assert len(val_idx) == num_val
    assert val_idx[:10].tolist() == first_val
    assert train_idx.dtype == np.int64 and val_idx.dtype == np.int64
    assert np.all(np.diff(train_idx) > 0) and np.all(np.diff(val_idx) > 0)
    assert len(np.intersect1d(train_idx, val_idx)) == 0
    np.testing.assert_array_equal(
        np.union1d(train_idx, val_idx), np.arange(num_samples))


def test_split_edge_cases():
    train_idx, val_idx = split_train_val(10, val_frac=0)
    np.testing.assert_array_equal(train_idx, np.arange(10))
    assert len(val_idx) == 0 and val_idx.dtype == np.int64
    train_idx, val_idx = split_train_val(10, val_frac=1)
    assert len(train_idx) == 0
    np.testing.assert_array_equal(val_idx, np.arange(10))
    # 0.04 * 10 rounds to 0 validation samples.
    assert len(split_train_val(10, val_frac=0.04)[1]) == 0
    train_idx, val_idx = split_train_val(0)
    assert len(train_idx) == 0 and len(val_idx) == 0
    # Another seed gives another split.
    assert (split_train_val(100, seed=1)[1]
            != split_train_val(100, seed=2)[1]).any()


@pytest.mark.parametrize('kwargs', [
    dict(num_samples=-1),
    dict(num_samples=2.5),
    dict(num_samples=10, val_frac=1.5),
    dict(num_samples=10, val_frac=-0.1),
    dict(num_samples=10, val_frac='0.2'),
])
def test_split_bad_input(kwargs):
    with pytest.raises(ValueError):
        split_train_val(**kwargs)
