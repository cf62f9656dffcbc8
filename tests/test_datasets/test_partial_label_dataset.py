import copy
import json
import os
import os.path as osp
import pickle
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
from conftest import ROOT
from mmengine.dataset import (ClassBalancedDataset, ConcatDataset,
                              pseudo_collate)
from mmengine.registry import DefaultScope
from torch.utils.data import DataLoader

import mmlml  # noqa: F401
from mmlml.datasets import (PartialLabelDataset, make_partial_labels,
                            split_train_val)
from mmlml.registry import DATASETS

NUM_SAMPLES = 60
NUM_CLASSES = 6


class ZeroImage:
    """A transform that puts a small black image in the results."""

    def __call__(self, results):
        results['img'] = np.zeros((4, 4, 3), dtype=np.uint8)
        return results


def _full_matrix():
    rng = np.random.RandomState(0)
    full = (rng.rand(NUM_SAMPLES, NUM_CLASSES) < 0.4).astype(np.uint8)
    full[[2, 17]] = 0  # samples without any positive
    full[5] = 1  # a sample with every class
    return full


@pytest.fixture(scope='module')
def ann_file(tmp_path_factory):
    full = _full_matrix()
    data_list = [
        dict(img_path=f'{i}.jpg', gt_label=np.flatnonzero(row).tolist())
        for i, row in enumerate(full)
    ]
    path = tmp_path_factory.mktemp('partial') / 'ann.json'
    classes = [f'class{c}' for c in range(NUM_CLASSES)]
    with open(path, 'w') as f:
        json.dump(dict(metainfo=dict(classes=classes), data_list=data_list), f)
    return str(path)


def _inner(ann_file, image=False):
    pipeline = [ZeroImage()] if image else []
    pipeline.append(dict(type='PackInputs'))
    return dict(type='MultiLabelDataset', ann_file=ann_file, pipeline=pipeline)


def _build(ann_file, image=False, **kwargs):
    return DATASETS.build(
        dict(
            type='PartialLabelDataset',
            dataset=_inner(ann_file, image),
            **kwargs))


def test_registry_build_and_interface(ann_file):
    dataset = _build(ann_file, mode='single_positive', split='train')
    assert isinstance(dataset, PartialLabelDataset)
    train_idx, _ = split_train_val(NUM_SAMPLES)
    assert len(dataset) == len(train_idx) == 48
    assert list(dataset.metainfo['classes']) == [
        f'class{c}' for c in range(NUM_CLASSES)
    ]
    np.testing.assert_array_equal(dataset.indices, train_idx)
    assert dataset.full_labels.dtype == np.uint8
    assert dataset.observed_labels.dtype == np.int8
    np.testing.assert_array_equal(dataset.full_labels,
                                  _full_matrix()[train_idx])
    assert dataset.get_inner_index(3) == train_idx[3]
    assert dataset.get_inner_index(-1) == train_idx[-1]
    with pytest.raises(IndexError):
        dataset[len(dataset)]


def test_single_positive_equals_make_partial_labels(ann_file):
    full = _full_matrix()
    expected = make_partial_labels(full, 'single_positive', seed=1200)
    train_idx, val_idx = split_train_val(NUM_SAMPLES, 0.2, 1200)
    train = _build(ann_file, split='train')
    np.testing.assert_array_equal(train.observed_labels, expected[train_idx])
    val = _build(ann_file, split='val', val_labels='observed')
    np.testing.assert_array_equal(val.observed_labels, expected[val_idx])
    every = _build(ann_file, split=None)
    np.testing.assert_array_equal(every.observed_labels, expected)
    # Another seed, and the ratio mode.
    other = _build(ann_file, mode='ratio', ratio=0.5, seed=3)
    np.testing.assert_array_equal(
        other.observed_labels,
        make_partial_labels(full, 'ratio', ratio=0.5, seed=3))


def test_training_sample_labels(ann_file):
    dataset = _build(ann_file, mode='ratio', ratio=0.5, split='train')
    for idx in range(len(dataset)):
        sample = dataset[idx]['data_samples']
        observed = dataset.get_observed_label(idx)
        score = sample.gt_score
        assert score.dtype == torch.float32
        assert score.shape == (NUM_CLASSES, )
        assert set(score.unique().tolist()) <= {0., 1.}
        np.testing.assert_array_equal(score.numpy(), observed)
        np.testing.assert_array_equal(sample.gt_label.numpy(),
                                      np.flatnonzero(observed == 1))
        assert sample.gt_label.dtype == torch.int64
        assert sample.sample_idx == idx
        assert sample.num_classes == NUM_CLASSES
        assert dataset.get_cat_ids(idx) == sample.gt_label.tolist()
    # Negative indices map to the same sample index as positive ones.
    assert dataset[-1]['data_samples'].sample_idx == len(dataset) - 1


