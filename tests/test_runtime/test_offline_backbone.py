"""Offline use of a paper config: a failed checkpoint download names the
switch to the packaged EfficientNet-Lite0 weights, and that switch
(``--cfg-options``
:data:`~mmlml.compat.checkpoint_policy.OFFLINE_BACKBONE_OPTIONS`, which
the docs print) turns a paper config into one that builds and runs
with EfficientNet-Lite0. No network: the download goes to a closed local
port."""
import argparse
import os.path as osp

import pytest
import torch
from conftest import ROOT
from mmengine.config import Config, DictAction
from mmengine.runner import checkpoint as mm_checkpoint
from mmengine.runner.checkpoint import CheckpointLoader

import mmlml  # noqa: F401  (applies the loading policy)
from mmlml.compat.checkpoint_policy import (OFFLINE_BACKBONE_OPTIONS,
                                            CheckpointDownloadFailed)
from mmlml.registry import MODELS

PAPER_CONFIG = osp.join(ROOT, 'configs', 'baselines',
                        'an_resnet50_1xb16_coco2014-single.py')
#: Nothing listens on port 1 of the loopback: the connection is refused.
UNREACHABLE = 'http://127.0.0.1:1/resnet50-0676ba61.pth'


def switched(config):
    """``config`` with the offline switch applied as tools/train.py's
    ``--cfg-options`` applies it."""
    parser = argparse.ArgumentParser()
    parser.add_argument('--cfg-options', nargs='+', action=DictAction)
    options = parser.parse_args(['--cfg-options'] +
                                OFFLINE_BACKBONE_OPTIONS.split()).cfg_options
    cfg = Config.fromfile(config)
    cfg.merge_from_dict(options)
    return cfg


def test_failed_download_names_the_offline_switch(tmp_path, monkeypatch):
    torch.hub.set_dir(str(tmp_path / 'hub'))
    monkeypatch.setattr(mm_checkpoint, 'get_torchvision_models',
                        lambda: {'resnet50': UNREACHABLE})
    with pytest.raises(CheckpointDownloadFailed) as info:
        CheckpointLoader.load_checkpoint('torchvision://resnet50')
    message = str(info.value)
    assert '\n' not in message
    assert UNREACHABLE in message
    assert 'efficientnet_lite0.py' in message
    assert OFFLINE_BACKBONE_OPTIONS in message


def test_offline_switch_turns_a_paper_config_into_efficientnet_lite0():
    cfg = switched(PAPER_CONFIG)
    backbone = cfg.model.backbone
    assert backbone.type == 'EfficientNetLite'
    assert 'depth' not in backbone  # the ResNet's settings are gone
    assert backbone.init_cfg.checkpoint.endswith(
        'efficientnet_lite0_imagenet.pth')
    # The method's loss and the dataset's classes are kept.
    assert cfg.model.head.loss.type == 'ANLoss'
    assert cfg.data_preprocessor.mean == [127, 127, 127]
    model_cfg = cfg.model.copy()
    model_cfg.data_preprocessor = cfg.data_preprocessor
    model = MODELS.build(model_cfg).eval()
    with torch.no_grad():
        scores = model(torch.zeros(1, 3, 64, 64), mode='tensor')
    assert scores.shape == (1, cfg.model.head.num_classes)


def test_docs_print_the_offline_switch():
    with open(osp.join(ROOT, 'docs', 'custom_dataset.md')) as f:
        assert OFFLINE_BACKBONE_OPTIONS in f.read()
