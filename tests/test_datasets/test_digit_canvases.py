"""DigitCanvases: real digit scans on canvases, labels that are the digits
pasted, and training, validation and test canvases from disjoint scans."""
import inspect

import numpy as np
import pytest

import mmlml  # noqa: F401
from mmlml.datasets import DigitCanvases, PartialLabelDataset, split_train_val
from mmlml.datasets.domains.canvases import free_box
from mmlml.datasets.domains.digit_canvases import load_scans, scan_pools
from mmlml.registry import DATASETS


def _images(dataset):
    return np.stack(
        [dataset.get_data_info(i)['img'] for i in range(len(dataset))])


def _scans(dataset, indices=None):
    indices = range(len(dataset)) if indices is None else indices
    return {
        s
        for i in indices
        for s in dataset.get_data_info(int(i))['scan_ids']
    }


@pytest.fixture(scope='module')
def train():
    return DigitCanvases(num_samples=300)


def test_build_from_registry_and_data_info():
    dataset = DATASETS.build(
        dict(type='DigitCanvases', num_samples=12, img_size=48))
    assert isinstance(dataset, DigitCanvases)
    assert len(dataset) == 12
    assert dataset.metainfo['classes'] == tuple('0123456789')
    for idx in range(len(dataset)):
        info = dataset.get_data_info(idx)
        assert info['img'].shape == (48, 48, 3)
        assert info['img'].dtype == np.uint8
        assert info['img_shape'] == info['ori_shape'] == (48, 48)
        labels = info['gt_label']
        assert 1 <= len(labels) <= 4 and labels == sorted(set(labels))
        assert dataset.get_cat_ids(idx) == labels
    matrix = dataset.get_label_matrix()
    assert matrix.shape == (12, 10) and matrix.dtype == np.uint8
    assert 'DigitCanvases' in repr(dataset)


def test_scans_are_sklearns_digits():
    scans, targets = load_scans()
    assert scans.shape == (1797, 8, 8) and scans.dtype == np.float32
    assert scans.min() == 0 and scans.max() == 1
    assert np.bincount(targets).tolist() == [
        178, 182, 177, 183, 181, 182, 181, 179, 174, 180
    ]
    assert not scans.flags.writeable


def test_deterministic_from_seed():
    a = DigitCanvases(num_samples=40, seed=3)
    b = DigitCanvases(num_samples=40, seed=3)
    c = DigitCanvases(num_samples=40, seed=4)
    np.testing.assert_array_equal(_images(a), _images(b))
    np.testing.assert_array_equal(a.get_label_matrix(), b.get_label_matrix())
    assert [a.get_data_info(i)['scan_ids'] for i in range(40)] == \
        [b.get_data_info(i)['scan_ids'] for i in range(40)]
    assert not np.array_equal(_images(a), _images(c))
    assert not np.array_equal(a.get_label_matrix(), c.get_label_matrix())
    test = DigitCanvases(split='test', num_samples=40, seed=3)
    assert not np.array_equal(_images(a), _images(test))


def test_labels_are_the_digits_pasted(train):
    _, targets = load_scans()
    for idx in range(len(train)):
        info = train.get_data_info(idx)
        assert info['gt_label'] == sorted(
            {int(targets[s])
             for s in info['scan_ids']})
        assert len(info['digit_boxes']) == len(info['scan_ids'])
    # Without noise, every box holds bright digit pixels and nothing
    # outside the boxes is brighter than the background (at most 50 plus
    # half of a 25-level gradient): no digit without its label.
    clean = DigitCanvases(num_samples=60, noise_std=0, img_size=40)
    for idx in range(len(clean)):
        info = clean.get_data_info(idx)
        img = info['img'].astype(int)
        outside = np.ones(img.shape[:2], dtype=bool)
        for top, left, height, width in info['digit_boxes']:
            box = img[top:top + height, left:left + width]
            assert (box.max(2) >= 100).sum() >= 4
            outside[top:top + height, left:left + width] = False
        assert img[outside].max() <= 63


def test_statistics(train):
    per_image = train.get_label_matrix().sum(1)
    assert per_image.min() == 1 and per_image.max() == 4
    assert 2.0 <= per_image.mean() <= 2.5
    assert (train.get_label_matrix().mean(0) > 0.1).all()


def test_scan_pools_are_disjoint_and_stratified():
    _, targets = load_scans()
    pools = scan_pools(targets)
    assert sorted(pools) == ['test', 'train', 'val']
    joined = np.concatenate(list(pools.values()))
    assert len(joined) == len(np.unique(joined)) == 1797
    per_class = np.bincount(targets)
    for name, frac in (('train', 0.5), ('val', 0.2), ('test', 0.3)):
        counts = np.bincount(targets[pools[name]], minlength=10)
        assert np.all(np.abs(counts - frac * per_class) <= 1)