def test_full_labels_never_in_data_sample(ann_file):
    dataset = _build(ann_file, split=None)
    hidden = 0
    for idx in range(len(dataset)):
        sample = dataset[idx]['data_samples']
        full = dataset.get_full_label(idx)
        assert set(sample.keys()) == {'gt_label', 'gt_score'}
        assert set(sample.metainfo_keys()) == {
            'sample_idx', 'img_path', 'num_classes'
        }
        if (dataset.get_observed_label(idx) != full).any():
            hidden += 1
            assert sample.gt_label.tolist() != np.flatnonzero(full).tolist()
            assert not np.array_equal(sample.gt_score.numpy(), full)
    assert hidden > 10
    # get_data_info does not leak them either.
    info = dataset.get_data_info(5)
    assert info['gt_label'] == dataset.get_cat_ids(5)
    assert len(info['gt_label']) == 1
    np.testing.assert_array_equal(info['gt_score'],
                                  dataset.get_observed_label(5))
    assert info['sample_idx'] == 5


def test_full_mode(ann_file):
    dataset = _build(ann_file, mode='full', split='train')
    full = dataset.full_labels
    np.testing.assert_array_equal(dataset.observed_labels,
                                  np.where(full == 1, 1, -1))
    sample = dataset[0]['data_samples']
    np.testing.assert_array_equal(sample.gt_score.numpy(),
                                  np.where(full[0] == 1, 1., -1.))
    np.testing.assert_array_equal(sample.gt_label.numpy(),
                                  np.flatnonzero(full[0]))
    stats = dataset.statistics()
    assert stats['kept_fraction'] == 1.0
    assert stats['num_unannotated'] == 0
    assert stats['num_observed_negatives'] == int((full == 0).sum())


def test_split_disjoint_and_covering(ann_file):
    train = _build(ann_file, split='train', val_frac=0.25, split_seed=7)
    val = _build(ann_file, split='val', val_frac=0.25, split_seed=7)
    assert len(train) + len(val) == NUM_SAMPLES
    assert len(val) == 15
    assert len(np.intersect1d(train.indices, val.indices)) == 0
    np.testing.assert_array_equal(
        np.union1d(train.indices, val.indices), np.arange(NUM_SAMPLES))
    # Observed labels are generated before the split: the union of the two
    # splits is the generation over all samples.
    every = _build(ann_file, split=None)
    np.testing.assert_array_equal(train.observed_labels,
                                  every.observed_labels[train.indices])


def test_over_split_keeps_the_protocol(ann_file):
    """The tools that score other rows wrap the same dataset with the same
    protocol: the same observed labels, the same train/val split."""
    train = _build(
        ann_file,
        mode='ratio',
        ratio=0.5,
        seed=3,
        split='train',
        val_frac=0.25,
        split_seed=7)
    every = train.over_split(None)
    assert every.dataset is train.dataset and len(every) == NUM_SAMPLES
    assert every.protocol == train.protocol
    np.testing.assert_array_equal(train.observed_labels,
                                  every.observed_labels[train.indices])
    val = train.over_split('val')
    assert (val.val_frac, val.split_seed) == (0.25, 7)
    np.testing.assert_array_equal(
        np.union1d(train.indices, val.indices), np.arange(NUM_SAMPLES))


def test_val_clean_labels(ann_file):
    val = _build(ann_file, split='val')
    assert len(val) == 12
    for idx in range(len(val)):
        sample = val[idx]['data_samples']
        assert 'gt_score' not in sample
        full = val.get_full_label(idx)
        np.testing.assert_array_equal(sample.gt_label.numpy(),
                                      np.flatnonzero(full))
        assert sample.sample_idx == idx
        assert val.get_cat_ids(idx) == np.flatnonzero(full).tolist()
    assert 'gt_score' not in val.get_data_info(0)
    observed = _build(ann_file, split='val', val_labels='observed')
    sample = observed[0]['data_samples']
    np.testing.assert_array_equal(sample.gt_score.numpy(),
                                  observed.get_observed_label(0))


