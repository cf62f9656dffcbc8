"""The label pipeline at scale: the vectorised generators draw exactly what
the per-row loop drew, the bulk label accessors give what the per-sample
path gives, and the memory stays within a small multiple of the label
matrices (small sizes here; tools/analysis/benchmark_label_pipeline.py
measures the OpenImages scale)."""
import importlib
import importlib.util
import json
import os.path as osp
import sys
import tracemalloc

import numpy as np
import pytest
import test_coco_multi_label as test_dataset_coco
import test_cub_attributes as test_dataset_cub
import test_nus_wide as test_dataset_nus_wide
import test_openimages_multi_label as test_dataset_openimages
import test_voc_multi_label as test_dataset_voc
from conftest import ROOT
from mmengine.registry import DefaultScope

import mmlml  # noqa: F401
from mmlml.datasets import (CustomMultiLabelDataset, PartialLabelDataset,
                            SyntheticShapes, make_partial_labels)
from mmlml.datasets.label_states import label_matrices, label_states
from mmlml.datasets.partial import draws as generator_module
from mmlml.datasets.partial import matrices as wrapper_module
from mmlml.datasets.partial.protocol import PartialLabelProtocol

sys.path.insert(0, osp.join(ROOT, 'tools', 'analysis'))

import benchmark_label_pipeline  # noqa: E402

# The package exports the function label_states under the module's name.
label_states_module = importlib.import_module('mmlml.datasets.label_states')


# ------------------------------------------------- the per-row reference
def _reference_check(full, name='full'):
    """The 0/1 check as it was, verbatim (np.isin over the whole matrix)."""
    full = np.asarray(full)
    if full.ndim != 2:
        raise ValueError(f'`{name}` must be a 2-D (num_samples, '
                         f'num_classes) matrix, but got shape {full.shape}.')
    if not (np.issubdtype(full.dtype, np.number)
            or np.issubdtype(full.dtype, np.bool_)):
        raise ValueError(f'`{name}` must hold numbers 0 and 1, but got '
                         f'dtype {full.dtype}.')
    if full.size and not np.isin(full, (0, 1)).all():
        bad = np.unique(full[~np.isin(full, (0, 1))])[:5]
        raise ValueError(f'`{name}` must hold only 0 and 1, but got other '
                         f'values such as {bad.tolist()}.')
    return full


def _reference_make_partial_labels(full, mode, ratio=None, seed=1200):
    """``make_partial_labels`` as it was, verbatim: the per-row loop."""
    protocol = PartialLabelProtocol(mode, ratio, seed)
    full = _reference_check(full)
    observed = np.zeros(full.shape, dtype=np.uint8)
    rng = np.random.RandomState(protocol.seed)
    if mode == 'single_positive':
        for i, row in enumerate(full):
            pos = np.nonzero(row == 1)[0]
            rng.shuffle(pos)
            observed[i, pos[:1]] = 1
            # Kept for the random stream only (Cole et al.'s num_neg=0).
            neg = np.nonzero(row != 1)[0]
            rng.shuffle(neg)
    else:
        for i, row in enumerate(full):
            pos = np.nonzero(row == 1)[0]
            if len(pos) == 0:
                continue
            k = protocol.num_kept(len(pos))
            observed[i, pos[rng.permutation(len(pos))[:k]]] = 1
    return observed


def _matrices():
    """Random 0/1 matrices of several shapes and densities, with rows of no
    positive and rows of every class."""
    rng = np.random.RandomState(0)
    yield np.zeros((0, 4), dtype=np.int64)
    yield np.zeros((3, 0), dtype=np.int64)
    yield np.ones((1, 1), dtype=np.int64)
    for shape, rate in (((9, 1), 0.5), ((40, 2), 0.5), ((120, 7), 0.3),
                        ((200, 20), 0.15), ((60, 64), 0.5), ((30, 300), 0.02)):
        full = (rng.rand(*shape) < rate).astype(np.int64)
        full[0] = 0
        full[-1] = 1
        yield full


