"""Every config under configs/ builds: model (and its loss), datasets,
evaluators and custom hooks."""
import contextlib
import glob
import os.path as osp
from unittest import mock

import numpy as np
import pytest
import torch
from benchmark_fixtures import write_benchmark_data
from conftest import ROOT, cpu_optim_wrapper
from mmengine.config import Config
from mmengine.optim import build_optim_wrapper
from mmengine.registry import DefaultScope, init_default_scope
from mmpretrain.registry import DATASETS, HOOKS, METRICS, MODELS

import mmlml  # noqa: F401
from mmlml.models.losses import example_state

#: Every config but the bases and the custom-dataset example (whose data is
#: the user's; tests/test_docs/test_custom_dataset_guide.py builds and
#: trains it on generated data).
CONFIGS = sorted(
    path for path in glob.glob(
        osp.join(ROOT, 'configs', '**', '*.py'), recursive=True)
    if not {'_base_', 'custom'} & set(path.split(osp.sep)))
_built_datasets = {}


@contextlib.contextmanager
def _without_random_init():
    """Modules built without drawing their initial weights (``torch.nn.init``
    leaves the tensors as allocated): this test never reads a backbone's
    weights, and a ResNet-50's draw is two thirds of a config's test."""
    with contextlib.ExitStack() as stack:
        for name in ('kaiming_uniform_', 'kaiming_normal_', 'uniform_',
                     'normal_', 'trunc_normal_', 'xavier_uniform_',
                     'xavier_normal_'):
            stack.enter_context(
                mock.patch.object(torch.nn.init, name, lambda t, *_, **__: t))
        yield


def _as_list(cfg):
    if cfg is None:
        return []
    return list(cfg) if isinstance(cfg, (list, tuple)) else [cfg]


def _temporary_label_files(dataset_cfg, tmp_path):
    """Point every ``label_file`` of a dataset config (PartialLabelDataset's
    'file' mode, e.g. the second stage of the pseudo-label demo, whose file
    a first stage writes) to a temporary file of the right shape: one
    observed positive per image."""
    if isinstance(dataset_cfg, (list, tuple)):
        for part in dataset_cfg:
            _temporary_label_files(part, tmp_path)
        return
    if not isinstance(dataset_cfg, dict):
        return
    for key in ('dataset', 'datasets'):
        _temporary_label_files(dataset_cfg.get(key), tmp_path)
    if dataset_cfg.get('label_file') is not None:
        # Build the wrapped dataset once, for its shape and for the wrapper.
        inner = DATASETS.build(dataset_cfg.dataset)
        num_samples, num_classes = len(inner), len(inner.metainfo['classes'])
        rows = np.arange(num_samples)
        labels = np.zeros((num_samples, num_classes), dtype=np.int8)
        labels[rows, rows % num_classes] = 1
        path = tmp_path / f'label_file_{len(list(tmp_path.iterdir()))}.npy'
        np.save(path, labels)
        dataset_cfg.label_file = str(path)
        dataset_cfg.dataset = inner


@pytest.fixture(scope='module')
def benchmark_data(tmp_path_factory):
    """A folder with tiny copies of the benchmarks in ``data/``, where the
    configs look for them (paths relative to the working directory)."""
    return write_benchmark_data(tmp_path_factory.mktemp('benchmarks'))


def test_configs_found():
    assert len(CONFIGS) >= 2


@pytest.mark.parametrize(
    'path', CONFIGS, ids=[osp.relpath(p, ROOT) for p in CONFIGS])
def test_config_builds(path, tmp_path, benchmark_data, monkeypatch):
    monkeypatch.chdir(benchmark_data)
    cfg = Config.fromfile(path)
    assert cfg.get('default_scope') == 'mmpretrain'
    assert 'mmlml' in cfg.custom_imports['imports']
    if DefaultScope.get_current_instance() is None:
        init_default_scope('mmpretrain')

    with _without_random_init():
        model = MODELS.build(cfg.model)
    num_classes = cfg.model.head.num_classes
    logits = torch.randn(4, num_classes, requires_grad=True)
    target = torch.zeros(4, num_classes)
    target[torch.arange(4), torch.arange(4) % num_classes] = 1
    loss_module = model.head.loss_module
    if hasattr(loss_module, 'set_epoch'):
        loss_module.set_epoch(1, cfg.train_cfg.max_epochs)
    # A stateful loss gets the state its head would look up.
    loss = loss_module(
        logits, target, avg_factor=4, **example_state(loss_module, logits))
    assert torch.isfinite(loss)
    loss.backward()
    build_optim_wrapper(model, cpu_optim_wrapper(cfg.optim_wrapper))

    for name in ('train_dataloader', 'val_dataloader', 'test_dataloader'):
        dataset_cfg = cfg[name].dataset
        _temporary_label_files(dataset_cfg, tmp_path)
        key = repr(dataset_cfg)  # demo configs share their datasets
        if key not in _built_datasets:
            dataset = DATASETS.build(dataset_cfg)
            assert len(dataset) > 0
            _built_datasets[key] = dataset
    for name in ('val_evaluator', 'test_evaluator'):
        for metric in _as_list(cfg.get(name)):
            METRICS.build(metric)
    for hook in _as_list(cfg.get('custom_hooks')):
        HOOKS.build(hook)


@pytest.mark.parametrize(
    'path', CONFIGS, ids=[osp.relpath(p, ROOT) for p in CONFIGS])
def test_train_and_val_split_the_same_images(path):
    """Cole et al.'s validation split is a part of the training images: a
    config whose training and validation sets wrap different images (or
    split them differently) would validate on training samples."""
    cfg = Config.fromfile(path)
    train, val = cfg.train_dataloader.dataset, cfg.val_dataloader.dataset
    if (train.get('type') != 'PartialLabelDataset'
            or val.get('type') != 'PartialLabelDataset'
            or val.get('split') != 'val'):
        return
    assert train.split == 'train'
    drop = ('pipeline', 'test_mode')
    images = [{
        k: v
        for k, v in d.dataset.items() if k not in drop
    } for d in (train, val)]
    assert images[0] == images[1]
    for key in ('seed', 'val_frac', 'split_seed'):
        assert train.get(key) == val.get(key)
    assert cfg.data_preprocessor.num_classes == cfg.model.head.num_classes
