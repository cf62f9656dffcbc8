"""Every config under configs/ builds: model (and its loss), datasets,
evaluators and custom hooks."""
import glob
import os.path as osp

import pytest
import torch
from conftest import ROOT
from mmengine.config import Config
from mmengine.registry import DefaultScope, init_default_scope
from mmpretrain.registry import DATASETS, HOOKS, METRICS, MODELS

import mmlml  # noqa: F401

CONFIGS = sorted(
    path for path in glob.glob(
        osp.join(ROOT, 'configs', '**', '*.py'), recursive=True)
    if '_base_' not in path.split(osp.sep))
_built_datasets = {}


def _as_list(cfg):
    if cfg is None:
        return []
    return list(cfg) if isinstance(cfg, (list, tuple)) else [cfg]


def test_configs_found():
    assert len(CONFIGS) >= 2


@pytest.mark.parametrize(
    'path', CONFIGS, ids=[osp.relpath(p, ROOT) for p in CONFIGS])
def test_config_builds(path):
    cfg = Config.fromfile(path)
    assert cfg.get('default_scope') == 'mmpretrain'
    assert 'mmlml' in cfg.custom_imports['imports']
    if DefaultScope.get_current_instance() is None:
        init_default_scope('mmpretrain')

    model = MODELS.build(cfg.model)
    num_classes = cfg.model.head.num_classes
    logits = torch.randn(4, num_classes, requires_grad=True)
    target = torch.zeros(4, num_classes)
    target[torch.arange(4), torch.arange(4) % num_classes] = 1
    loss_module = model.head.loss_module
    if hasattr(loss_module, 'set_epoch'):
        loss_module.set_epoch(1, cfg.train_cfg.max_epochs)
    loss = loss_module(logits, target, avg_factor=4)
    assert torch.isfinite(loss)
    loss.backward()

    for name in ('train_dataloader', 'val_dataloader', 'test_dataloader'):
        dataset_cfg = cfg[name].dataset
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