def test_deterministic_across_constructions_and_pickle(ann_file):
    first = _build(ann_file, mode='ratio', ratio=0.8, split='train')
    second = _build(ann_file, mode='ratio', ratio=0.8, split='train')
    np.testing.assert_array_equal(first.observed_labels,
                                  second.observed_labels)
    restored = pickle.loads(pickle.dumps(first))
    np.testing.assert_array_equal(restored.observed_labels,
                                  first.observed_labels)
    np.testing.assert_array_equal(restored[4]['data_samples'].gt_score,
                                  first[4]['data_samples'].gt_score)
    # An instance instead of a config dict.
    inner = DATASETS.build(_inner(ann_file))
    third = PartialLabelDataset(inner, mode='ratio', ratio=0.8, split='train')
    np.testing.assert_array_equal(third.observed_labels, first.observed_labels)


def test_lazy_init(ann_file):
    dataset = _build(ann_file, split='train', lazy_init=True)
    assert not dataset._fully_initialized
    assert dataset.metainfo['classes'][0] == 'class0'
    assert len(dataset) == 48
    assert dataset._fully_initialized
    lazy = _build(ann_file, split='train', lazy_init=True)
    assert lazy[0]['data_samples'].sample_idx == 0


def test_statistics(ann_file, monkeypatch):
    messages = []
    monkeypatch.setattr('mmlml.datasets.partial.dataset.print_log',
                        lambda msg, **kwargs: messages.append(msg))
    full = _full_matrix()
    dataset = _build(ann_file, mode='single_positive', split=None)
    # The statistics, then a warning about the images without positive.
    assert len(messages) == 2
    assert 'single_positive' in messages[0]
    num_empty = int((full.sum(axis=1) == 0).sum())
    assert num_empty and f'{num_empty} images carry no observed positive' \
        in messages[1]
    stats = dataset.statistics()
    num_pos = int(full.sum())
    num_nonempty = int((full.sum(axis=1) > 0).sum())
    assert stats['num_images'] == NUM_SAMPLES
    assert stats['num_classes'] == NUM_CLASSES
    assert stats['num_positives'] == num_pos
    assert stats['num_observed_positives'] == num_nonempty
    assert stats['num_observed_negatives'] == 0
    assert stats['num_unannotated'] == NUM_SAMPLES * NUM_CLASSES - num_nonempty
    assert stats['num_images_without_positive'] == (NUM_SAMPLES - num_nonempty)
    assert stats['num_images_without_observed_positive'] == num_empty
    assert stats['num_annotated_unknown'] == 0
    assert stats['positives_per_image'] == pytest.approx(num_pos / 60)
    assert stats['observed_positives_per_image'] == pytest.approx(
        num_nonempty / 60)
    assert stats['kept_fraction'] == pytest.approx(num_nonempty / num_pos)
    assert f'{num_pos} -> {num_nonempty}' in messages[0]
    dataset.full_init()  # already initialised: no more messages
    assert len(messages) == 2


def test_class_balanced_on_top(ann_file):
    # MMEngine's wrapper builds its dataset in the default scope, which a
    # Runner sets to 'mmpretrain'.
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        balanced = DATASETS.build(
            dict(
                type='ClassBalancedDataset',
                dataset=dict(
                    type='PartialLabelDataset',
                    dataset=_inner(ann_file),
                    split='train'),
                oversample_thr=0.5))
    assert isinstance(balanced, ClassBalancedDataset)
    assert isinstance(balanced.dataset, PartialLabelDataset)
    assert len(balanced) >= 48
    sample = balanced[0]['data_samples']
    assert 'gt_score' in sample


def test_concat_dataset_gets_unique_sample_idx(ann_file):
    parts = [DATASETS.build(_inner(ann_file)) for _ in range(2)]
    concat = ConcatDataset(parts)
    assert concat[NUM_SAMPLES]['data_samples'].sample_idx == 0
    dataset = PartialLabelDataset(concat, mode='full')
    assert len(dataset) == 2 * NUM_SAMPLES
    np.testing.assert_array_equal(dataset.full_labels,
                                  np.concatenate([_full_matrix()] * 2))
    sample_idx = [
        dataset[i]['data_samples'].sample_idx for i in range(len(dataset))
    ]
    assert sample_idx == list(range(2 * NUM_SAMPLES))
    # The parts read at once give what reading sample by sample gives.
    full, unknown = dataset._read_annotation_per_sample(2 * NUM_SAMPLES)
    np.testing.assert_array_equal(
        dataset._read_annotation(2 * NUM_SAMPLES)[0], full)
    assert (dataset._read_annotation(2 * NUM_SAMPLES)[1] is None) == \
        (unknown is None)


def test_dataloader_workers(ann_file):
    dataset = _build(ann_file, image=True, split='train')
    loader = DataLoader(
        dataset,
        batch_size=8,
        num_workers=2,
        collate_fn=pseudo_collate,
        shuffle=False)
    seen = 0
    for batch in loader:
        for sample in batch['data_samples']:
            idx = sample.sample_idx
            main = dataset[idx]['data_samples']
            torch.testing.assert_close(sample.gt_score, main.gt_score)
            torch.testing.assert_close(sample.gt_label, main.gt_label)
            seen += 1
    assert seen == len(dataset)


