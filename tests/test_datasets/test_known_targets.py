"""mmlml.datasets.known_targets: the labels a split knows, whatever its own
evaluation makes of its unknown labels."""
import numpy as np

from mmlml.datasets import PartialLabelDataset, SyntheticShapes, known_targets


def _inner(num_samples=40):
    return dict(type='SyntheticShapes', num_samples=num_samples, seed=3)


def test_observed_validation_labels_keep_unknowns_unknown():
    """With val_unknown='negative' the split's evaluation scores unknown
    labels as negatives (gt_score 0); the known targets leave them -1."""
    val = PartialLabelDataset(
        _inner(),
        mode='ratio',
        ratio=0.5,
        split='val',
        val_labels='observed',
        val_unknown='negative')
    target = known_targets(val)
    observed = val.observed_labels
    assert (observed == 0).any()
    np.testing.assert_array_equal(target == -1, observed == 0)
    np.testing.assert_array_equal(target == 1, observed == 1)
    np.testing.assert_array_equal(target == 0, observed == -1)
    assert (val.get_data_info(0)['gt_score'] >= 0).all()  # the evaluation's


def test_clean_validation_and_plain_datasets():
    clean = PartialLabelDataset(
        _inner(), mode='single_positive', split='val', val_labels='clean')
    np.testing.assert_array_equal(
        known_targets(clean), clean.full_labels.astype(np.float32))
    test = SyntheticShapes(split='test', num_samples=12, seed=0)
    target = known_targets(test)
    assert target.shape == (12, len(test.metainfo['classes']))
    for i in range(12):
        assert set(np.flatnonzero(target[i] == 1)) == set(test.get_cat_ids(i))
    assert set(np.unique(target)) <= {0.0, 1.0}


def test_a_wrapped_split_is_refused():
    """Read through a dataset wrapper, the unknown labels of what it wraps
    would count as negatives: refused, naming the wrapper."""
    import pytest
    from mmengine.dataset import RepeatDataset
    test = SyntheticShapes(split='test', num_samples=12, seed=0)
    with pytest.raises(ValueError, match='RepeatDataset wraps'):
        known_targets(RepeatDataset(test, times=2))