@pytest.mark.parametrize('seed', [0, 1200, 2**32 - 1])
def test_generators_equal_the_per_row_loop(seed):
    for full in _matrices():
        new = make_partial_labels(full, 'single_positive', seed=seed)
        assert new.dtype == np.uint8 and new.shape == full.shape
        np.testing.assert_array_equal(
            new,
            _reference_make_partial_labels(full, 'single_positive', seed=seed))
        for ratio in (0, 0.3, 0.5, 0.8, 1):
            np.testing.assert_array_equal(
                make_partial_labels(full, 'ratio', ratio=ratio, seed=seed),
                _reference_make_partial_labels(
                    full, 'ratio', ratio=ratio, seed=seed))


@pytest.mark.parametrize('seed', [1, 42, 1200, 2**31])
def test_ratio_draws_at_once_equal_the_per_row_loop(seed, monkeypatch):
    """The missing-ratio mode draws every row's permutation in one call
    (legacy ``randint`` with an array of bounds samples as
    ``RandomState.shuffle`` does): the same kept positives as the per-row
    loop, for rows of up to every class positive, across chunks of rows,
    and the generator ends where the loop leaves it."""
    monkeypatch.setattr(generator_module, '_ROWS_PER_STEP', 7)
    rng = np.random.RandomState(seed)
    full = (rng.rand(60, 300) < rng.rand(60, 1)).astype(np.uint8)
    full[3] = 1
    full[4] = 0
    full[5, :2] = [1, 0]
    for ratio in (0.1, 0.5, 0.9):
        np.testing.assert_array_equal(
            make_partial_labels(full, 'ratio', ratio=ratio, seed=seed),
            _reference_make_partial_labels(
                full, 'ratio', ratio=ratio, seed=seed))
    indptr, indices = generator_module._positives_csr(full)
    after, reference = np.random.RandomState(seed), np.random.RandomState(seed)
    generator_module._permute_rows(after, indptr, indices.copy())
    for n in np.diff(indptr).tolist():
        reference.permutation(n)
    assert after.randint(2**31) == reference.randint(2**31)


def test_generators_equal_the_loop_for_every_dtype_and_layout(monkeypatch):
    # Chunks of a few rows, so that every chunked pass crosses chunks.
    monkeypatch.setattr(generator_module, '_CHUNK_ENTRIES', 50)
    full = (np.random.RandomState(3).rand(150, 23) < 0.3).astype(np.uint8)
    full[[4, 70]] = 0
    full[[5, 149]] = 1
    expected = {
        ratio:
        _reference_make_partial_labels(
            full, 'single_positive' if ratio is None else 'ratio', ratio, 7)
        for ratio in (None, 0.5)
    }
    for array in (full, full.astype(bool), full.astype(np.int8),
                  full.astype(np.int64), full.astype(np.float32),
                  full.astype(np.float64), np.asfortranarray(full),
                  full.tolist()):
        for ratio, reference in expected.items():
            mode = 'single_positive' if ratio is None else 'ratio'
            np.testing.assert_array_equal(
                make_partial_labels(array, mode, ratio=ratio, seed=7),
                reference)


def test_shuffle_draws_depend_on_the_length_only():
    # The claim the negatives' shuffle rests on (numpy's mtrand.pyx,
    # _shuffle_raw): RandomState.shuffle draws random_interval(i) for
    # i = L - 1 .. 1 whatever the array holds and its dtype, and
    # permutation(n) is the shuffle of arange(n).
    for length in (0, 1, 2, 3, 17, 600):
        reference = np.random.RandomState(5)
        negatives = np.flatnonzero(np.arange(2 * length) % 2 == 1)
        reference.shuffle(negatives)
        for scratch in (np.empty(length, np.intp), np.zeros(length, np.int8),
                        np.arange(length, dtype=np.int32)[::-1].copy()):
            rng = np.random.RandomState(5)
            rng.shuffle(scratch)
            # The streams are at the same place afterwards.
            _, key, pos, _, _ = rng.get_state()
            _, ref_key, ref_pos, _, _ = reference.get_state()
            assert pos == ref_pos
            np.testing.assert_array_equal(key, ref_key)
        # Shuffling values in place applies the permutation's swaps.
        values = np.arange(100, 100 + length)
        np.random.RandomState(9).shuffle(values)
        perm = np.random.RandomState(9).permutation(length)
        np.testing.assert_array_equal(values, 100 + perm)