def test_data_preprocessor_stacks_gt_score(ann_file):
    from mmpretrain.registry import MODELS
    preprocessor = MODELS.build(
        dict(
            type='ClsDataPreprocessor',
            num_classes=NUM_CLASSES,
            to_onehot=True))
    dataset = _build(ann_file, image=True, mode='full', split='train')
    batch = pseudo_collate([dataset[i] for i in range(4)])
    out = preprocessor(batch, training=True)
    target = torch.stack([s.gt_score for s in out['data_samples']])
    np.testing.assert_array_equal(target.numpy(), dataset.observed_labels[:4])
    assert (target == -1).any()
    # Clean validation samples fall back to the one-hot target.
    val = _build(ann_file, image=True, split='val')
    batch = pseudo_collate([val[i] for i in range(4)])
    out = preprocessor(batch, training=False)
    target = torch.stack([s.gt_score for s in out['data_samples']])
    np.testing.assert_array_equal(target.numpy(), val.full_labels[:4])


@pytest.mark.parametrize(
    'kwargs, match',
    [
        (dict(mode='missing'), '^mode must be one of'),
        (dict(split='test'), '^split must be one of'),
        (dict(split='val', val_labels='noisy'), '^val_labels must be one of'),
        (dict(split='val', val_unknown='skip'), '^val_unknown must be one of'),
        (dict(mode='ratio'), 'required'),
        (dict(mode='ratio', ratio=2), r'\[0, 1\]'),
        (dict(mode='single_positive', ratio=0.5), 'must be None'),
        (dict(mode='full', ratio=0.5), 'must be None'),
        (dict(split='train', val_frac=1.5), '^val_frac must lie in'),
        # Checked without a split too: the value is wrong wherever it is.
        (dict(val_frac=-0.1), '^val_frac must lie in'),
        # A seed of None would draw other labels in every worker and rank.
        (dict(seed=None), '^seed is required.*fixed seed'),
        (dict(seed=1.5), '^seed must be an integer'),
        (dict(seed=True), '^seed must be an integer'),
        (dict(seed=-1), '^seed must be an integer'),
        (dict(seed=2**32), r'^seed must be an integer in \[0, 4294967295\]'),
        (dict(split_seed=None), '^split_seed is required'),
    ])
def test_bad_arguments(ann_file, kwargs, match):
    with pytest.raises(ValueError, match=match):
        _build(ann_file, **kwargs)


def test_arguments_are_checked_once_where_the_protocol_is_built(
        ann_file, monkeypatch):
    """The labels' protocol and the split are two frozen values, each
    checked once against its declarations when the wrapper is built: the
    generation and the split do not check them again."""
    import dataclasses

    from mmlml.datasets.partial import PartialLabelProtocol, SampleSplit
    from mmlml.datasets.partial import protocol as protocol_module
    calls = []
    check = protocol_module.check_hyperparameters
    monkeypatch.setattr(
        protocol_module, 'check_hyperparameters',
        lambda *args, **kwargs: calls.append(args[2]) or check(
            *args, **kwargs))
    dataset = _build(ann_file, mode='ratio', ratio=0.5, split='train')
    assert calls == ['PartialLabelProtocol', 'SampleSplit']
    assert dataset.protocol == PartialLabelProtocol('ratio', 0.5, 1200)
    assert dataset.samples == SampleSplit(split='train')
    assert (dataset.mode, dataset.ratio, dataset.split) == ('ratio', 0.5,
                                                            'train')
    with pytest.raises(dataclasses.FrozenInstanceError):
        dataset.protocol.ratio = 0.1
    with pytest.raises(AttributeError):
        dataset.ratio = 0.1


def test_keyword_signature_keeps_the_config_keys():
    """The config keys are explicit keyword-only arguments with the
    protocol's defaults; anything else is refused with its name."""
    import inspect
    params = inspect.signature(PartialLabelDataset).parameters
    assert list(params) == [
        'dataset', 'mode', 'ratio', 'seed', 'split', 'val_frac', 'split_seed',
        'val_labels', 'lazy_init', 'label_file', 'val_unknown', 'unexpected'
    ]
    assert all(p.kind is p.KEYWORD_ONLY for p in list(params.values())[1:-1])
    assert {
        name: p.default
        for name, p in params.items() if name != 'unexpected'
    } == dict(
        dataset=inspect.Parameter.empty,
        mode='single_positive',
        ratio=None,
        seed=1200,
        split=None,
        val_frac=0.2,
        split_seed=1200,
        val_labels='clean',
        lazy_init=False,
        label_file=None,
        val_unknown=None)
    with pytest.raises(TypeError, match="unexpected argument.*'ann_file'"):
        PartialLabelDataset(dict(type='X'), ann_file='a.json')