def test_splits_use_disjoint_scans(train):
    _, targets = load_scans()
    pools = {k: set(v.tolist()) for k, v in scan_pools(targets).items()}
    train_idx, val_idx = split_train_val(len(train), 0.2, 1200)
    train_scans = _scans(train, train_idx)
    val_scans = _scans(train, val_idx)
    test_scans = _scans(DigitCanvases(split='test', num_samples=150))
    assert train_scans <= pools['train']
    assert val_scans <= pools['val']
    assert test_scans <= pools['test']
    assert len(val_scans) > 100 and len(test_scans) > 100
    assert not (train_scans & val_scans or train_scans & test_scans
                or val_scans & test_scans)
    # Another split of the same canvases moves the pools with it.
    other = DigitCanvases(num_samples=300, val_frac=0.5, split_seed=7)
    _, other_val = split_train_val(300, 0.5, 7)
    assert _scans(other, other_val) <= pools['val']


def test_wrapper_splits_match_the_pools(train):
    _, targets = load_scans()
    pools = scan_pools(targets)
    for split, pool in (('train', 'train'), ('val', 'val')):
        wrapped = PartialLabelDataset(train, split=split)
        assert _scans(train, wrapped.indices) <= set(pools[pool].tolist())
    # The defaults are the wrapper's.
    defaults = inspect.signature(PartialLabelDataset).parameters
    assert train.val_frac == defaults['val_frac'].default
    assert train.split_seed == defaults['split_seed'].default


@pytest.mark.parametrize('kwargs', [
    dict(val_frac=0.3),
    dict(split_seed=1),
])
def test_wrapper_refuses_another_split(train, kwargs):
    with pytest.raises(ValueError, match='val_frac and split_seed'):
        PartialLabelDataset(train, split='val', **kwargs)
    # Without a split, every canvas is used: nothing to check.
    PartialLabelDataset(train, split=None, **kwargs)


def test_wrapper_refuses_a_subset():
    subset = DigitCanvases(num_samples=40, indices=30)
    with pytest.raises(ValueError, match='num_samples=40.*num_samples=30'):
        PartialLabelDataset(subset, split='train')


def test_test_split_fits_any_split():
    test = DigitCanvases(split='test', num_samples=20)
    assert len(PartialLabelDataset(test, split='val', val_frac=0.5)) == 10


@pytest.mark.parametrize('kwargs', [
    dict(split='val'),
    dict(num_samples=0),
    dict(img_size=8),
    dict(seed=-1),
    dict(max_digits=0),
    dict(max_digits=7),
    dict(digit_size=0.4),
    dict(digit_size=(0., 0.5)),
    dict(digit_size=(0.5, 0.3)),
    dict(digit_size=(0.3, 1.5)),
    dict(max_overlap=1.5),
    dict(noise_std=-1.),
    dict(val_frac=1.5),
    dict(split_seed=None),
    dict(metainfo=dict(classes=('zero', ) * 10)),
])
def test_invalid_arguments(kwargs):
    with pytest.raises(ValueError):
        DigitCanvases(**dict(dict(num_samples=4), **kwargs))


@pytest.mark.parametrize(
    'kwargs, match',
    [
        (dict(max_digits=7),
         r'^max_digits must be an integer in \[1, 6\], got 7'),
        (dict(max_digits=0),
         r'^max_digits must be an integer in \[1, 6\], got 0'),
        (dict(digit_size=(0.5, 0.3)),
         r'^DigitCanvases: digit_size must be \(smallest, largest\) with 0 < '
         r'smallest <= largest <= 1, got \(0\.5, 0\.3\)'),
        (dict(digit_size=0.4), r'^digit_size must be \(smallest, largest\)'),
        (dict(val_frac=1.5), r'^val_frac must lie in \[0, 1\], got 1\.5'),
        # The wrapper's seeds: never None, below 2**32.
        (dict(split_seed=None), r'^split_seed is required \(the partial'),
        (dict(split_seed=2**32),
         r'^split_seed must be an integer in \[0, 4294967295\], got 42'),
        (dict(seed=None), r'^seed is required \(every process must draw'),
        (dict(split='val'),
         r"^split must be one of \('train', 'test'\), got 'val'$"),
    ])
def test_invalid_arguments_say_what(kwargs, match):
    """The declarations' errors name the setting and the valid values."""
    with pytest.raises(ValueError, match=match):
        DigitCanvases(**dict(dict(num_samples=4), **kwargs))


def test_rejects_file_arguments():
    with pytest.raises(TypeError, match='ann_file'):
        DigitCanvases(num_samples=4, ann_file='a.json')


def test_free_box_takes_the_first_fitting_candidate_lazily():
    """The placement shared with PhotoCanvases: the first candidate that
    covers at most ``max_overlap`` of every placed box, drawing no more
    candidates than it needs; None where none fits."""
    placed = [(0, 0, 10, 10)]
    drawn = []

    def candidates():
        for box in [(5, 5, 10, 10), (20, 20, 4, 4), (30, 30, 4, 4)]:
            drawn.append(box)
            yield box

    assert free_box(candidates(), placed, 0.2) == (20, 20, 4, 4)
    assert drawn == [(5, 5, 10, 10), (20, 20, 4, 4)]
    # (5, 5, 10, 10) covers a quarter of the placed box.
    assert free_box([(5, 5, 10, 10)], placed, 0.25) == (5, 5, 10, 10)
    assert free_box([(5, 5, 10, 10)], placed, 0.2) is None