def test_check_gives_the_same_errors_without_isin(monkeypatch):
    monkeypatch.setattr(generator_module, '_CHUNK_ENTRIES', 8)
    bad = [
        np.array([[0, 1, 2]]),
        np.array([[0, -1, 1], [3, 0, 0], [1, 1, -7]]),
        np.array([[0.5, 1.0], [np.nan, 0], [np.nan, 2.5]]),
        np.array([[0, 1]] * 10 + [[0, 255]], dtype=np.uint8),
        np.array([[0, 1]] * 10 + [[-128, 0]], dtype=np.int8),
        np.array([[1 + 1j, 0]]),
        np.array([0, 1, 1]),
        np.array([['a', 'b']]),
    ]
    for full in bad:
        with pytest.raises(ValueError) as reference:
            _reference_check(full)
        with pytest.raises(ValueError) as new:
            generator_module.check_binary_matrix(full)
        assert str(new.value) == str(reference.value)
    for good in (np.zeros((5, 3), bool), np.eye(4, dtype=np.int16),
                 np.eye(4, dtype=np.float16), -np.zeros((2, 2))):
        assert generator_module.check_binary_matrix(good) is good


def _traced_peak(function, *args, **kwargs):
    """The result of a call and the peak of the memory it allocated."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        result = function(*args, **kwargs)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    return result, peak


def test_check_and_generators_allocate_little(monkeypatch):
    full = benchmark_label_pipeline.random_labels(12000, 200, 4.0)
    for matrix in (full, full.astype(np.int64), full.astype(np.float32)):
        _, peak = _traced_peak(generator_module.check_binary_matrix, matrix)
        # Chunks of 2**22 entries at most (the whole matrix here for the
        # one-byte dtype, which allocates nothing).
        assert peak <= 2 * min(matrix.size, 1 << 22) + 2**16
    # Chunks of 2**15 entries: the temporaries of a chunk are small, and
    # what is left is the result, the positives' indices (8 bytes each) and
    # a few numbers per row.
    monkeypatch.setattr(generator_module, '_CHUNK_ENTRIES', 1 << 15)
    monkeypatch.setattr(generator_module, '_ROWS_PER_STEP', 1 << 10)
    num_rows, num_positives = full.shape[0], int(full.sum())
    for mode, ratio in (('single_positive', None), ('ratio', 0.5)):
        observed, peak = _traced_peak(make_partial_labels, full, mode, ratio)
        assert peak <= observed.nbytes + 8 * num_positives + \
            32 * num_rows + 2**19


# ------------------------------------------------ the wrapper's selection
def test_select_rows_in_place(monkeypatch):
    monkeypatch.setattr(generator_module, '_CHUNK_ENTRIES', 12)
    rng = np.random.RandomState(0)
    source = rng.randint(-1, 2, size=(97, 5)).astype(np.int8)
    for rows in (np.arange(97), np.arange(0), np.array([96]),
                 np.sort(rng.choice(97, 40, replace=False)), np.arange(1, 97),
                 np.arange(0, 97, 2)):
        matrix = source.copy()
        selected = wrapper_module._select_rows(matrix, rows)
        np.testing.assert_array_equal(selected, source[rows])
        # A view (not owning its data) is selected too, then copied.
        selected = wrapper_module._select_rows(source.copy()[:, :], rows)
        np.testing.assert_array_equal(selected, source[rows])


# ---------------------------------------------- bulk and per-sample reads
def _both_reads(inner):
    """The annotation read by the bulk accessor and sample by sample."""
    inner.full_init()
    wrapper = PartialLabelDataset(inner, mode='annotated', lazy_init=True)
    num = len(inner)
    return (wrapper._read_annotation(num),
            wrapper._read_annotation_per_sample(num))


def _assert_same_reads(inner):
    assert hasattr(inner, 'get_label_matrices')
    (full, unknown), (full_ref, unknown_ref) = _both_reads(inner)
    assert full.dtype == full_ref.dtype == np.uint8
    np.testing.assert_array_equal(full, full_ref)
    assert (unknown is None) == (unknown_ref is None)
    if unknown is not None:
        assert unknown.dtype == np.bool_
        np.testing.assert_array_equal(unknown, unknown_ref)
    # And the states of every sample.
    states = np.where(full == 1, 1, -1)
    if unknown is not None:
        states[unknown] = 0
    if hasattr(inner, 'get_label_states'):
        np.testing.assert_array_equal(
            states,
            np.stack([inner.get_label_states(i) for i in range(len(inner))]))
    return full, unknown


@pytest.fixture
def coco_root(tmp_path):
    return test_dataset_coco.coco.__wrapped__(tmp_path)


@pytest.fixture
def voc_root(tmp_path):
    return test_dataset_voc.voc2012.__wrapped__(tmp_path)


@pytest.fixture
def nus_root(tmp_path):
    return test_dataset_nus_wide.root.__wrapped__(tmp_path)


@pytest.fixture
def cub_root(tmp_path):
    return test_dataset_cub.root.__wrapped__(tmp_path)


@pytest.fixture
def openimages_root(tmp_path):
    return test_dataset_openimages.root.__wrapped__(tmp_path)


@pytest.mark.parametrize('serialize', [True, False])
def test_coco_reads_alike(coco_root, serialize):
    for split in ('train', 'val'):
        _assert_same_reads(
            test_dataset_coco.build(
                data_root=coco_root, split=split, lazy_init=True))
    full, unknown = _assert_same_reads(
        test_dataset_coco.CocoMultiLabel(
            data_root=coco_root, serialize_data=serialize, lazy_init=True))
    assert unknown is None and full.sum() == 7


@pytest.mark.parametrize('difficult', ['negative', 'unknown', 'positive'])
def test_voc_reads_alike(voc_root, difficult):
    full, unknown = _assert_same_reads(
        test_dataset_voc.voc(
            data_root=voc_root, split='train', difficult=difficult))
    assert (unknown is not None) == (difficult == 'unknown')


def test_nus_wide_reads_alike(nus_root):
    for split in ('train', 'test'):
        _assert_same_reads(
            test_dataset_nus_wide.NUSWide(data_root=nus_root, split=split))
    cole = test_dataset_nus_wide.cole_root.__wrapped__(nus_root)
    _assert_same_reads(
        test_dataset_nus_wide.NUSWide(data_root=cole, ann_format='cole'))


def test_cub_reads_alike(cub_root):
    for kwargs in (dict(), dict(split='test'), dict(min_certainty=3)):
        _assert_same_reads(
            test_dataset_cub.CUBAttributes(data_root=cub_root, **kwargs))


def test_openimages_reads_alike(openimages_root):
    for kwargs in (dict(), dict(drop_images_without_positive=False),
                   dict(split='train', serialize_data=False)):
        full, unknown = _assert_same_reads(
            test_dataset_openimages.make(openimages_root, **kwargs))
        assert unknown is not None


def _custom_file(path, states, negatives=True):
    data_list = []
    for i, row in enumerate(states):
        item = dict(
            img_path=f'{i}.jpg', gt_label=np.flatnonzero(row == 1).tolist())
        if negatives:
            item['gt_label_negative'] = np.flatnonzero(row == -1).tolist()
        data_list.append(item)
    classes = [f'c{k}' for k in range(states.shape[1])]
    path.write_text(
        json.dumps(dict(metainfo=dict(classes=classes), data_list=data_list)))
    return str(path)


def _custom_states(num=40, classes=6):
    states = np.random.RandomState(2).choice([1, 0, -1],
                                             size=(num, classes),
                                             p=[0.3, 0.3, 0.4])
    states[1] = 0
    states[2] = -1
    states[3] = 1
    return states.astype(np.int8)


@pytest.mark.parametrize('unlisted', ['negative', 'unknown'])
@pytest.mark.parametrize('negatives', [True, False])
def test_custom_dataset_reads_alike(tmp_path, unlisted, negatives):
    states = _custom_states()
    ann = _custom_file(tmp_path / 'ann.json', states, negatives)
    full, unknown = _assert_same_reads(
        CustomMultiLabelDataset(ann_file=ann, unlisted=unlisted))
    np.testing.assert_array_equal(full, states == 1)
    if unlisted == 'unknown':
        expected = states == 0 if negatives else states != 1
        np.testing.assert_array_equal(unknown, expected)
    else:
        assert unknown is None
    # Every label listed: no unknown, even with unlisted='unknown'.
    listed = np.where(states == 0, -1, states)
    ann = _custom_file(tmp_path / 'listed.json', listed)
    _, unknown = _assert_same_reads(
        CustomMultiLabelDataset(
            ann_file=ann, unlisted='unknown', serialize_data=False))
    assert unknown is None


def test_custom_dataset_subsets_keep_the_lists(tmp_path):
    states = _custom_states()
    ann = _custom_file(tmp_path / 'ann.json', states)

    def build(**kwargs):
        return CustomMultiLabelDataset(
            ann_file=ann, unlisted='unknown', **kwargs)

    rows = [5, 0, 39, -2, 5]
    for dataset, expected in (
        (build(indices=rows), states[rows]),
        (build(indices=7, serialize_data=False), states[:7]),
        (build(indices=-3, serialize_data=False), states[-3:]),
        (build().get_subset([3, -1, 3]), states[[3, -1, 3]]),
        (build(serialize_data=False).get_subset(-4), states[-4:]),
    ):
        full, _ = _assert_same_reads(dataset)
        np.testing.assert_array_equal(full, expected == 1)
    dataset = build()
    dataset.get_subset_([10, 2])
    full, unknown = _assert_same_reads(dataset)
    np.testing.assert_array_equal(full, states[[10, 2]] == 1)
    dataset.get_subset_(1)
    full, _ = _assert_same_reads(dataset)
    np.testing.assert_array_equal(full, states[[10]] == 1)
    # The original keeps its own lists after get_subset.
    original = build(serialize_data=False)
    original.get_subset([1])
    full, _ = _assert_same_reads(original)
    np.testing.assert_array_equal(full, states == 1)


def test_lists_changed_after_filter_data_are_read_again(tmp_path):
    states = _custom_states()
    ann = _custom_file(tmp_path / 'ann.json', states)

    class DropsAfterTheCheck(CustomMultiLabelDataset):

        def filter_data(self):
            return super().filter_data()[::2]

    full, _ = _assert_same_reads(
        DropsAfterTheCheck(ann_file=ann, unlisted='unknown'))
    np.testing.assert_array_equal(full, states[::2] == 1)


def test_synthetic_reads_alike():
    dataset = SyntheticShapes(num_samples=30, num_classes=5, img_size=12)
    full, unknown = _assert_same_reads(dataset)
    np.testing.assert_array_equal(full, dataset.get_label_matrix())
    subset = dataset.get_subset([4, 1, 1])
    full, _ = _assert_same_reads(subset)
    np.testing.assert_array_equal(full, dataset.get_label_matrix()[[4, 1, 1]])
    dataset.get_subset_(-2)
    full, _ = _assert_same_reads(dataset)
    assert full.shape == (2, 5)


def test_label_matrices_equal_label_states(monkeypatch):
    monkeypatch.setattr(label_states_module, '_CHUNK_ENTRIES', 7)
    states = _custom_states(num=50, classes=4)
    pos = [np.flatnonzero(row == 1) for row in states]
    neg = [np.flatnonzero(row == -1) for row in states]

    def csr(lists):
        indptr = np.cumsum([0] + [len(x) for x in lists])
        return indptr, np.concatenate(lists).astype(np.int16)

    for unlisted in ('negative', 'unknown'):
        full, unknown = label_matrices(*csr(pos), *csr(neg), 4, unlisted)
        expected = np.stack(
            [label_states(p, n, 4, unlisted) for p, n in zip(pos, neg)])
        np.testing.assert_array_equal(full, expected == 1)
        if unlisted == 'negative':
            assert unknown is None
        else:
            np.testing.assert_array_equal(unknown, expected == 0)


# ------------------------------------------ the per-sample reader's checks
def _reference_read_per_sample(parts, num_classes):
    """``read_label_states_per_sample`` as it was, verbatim for the labels
    and the checks (two reductions per sample): ``parts`` is a list of
    ``('states', array)`` and ``('ids', list)`` samples."""
    num_samples = len(parts)
    full = np.zeros((num_samples, num_classes), dtype=np.uint8)
    unknown = None
    for i, (kind, value) in enumerate(parts):
        if kind == 'states':
            states = np.asarray(value)
            if states.shape != (num_classes, ):
                raise ValueError(
                    f'Sample {i} of the wrapped dataset has label states '
                    f'of shape {states.shape}; expected ({num_classes},).')
            full[i] = states == 1
            if (states == 0).any():
                if unknown is None:
                    unknown = np.zeros(full.shape, dtype=bool)
                unknown[i] = states == 0
            continue
        cat_ids = np.asarray(value)
        valid = cat_ids.ndim <= 1 and (
            cat_ids.size == 0 or np.issubdtype(cat_ids.dtype, np.integer)
            and 0 <= cat_ids.min() and cat_ids.max() < num_classes)
        if not valid:
            raise ValueError(
                f'Sample {i} of the wrapped dataset has category ids '
                f'{cat_ids.tolist()}; they must be a flat list of '
                f'integers in [0, {num_classes}) (a float or a string is '
                'not truncated or parsed).')
        full[i, cat_ids.reshape(-1).astype(np.int64)] = 1
    return full, unknown


class _Mixed:
    """Samples given one at a time, each by ``get_label_states`` or by
    ``get_cat_ids`` (as the parts of a ``ConcatDataset`` may), through
    :func:`~mmlml.datasets.partial.matrices.locate`."""

    def __init__(self, parts):
        self.datasets = [_Part(parts, 'states'), _Part(parts, 'ids')]
        self.parts = parts

    def _get_ori_dataset_idx(self, idx):
        return (0 if self.parts[idx][0] == 'states' else 1), idx


class _Part:

    pipeline = ()

    def __init__(self, parts, kind):
        self.parts = parts
        if kind == 'states':
            self.get_label_states = self._get
        else:
            self.get_cat_ids = self._get

    def _get(self, idx):
        return self.parts[idx][1]


def _random_parts(rng, num, classes, kinds=('states', 'ids')):
    parts = []
    for _ in range(num):
        kind = kinds[rng.integers(len(kinds))]
        if kind == 'states':
            parts.append(('states', rng.integers(-1, 2, classes, np.int8)))
            continue
        ids = rng.choice(classes, rng.integers(0, 4), replace=False)
        # Lists of ints, tuples, arrays of any integer dtype, a scalar.
        form = rng.integers(4)
        parts.append(
            ('ids',
             [ids.tolist(),
              tuple(ids.tolist()),
              ids.astype(np.int16), ids][form]
             if len(ids) != 1 or form < 3 else int(ids[0])))
    return parts


@pytest.mark.parametrize('seed', [0, 1, 2])
@pytest.mark.parametrize('kinds', [('states', 'ids'), ('ids', ), ('states', )])
def test_per_sample_reader_equals_the_old_checks(seed, kinds, monkeypatch):
    """The checks on whole arrays read the same labels as the two
    reductions per sample did, in chunks of samples."""
    monkeypatch.setattr(generator_module, '_CHUNK_ENTRIES', 50)
    rng = np.random.default_rng(seed)
    parts = _random_parts(rng, 97, 7, kinds)
    full, unknown, stock_voc = wrapper_module.read_label_states_per_sample(
        _Mixed(parts), len(parts), 7)
    full_ref, unknown_ref = _reference_read_per_sample(parts, 7)
    assert full.dtype == np.uint8 and not stock_voc
    np.testing.assert_array_equal(full, full_ref)
    if unknown_ref is None:
        assert unknown is None
    else:
        np.testing.assert_array_equal(unknown, unknown_ref)


def test_per_sample_reader_checks_good_ids_at_once(monkeypatch):
    """Good category ids are checked on the whole array: the per-sample
    check (two reductions per sample, 870k at a quarter of OpenImages) runs
    only to name a bad sample."""

    def per_sample_check(*args):
        raise AssertionError('checked sample by sample')

    monkeypatch.setattr(wrapper_module, '_check_cat_ids', per_sample_check)
    parts = _random_parts(np.random.default_rng(0), 50, 7, ('ids', ))
    full, _, _ = wrapper_module.read_label_states_per_sample(
        _Mixed(parts), len(parts), 7)
    np.testing.assert_array_equal(full,
                                  _reference_read_per_sample(parts, 7)[0])


#: Samples the per-sample check refuses (or, ``[True, 2]``, reads as
#: integers, as ``np.asarray`` does), each put after good samples.
_ODD_SAMPLES = [('ids', [1.0]), ('ids', [0, 1.5]), ('ids', ['1']),
                ('ids', [None]), ('ids', [[0, 1]]), ('ids', [7]),
                ('ids', [-1]), ('ids', [True]), ('ids', [True, 2]),
                ('ids', np.array([[0, 1]])), ('ids', [2**70]),
                ('states', np.zeros(6, np.int8)),
                ('states', np.zeros((1, 7), np.int8))]


@pytest.mark.parametrize('odd', _ODD_SAMPLES, ids=repr)
def test_per_sample_reader_names_the_first_bad_sample(odd, monkeypatch):
    """A bad sample is named as before, and an earlier one of another kind
    first: the reader's checks on whole arrays agree with the per-sample
    ones, errors included."""
    monkeypatch.setattr(generator_module, '_CHUNK_ENTRIES', 50)
    parts = _random_parts(np.random.default_rng(5), 30, 7)
    for where in (3, 29):
        sample = parts[:where] + [odd] + parts[where:]
        try:
            expected = _reference_read_per_sample(sample, 7)
        except ValueError as error:
            with pytest.raises(ValueError) as raised:
                wrapper_module.read_label_states_per_sample(
                    _Mixed(sample), len(sample), 7)
            assert str(raised.value) == str(error)
            continue
        full, _, _ = wrapper_module.read_label_states_per_sample(
            _Mixed(sample), len(sample), 7)
        np.testing.assert_array_equal(full, expected[0])
    # A bad id list after a bad state vector: the state vector is named.
    sample = parts[:3] + [('states', np.zeros(6, np.int8))
                          ] + parts[3:5] + [('ids', [9])]
    with pytest.raises(ValueError, match='Sample 3 .* label states'):
        wrapper_module.read_label_states_per_sample(
            _Mixed(sample), len(sample), 7)
    # ... and the other way round.
    sample = parts[:3] + [('ids', [9])
                          ] + parts[3:5] + [('states', np.zeros(6, np.int8))]
    with pytest.raises(ValueError, match=r'Sample 3 .* \[9\]'):
        wrapper_module.read_label_states_per_sample(
            _Mixed(sample), len(sample), 7)


# ----------------------------------------------- the wrapper's full_init
def _no_bulk(inner):
    """``inner`` behind a dataset without get_label_matrices (read per
    sample): the benchmark tool's ``PerSample``."""
    spec = importlib.util.spec_from_file_location(
        'benchmark_label_pipeline',
        osp.join(ROOT, 'tools', 'analysis', 'benchmark_label_pipeline.py'))
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return tool.PerSample(inner)


