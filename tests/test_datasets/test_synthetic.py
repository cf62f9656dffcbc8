import os.path as osp

import numpy as np
import pytest
import torch
from conftest import ROOT
from mmengine.config import Config
from mmengine.dataset import pseudo_collate

import mmlml  # noqa: F401
from mmlml.datasets import SyntheticShapes
from mmlml.registry import DATASETS, MODELS

CONFIG_DIR = osp.join(ROOT, 'configs', 'demo')


@pytest.fixture(scope='module')
def big_train():
    return SyntheticShapes(split='train', num_samples=4000)


def test_build_from_registry():
    dataset = DATASETS.build(
        dict(type='SyntheticShapes', num_samples=8, num_classes=12))
    assert isinstance(dataset, SyntheticShapes)
    assert len(dataset) == 8
    assert len(dataset.metainfo['classes']) == 12
    assert len(set(dataset.metainfo['classes'])) == 12
    assert 'SyntheticShapes' in repr(dataset)


def test_data_info_shapes_and_dtypes():
    dataset = SyntheticShapes(num_samples=16, img_size=40)
    for idx in range(len(dataset)):
        info = dataset.get_data_info(idx)
        assert info['img'].shape == (40, 40, 3)
        assert info['img'].dtype == np.uint8
        assert info['img_shape'] == (40, 40)
        assert info['ori_shape'] == (40, 40)
        labels = info['gt_label']
        assert isinstance(labels, list) and len(labels) >= 1
        assert labels == sorted(set(labels))
        assert all(isinstance(c, int) and 0 <= c < 20 for c in labels)
        assert dataset.get_cat_ids(idx) == labels
    matrix = dataset.get_label_matrix()
    assert matrix.shape == (16, 20) and matrix.dtype == np.uint8
    # A copy: callers cannot corrupt the dataset.
    matrix[:] = 0
    assert dataset.get_label_matrix().sum() > 0


def _images(dataset):
    return np.stack(
        [dataset.get_data_info(i)['img'] for i in range(len(dataset))])


def test_deterministic_from_seed():
    a = SyntheticShapes(num_samples=64, seed=3)
    b = SyntheticShapes(num_samples=64, seed=3)
    c = SyntheticShapes(num_samples=64, seed=4)
    np.testing.assert_array_equal(_images(a), _images(b))
    np.testing.assert_array_equal(a.get_label_matrix(), b.get_label_matrix())
    assert not np.array_equal(_images(a), _images(c))
    assert not np.array_equal(a.get_label_matrix(), c.get_label_matrix())
    # The class design does not depend on the seed.
    assert a.metainfo['classes'] == c.metainfo['classes']


def test_splits_differ():
    train = SyntheticShapes(split='train', num_samples=64)
    test = SyntheticShapes(split='test', num_samples=64)
    assert train.metainfo['classes'] == test.metainfo['classes']
    assert not np.array_equal(_images(train), _images(test))
    assert not np.array_equal(train.get_label_matrix(),
                              test.get_label_matrix())


def test_label_statistics(big_train):
    matrix = big_train.get_label_matrix()
    per_image = matrix.sum(1)
    assert per_image.min() >= 1
    assert per_image.max() <= big_train.grid_size**2
    assert 2.0 <= per_image.mean() <= 3.0
    assert (per_image >= 3).mean() > 0.3
    # Long tail: a frequent head class, rare tail classes, and frequencies
    # that follow the class order (the base rates).
    freq = matrix.mean(0)
    assert freq[0] > 0.5
    assert 0.01 < freq.min() < 0.07
    assert freq[:5].mean() > 3 * freq[-5:].mean()
    rank_corr = np.corrcoef(
        np.argsort(np.argsort(freq)),
        np.argsort(np.argsort(big_train.class_frequencies())))[0, 1]
    assert rank_corr > 0.9


def test_cooccurrence_structure(big_train):
    matrix = big_train.get_label_matrix().astype(np.float64)
    freq = matrix.mean(0)
    joint = matrix.T @ matrix / len(matrix)
    lift = joint / np.outer(freq, freq)
    classes = np.arange(big_train.num_classes)
    scene = classes % big_train.NUM_SCENES
    free = classes >= big_train.NUM_SHARED
    same = (scene[:, None] == scene[None]) & free[:, None] & free[None]
    np.fill_diagonal(same, False)
    other = (scene[:, None] != scene[None]) & free[:, None] & free[None]
    # Classes of one scene co-occur more often than by chance.
    assert lift[same].mean() > 1.1
    assert lift[other].mean() < 1.0


def test_test_split_statistics_match_train(big_train):
    test = SyntheticShapes(split='test', num_samples=4000)
    np.testing.assert_allclose(
        test.get_label_matrix().mean(0),
        big_train.get_label_matrix().mean(0),
        atol=0.03)