def test_ratio_is_read_from_its_decimal_text(ann_file):
    """A ratio given as a numpy float32 keeps what its decimal text says
    (0.8 keeps 2 of 5 positives), not its binary value."""
    from mmlml.datasets.partial import PartialLabelProtocol
    protocol = PartialLabelProtocol('ratio', np.float32(0.8))
    assert protocol.ratio == 0.8 and protocol.num_kept(5) == 2
    # The log lines name the labels' origin as the protocol describes it.
    assert protocol.describe() == 'ratio r=0.8'
    assert PartialLabelProtocol('file', label_file='a.npy').describe() == \
        'file a.npy'
    dataset = _build(ann_file, mode='ratio', ratio=np.float32(0.8))
    np.testing.assert_array_equal(
        dataset.observed_labels,
        make_partial_labels(_full_matrix(), 'ratio', ratio=0.8))


def test_bad_dataset():
    with pytest.raises(TypeError, match='dataset'):
        PartialLabelDataset([1, 2, 3])


def test_numpy_seed_and_index(ann_file):
    dataset = _build(ann_file, seed=np.int64(1200), split='train')
    reference = _build(ann_file, split='train')
    np.testing.assert_array_equal(dataset.observed_labels,
                                  reference.observed_labels)
    assert dataset[np.int64(3)]['data_samples'].sample_idx == 3
    for bad in (1.0, '1', True):
        with pytest.raises(TypeError, match='integers'):
            dataset[bad]


def test_non_integer_category_ids(tmp_path):
    path = tmp_path / 'ann.json'
    with open(path, 'w') as f:
        json.dump(
            dict(
                metainfo=dict(classes=['a', 'b', 'c']),
                data_list=[dict(img_path='0.jpg', gt_label=[0, 1.5])]), f)
    with pytest.raises(ValueError, match=r'Sample 0 .*\[0.0, 1.5\].*integers'):
        _build(str(path))


def test_pipeline_gets_only_the_observed_labels(ann_file):
    """The sample's info is built once, by get_data_info, and the wrapped
    dataset's pipeline runs on it: the full labels never enter the
    pipeline. `pipeline` can be replaced, as MMPretrain's
    browse_dataset.py does."""
    dataset = _build(ann_file, mode='ratio', ratio=0.8)
    assert dataset.pipeline is dataset.dataset.pipeline
    seen = []
    original = dataset.pipeline

    def recording(info):
        seen.append(copy.deepcopy(info))
        return original(info)

    dataset.pipeline = recording
    hidden = 0
    for idx in range(len(dataset)):
        sample = dataset[idx]['data_samples']
        info = seen[-1]
        observed = dataset.get_observed_label(idx)
        assert info['sample_idx'] == idx
        assert info['gt_label'] == np.flatnonzero(observed == 1).tolist()
        np.testing.assert_array_equal(info['gt_score'], observed)
        assert info.keys() == {
            'img_path', 'gt_label', 'gt_score', 'sample_idx'
        }
        np.testing.assert_array_equal(sample.gt_score.numpy(), observed)
        hidden += int((dataset.get_full_label(idx) != (observed == 1)).any())
    assert len(seen) == len(dataset) and hidden > 10


def test_pipeline_returning_none(ann_file):
    dataset = _build(ann_file)
    dataset.pipeline = lambda info: None
    with pytest.raises(RuntimeError, match='returned None for sample 4'):
        dataset[4]