@pytest.mark.parametrize('kwargs', [
    dict(mode='single_positive', split='train'),
    dict(mode='ratio', ratio=0.5, split='val', val_labels='observed'),
    dict(mode='annotated', split=None),
    dict(mode='annotated', split='val'),
])
def test_full_init_is_the_same_both_ways(tmp_path, monkeypatch, kwargs):
    monkeypatch.setattr(generator_module, '_CHUNK_ENTRIES', 10)
    ann = _custom_file(tmp_path / 'ann.json', _custom_states(num=70))
    inner = CustomMultiLabelDataset(
        ann_file=ann, unlisted='unknown', serialize_data=False)
    bulk = PartialLabelDataset(inner, **kwargs)
    per_sample = PartialLabelDataset(_no_bulk(inner), **kwargs)
    np.testing.assert_array_equal(bulk.indices, per_sample.indices)
    for name in ('full_labels', 'observed_labels'):
        first, second = getattr(bulk, name), getattr(per_sample, name)
        assert first.dtype == second.dtype
        np.testing.assert_array_equal(first, second)
    np.testing.assert_array_equal(bulk._unknown, per_sample._unknown)
    assert bulk.statistics() == per_sample.statistics()
    assert bulk.eval_unknown == per_sample.eval_unknown
    for idx in (0, len(bulk) - 1):
        np.testing.assert_array_equal(
            bulk.get_annotation(idx), per_sample.get_annotation(idx))