def test_generation_is_fast():
    import time
    start = time.perf_counter()
    SyntheticShapes(num_samples=5000)
    assert time.perf_counter() - start < 10


@pytest.mark.parametrize('num_classes,img_size', [(2, 24), (64, 48)])
def test_configurable_size(num_classes, img_size):
    dataset = SyntheticShapes(
        num_samples=32, num_classes=num_classes, img_size=img_size)
    assert dataset.get_label_matrix().shape == (32, num_classes)
    assert dataset.get_data_info(0)['img'].shape == (img_size, img_size, 3)


@pytest.mark.parametrize('kwargs', [
    dict(split='val'),
    dict(num_samples=0),
    dict(num_classes=1),
    dict(num_classes=65),
    dict(img_size=8),
    dict(p_max=0.),
    dict(cooccurrence=4.),
    dict(noise_std=-1.),
])
def test_invalid_arguments(kwargs):
    with pytest.raises(ValueError):
        SyntheticShapes(**dict(dict(num_samples=4), **kwargs))


def test_rejects_file_arguments():
    with pytest.raises(TypeError, match='ann_file'):
        SyntheticShapes(num_samples=4, ann_file='a.json')


def test_pack_inputs_reach_data_preprocessor():
    pipeline = [
        dict(type='RandomFlip', prob=0.5, direction='horizontal'),
        dict(type='PackInputs'),
    ]
    dataset = SyntheticShapes(num_samples=6, pipeline=pipeline)
    batch = pseudo_collate([dataset[i] for i in range(len(dataset))])
    preprocessor = MODELS.build(
        dict(
            type='ClsDataPreprocessor',
            num_classes=20,
            mean=[42., 45., 43.],
            std=[39., 41., 39.],
            to_rgb=True,
            to_onehot=True))
    out = preprocessor(batch, training=True)
    assert out['inputs'].shape == (6, 3, 32, 32)
    assert out['inputs'].dtype == torch.float32
    assert out['inputs'].abs().max() < 10
    scores = torch.stack([s.gt_score for s in out['data_samples']])
    np.testing.assert_array_equal(scores.numpy(), dataset.get_label_matrix())


def test_wrapped_single_positive():
    wrapped = DATASETS.build(
        dict(
            type='PartialLabelDataset',
            dataset=dict(
                type='SyntheticShapes',
                num_samples=50,
                pipeline=[dict(type='PackInputs')]),
            mode='single_positive',
            split='train'))
    sample = wrapped[0]['data_samples']
    assert sample.gt_score.sum() == 1
    assert set(sample.gt_score.unique().tolist()) <= {0., 1.}


@pytest.mark.parametrize('name', ['an.py', 'full_labels.py'])
def test_demo_config_builds(name):
    cfg = Config.fromfile(osp.join(CONFIG_DIR, name))
    assert cfg.default_scope == 'mmpretrain'
    assert cfg.custom_imports['imports'] == ['mmlml']
    model_cfg = dict(cfg.model, data_preprocessor=cfg.data_preprocessor)
    model = MODELS.build(model_cfg)
    assert model.head.num_classes == cfg.num_classes
    for loader in ('train_dataloader', 'val_dataloader', 'test_dataloader'):
        dataset_cfg = cfg[loader].dataset
        if dataset_cfg.type == 'PartialLabelDataset':
            dataset_cfg.dataset.num_samples = 100
        else:
            dataset_cfg.num_samples = 100
        dataset = DATASETS.build(dataset_cfg)
        assert len(dataset) > 0
    base = Config.fromfile(osp.join(CONFIG_DIR, 'an.py'))
    train = SyntheticShapes(
        **{
            k: v
            for k, v in base.train_dataloader.dataset.dataset.items()
            if k not in ('type', 'pipeline')
        })
    mean_positives = train.get_label_matrix().sum(1).mean()
    assert base.expected_positives == round(float(mean_positives), 2)


def test_source_task_labels_only_the_other_pairs():
    target = SyntheticShapes(num_samples=50)
    source = SyntheticShapes(num_classes=64, source_for=20, num_samples=300)
    classes = source.metainfo['classes']
    assert len(classes) == 44
    assert not set(classes) & set(target.metainfo['classes'])
    # The same draws as the 64-class dataset, with the target's columns
    # dropped: the target's sprites are in the images, unlabelled.
    full = SyntheticShapes(num_classes=64, num_samples=300)
    np.testing.assert_array_equal(
        source.get_label_matrix(),
        full.get_label_matrix()[:, source.label_columns])
    np.testing.assert_array_equal(
        source.get_data_info(0)['img'],
        full.get_data_info(0)['img'])
    hidden = np.setdiff1d(np.arange(64), source.label_columns)
    assert full.get_label_matrix()[:, hidden].sum() > 0
    for bad in (1, 64, 2.5):
        with pytest.raises(ValueError, match='source_for must be'):
            SyntheticShapes(num_classes=64, source_for=bad, num_samples=10)