@pytest.mark.slow
def test_browse_dataset_tool(tmp_path):
    """MMPretrain's tools/visualization/browse_dataset.py shows the
    samples of a wrapped dataset (it replaces `dataset.pipeline`), in every
    display mode: all but `original` lay the images out with matplotlib
    (`make_grid`, which matplotlib 3.11 breaks: requirements.txt pins an
    earlier one)."""
    import mmpretrain
    tool = osp.join(
        osp.dirname(mmpretrain.__file__), '.mim', 'tools', 'visualization',
        'browse_dataset.py')
    if not osp.exists(tool):
        pytest.skip('this MMPretrain install ships no tools')
    modes = ['original', 'transformed', 'concat', 'pipeline']
    # One interpreter runs the tool once per mode (one import of torch).
    script = textwrap.dedent("""
        import runpy, sys
        import mmlml
        tool, out_dir, *args = sys.argv[1:]
        for mode in {modes!r}:
            sys.argv = [tool, *args, '--mode', mode,
                        '--output-dir', out_dir + '/' + mode]
            runpy.run_path(tool, run_name='__main__')
        """).format(modes=modes)
    out_dir = tmp_path / 'browse'
    result = subprocess.run([
        sys.executable, '-c', script, tool,
        str(out_dir),
        osp.join(ROOT, 'configs', 'demo', 'an.py'), '--phase', 'train',
        '--show-number', '2', '--not-show', '--cfg-options',
        'train_dataloader.dataset.dataset.num_samples=50'
    ],
                            capture_output=True,
                            text=True,
                            cwd=ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    for mode in modes:
        assert sorted(
            p.name for p in (out_dir / mode).iterdir()) == ['0.jpg',
                                                            '1.jpg'], mode


def _label_file(tmp_path, labels, name='labels.npy'):
    path = tmp_path / name
    np.save(path, labels)
    return str(path)


def _file_labels():
    """Observed labels of every state, including positives that are not
    positives of the full labels (as pseudo-labels can be)."""
    rng = np.random.RandomState(1)
    return rng.randint(-1, 2, size=(NUM_SAMPLES, NUM_CLASSES)).astype(np.int8)


def test_file_mode_values_and_split(ann_file, tmp_path):
    labels = _file_labels()
    path = _label_file(tmp_path, labels)
    train_idx, val_idx = split_train_val(NUM_SAMPLES)
    every = _build(ann_file, mode='file', label_file=path)
    np.testing.assert_array_equal(every.observed_labels, labels)
    assert every.observed_labels.dtype == np.int8
    np.testing.assert_array_equal(every.full_labels, _full_matrix())
    train = _build(ann_file, mode='file', label_file=path, split='train')
    np.testing.assert_array_equal(train.indices, train_idx)
    np.testing.assert_array_equal(train.observed_labels, labels[train_idx])
    np.testing.assert_array_equal(train.full_labels, _full_matrix()[train_idx])
    sample = train[3]['data_samples']
    np.testing.assert_array_equal(sample.gt_score.numpy(),
                                  labels[train_idx[3]].astype(np.float32))
    np.testing.assert_array_equal(sample.gt_label.numpy(),
                                  np.flatnonzero(labels[train_idx[3]] == 1))
    val = _build(
        ann_file,
        mode='file',
        label_file=path,
        split='val',
        val_labels='observed')
    np.testing.assert_array_equal(val.observed_labels, labels[val_idx])
    # Clean validation samples carry the full labels, whatever the file.
    clean = _build(ann_file, mode='file', label_file=path, split='val')
    np.testing.assert_array_equal(clean[0]['data_samples'].gt_label.numpy(),
                                  np.flatnonzero(_full_matrix()[val_idx[0]]))
    assert 'Label file: ' + path in repr(train)


@pytest.mark.parametrize('dtype', [np.float64, np.float32, np.int64, bool])
def test_file_mode_dtypes(ann_file, tmp_path, dtype):
    """Cole et al.'s formatted_train_labels_obs.npy is a 0/1 float64 matrix;
    any integer or boolean dtype and integral floats are read as int8."""
    labels = _file_labels()
    if dtype is bool:
        labels = labels == 1
    path = _label_file(tmp_path, labels.astype(dtype))
    dataset = _build(ann_file, mode='file', label_file=path)
    assert dataset.observed_labels.dtype == np.int8
    np.testing.assert_array_equal(dataset.observed_labels,
                                  labels.astype(np.int8))


def test_file_mode_errors(ann_file, tmp_path):
    missing = str(tmp_path / 'missing.npy')
    with pytest.raises(FileNotFoundError, match=re.escape(missing)):
        _build(ann_file, mode='file', label_file=missing)
    # Read by full_init, not by the constructor, with lazy_init.
    lazy = _build(ann_file, mode='file', label_file=missing, lazy_init=True)
    with pytest.raises(FileNotFoundError, match='does not exist'):
        lazy.full_init()

    labels = _file_labels()
    cases = [
        (labels[:-1], ValueError,
         r'shape \(59, 6\).*MultiLabelDataset with 60 samples and 6 '
         r'classes.*60 x 6.*before the train/val split'),
        (labels.T, ValueError, r'shape \(6, 60\)'),
        (labels[0], ValueError, r'shape \(6,\)'),
        (np.where(labels == 1, 2, labels), ValueError,
         r'only -1 .*0 .*and 1 .*row \d+, class \d+: .*2'),
        (labels.astype(np.float32) / 2, ValueError, r'only -1.*0\.5'),
        (np.where(labels == 1, np.nan, labels), ValueError,
         r'non-finite values, e.g. at row \d+, class \d+: .*nan'),
        (np.full(labels.shape,
                 np.inf), ValueError, r'non-finite.*row 0, class 0'),
        (labels.astype(str), TypeError, r'dtype is <U'),
        (labels.astype(np.complex64), TypeError, 'dtype is complex64'),
    ]
    inner = DATASETS.build(_inner(ann_file))  # built once: faster
    for i, (bad, error, match) in enumerate(cases):
        path = _label_file(tmp_path, bad, f'bad{i}.npy')
        with pytest.raises(error, match=re.escape(path) + '.*' + match):
            PartialLabelDataset(inner, mode='file', label_file=path)
    archive = str(tmp_path / 'labels.npz')
    np.savez(archive, labels=labels)
    with pytest.raises(ValueError, match=r"\.npy matrix or a \.txt.*'\.npz'"):
        PartialLabelDataset(inner, mode='file', label_file=archive)
    renamed = str(tmp_path / 'archive.npy')
    os.rename(archive, renamed)
    with pytest.raises(ValueError, match=re.escape(renamed) + '.*archive'):
        PartialLabelDataset(inner, mode='file', label_file=renamed)
    pickled = str(tmp_path / 'objects.npy')
    np.save(pickled, labels.astype(object), allow_pickle=True)
    with pytest.raises(ValueError, match=re.escape(pickled) + '.*readable'):
        PartialLabelDataset(inner, mode='file', label_file=pickled)


@pytest.mark.parametrize('kwargs, error, match', [
    (dict(mode='file'), ValueError, 'label_file is required'),
    (dict(mode='single_positive', label_file='a.npy'), ValueError,
     "read only in the 'file' mode.*mode='single_positive'"),
    (dict(label_file='a.npy'), ValueError, "set mode='file'"),
    (dict(mode='file', label_file='a.npy',
          ratio=0.5), ValueError, "ratio must be None in the 'file' mode"),
    (dict(mode='file', label_file=3), TypeError, 'label_file must be'),
])
def test_file_mode_bad_arguments(ann_file, kwargs, error, match):
    with pytest.raises(error, match=match):
        _build(ann_file, **kwargs)


def test_file_mode_statistics(ann_file, tmp_path, monkeypatch):
    messages = []
    monkeypatch.setattr('mmlml.datasets.partial.dataset.print_log',
                        lambda msg, **kwargs: messages.append(msg))
    full = _full_matrix().astype(np.int8)
    labels = _file_labels()
    path = _label_file(tmp_path, labels)
    dataset = _build(ann_file, mode='file', label_file=path, split='train')
    train_idx, _ = split_train_val(NUM_SAMPLES)
    full, labels = full[train_idx], labels[train_idx]
    num_obs_pos = int((labels == 1).sum())
    num_false_pos = int(((labels == 1) & (full == 0)).sum())
    num_false_neg = int(((labels == -1) & (full == 1)).sum())
    assert num_false_pos > 0 and num_false_neg > 0
    stats = dataset.statistics()
    assert stats['mode'] == 'file' and stats['label_file'] == path
    assert stats['num_observed_positives'] == num_obs_pos
    assert stats['num_false_observed_positives'] == num_false_pos
    assert stats['num_false_observed_negatives'] == num_false_neg
    precision = 1 - num_false_pos / num_obs_pos
    assert stats['observed_positive_precision'] == pytest.approx(precision)
    assert stats['kept_fraction'] == pytest.approx(
        (num_obs_pos - num_false_pos) / full.sum())
    # The statistics (and a warning about images without positive).
    assert len([m for m in messages if 'no observed positive' not in m]) == 1
    assert f'[file {path}, split train]' in messages[0]
    assert (f'{num_false_pos} observed positives are negatives there, '
            f'{num_false_neg} observed negatives are positives; '
            f'{num_obs_pos} observed positives on known labels: precision '
            f'{100 * precision:.1f}%') in messages[0]
    # Generated labels never contradict the full labels (and say nothing).
    generated = _build(ann_file, mode='ratio', ratio=0.5)
    stats = generated.statistics()
    assert stats['num_false_observed_positives'] == 0
    assert stats['num_false_observed_negatives'] == 0
    assert stats['observed_positive_precision'] == 1.0
    assert stats['label_file'] is None
    assert not any('Against the full labels' in m for m in messages[-2:])
    # A file without observed positives (negatives only) has no precision.
    empty = _label_file(tmp_path, -np.ones((NUM_SAMPLES, NUM_CLASSES)),
                        'negatives.npy')
    stats = _build(ann_file, mode='file', label_file=empty).statistics()
    assert stats['observed_positive_precision'] is None
    assert 'precision n/a' in messages[-2]


class _RunsWhenUnpickled:
    """A pickle payload that leaves a mark when it is loaded."""

    def __init__(self, mark):
        self.mark = mark

    def __reduce__(self):
        return (open, (self.mark, 'w'))


@pytest.mark.parametrize(
    'wrap, where',
    [(lambda inner: inner, r'dataset\.ann_file'),
     (lambda inner: dict(type='RepeatDataset', times=2, dataset=inner),
      r'dataset\.dataset\.ann_file'),
     (lambda inner: dict(
         type='ClassBalancedDataset', oversample_thr=0.1, dataset=inner),
      r'dataset\.dataset\.ann_file'),
     (lambda inner: dict(type='ConcatDataset', datasets=[inner]),
      r'dataset\.datasets\[0\]\.ann_file')],
    ids=['plain', 'repeat', 'class-balanced', 'concat'])
def test_pickle_annotation_of_a_wrapped_dataset_is_refused(
        tmp_path, wrap, where):
    """MMPretrain's MultiLabelDataset reads its ann_file with
    mmengine.load, which unpickles a .pkl: inside the wrapper (also behind
    MMEngine's dataset wrappers) it is refused before anything reads it,
    naming the file and the formats to convert it to."""
    mark = tmp_path / 'payload_ran'
    ann_file = tmp_path / 'ann.pkl'
    with open(ann_file, 'wb') as f:
        pickle.dump(_RunsWhenUnpickled(str(mark)), f)
    inner = dict(
        type='MultiLabelDataset',
        ann_file=str(ann_file),
        pipeline=[dict(type='PackInputs')])
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        with pytest.raises(
                ValueError,
                match=where + r"\) '.*ann\.pkl' is a pickle file.*JSON"):
            DATASETS.build(
                dict(type='PartialLabelDataset', dataset=wrap(inner)))
    assert not mark.exists()


@pytest.mark.parametrize('name', ['.pkl', 'ann.Pickle'])
def test_pickle_annotation_is_decided_by_mmengines_rule(tmp_path, name):
    """``mmengine.load`` picks the format from the text after the last dot
    (a file named exactly ``.pkl`` is unpickled, though ``splitext`` sees
    no extension): the wrapper decides by the same rule, any case."""
    mark = tmp_path / 'payload_ran'
    ann_file = tmp_path / name
    with open(ann_file, 'wb') as f:
        pickle.dump(_RunsWhenUnpickled(str(mark)), f)
    with pytest.raises(ValueError, match='is a pickle file'):
        PartialLabelDataset(
            dict(type='MultiLabelDataset', ann_file=str(ann_file)))
    assert not mark.exists()


@pytest.mark.parametrize('name', ['ann.yaml', '.yaml', 'ann.YML'])
def test_yaml_annotation_of_a_stock_dataset_is_refused(tmp_path, name):
    """MMEngine reads YAML with a loader that builds any Python object:
    a stock dataset's YAML ann_file is refused (mmlml's datasets read YAML
    safely), by MMEngine's rule for the format."""
    ann_file = tmp_path / name
    ann_file.write_text('!!python/object/apply:os.getcwd []\n')
    with pytest.raises(ValueError, match=r"' is YAML.*JSON"):
        PartialLabelDataset(
            dict(type='MultiLabelDataset', ann_file=str(ann_file)))


def test_pipeline_without_pack_inputs_is_refused(ann_file):
    """A wrapped pipeline that packs nothing gives samples without
    sample_idx and labels in the model: refused when the wrapper is built,
    naming the transforms. An empty pipeline (labels only) is accepted."""
    inner = dict(
        type='MultiLabelDataset',
        ann_file=ann_file,
        pipeline=[dict(type='LoadImageFromFile')])
    with pytest.raises(
            ValueError,
            match=r"dataset\.pipeline: \['LoadImageFromFile'\]\) has no "
            r'PackInputs'):
        _build_wrapper(inner)
    with pytest.raises(ValueError, match=r'datasets\[1\]\.pipeline'):
        _build_wrapper(
            dict(type='ConcatDataset', datasets=[_inner(ann_file), inner]))
    assert len(_build_wrapper(dict(inner, pipeline=[]))) == NUM_SAMPLES


def _build_wrapper(inner):
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        return DATASETS.build(dict(type='PartialLabelDataset', dataset=inner))