def test_statistics_equal_the_whole_matrix_formulas(tmp_path, monkeypatch):
    monkeypatch.setattr(generator_module, '_CHUNK_ENTRIES', 9)
    ann = _custom_file(tmp_path / 'ann.json', _custom_states(num=70))
    inner = CustomMultiLabelDataset(
        ann_file=ann, unlisted='unknown', serialize_data=False)
    labels = tmp_path / 'labels.npy'
    observed = np.random.RandomState(4).randint(-1, 2, size=(70, 6))
    np.save(labels, observed.astype(np.int8))
    for kwargs in (dict(mode='annotated'),
                   dict(mode='file', label_file=str(labels), split='train')):
        dataset = PartialLabelDataset(inner, **kwargs)
        stats = dataset.statistics()
        full, obs = dataset.full_labels, dataset.observed_labels
        assert stats['num_positives'] == int(full.sum())
        assert stats['num_observed_positives'] == int((obs == 1).sum())
        assert stats['num_observed_negatives'] == int((obs == -1).sum())
        assert stats['num_unannotated'] == int((obs == 0).sum())
        known = ~dataset.annotation_unknown
        assert stats['num_false_observed_positives'] == int(
            ((obs == 1) & (full == 0) & known).sum())
        assert stats['num_false_observed_negatives'] == int(
            ((obs == -1) & (full == 1) & known).sum())
        assert stats['num_images_without_positive'] == int(
            (full.max(axis=1) == 0).sum())
        assert stats['num_images_without_observed_positive'] == int(
            (obs.max(axis=1) < 1).sum())
        assert stats['num_annotated_unknown'] == int(dataset._unknown.sum())


def test_full_init_memory_within_three_times_the_matrices():
    full = benchmark_label_pipeline.random_labels(6000, 300, 5.0)
    inner = benchmark_label_pipeline.GeneratedLabels(full)
    inner.full_init()
    for kwargs in (dict(mode='single_positive',
                        split='train'), dict(mode='annotated', split=None)):
        dataset = PartialLabelDataset(inner, lazy_init=True, **kwargs)
        _, peak = _traced_peak(dataset.full_init)
        final = dataset.full_labels.nbytes + dataset.observed_labels.nbytes
        assert peak <= 3 * final
        np.testing.assert_array_equal(dataset.full_labels,
                                      full[dataset.indices])


# --------------------------------------------------------- the benchmark
def test_benchmark_tool_runs(capsys):
    results = benchmark_label_pipeline.main([
        '--rows', '3000', '--classes', '40', '--positives', '3', '--repeats',
        '1'
    ])
    assert set(results) == set(benchmark_label_pipeline.STAGES)
    out = capsys.readouterr().out
    assert 'PartialLabelDataset.full_init' in out and 'peak/output' in out
    for seconds, peak, output in results.values():
        assert seconds >= 0 and peak is not None and output > 0
    seconds, peak, output = results['full_init']
    assert peak <= 3 * output
    with pytest.raises(SystemExit):
        benchmark_label_pipeline.main(['--rows', '0'])


def test_benchmark_dataset_is_the_matrix():
    full = benchmark_label_pipeline.random_labels(50, 9, 2.0, seed=3)
    assert full.dtype == np.uint8 and set(np.unique(full)) <= {0, 1}
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        inner = benchmark_label_pipeline.GeneratedLabels(full)
    full_read, unknown = inner.get_label_matrices()
    np.testing.assert_array_equal(full_read, full)
    assert unknown is None
