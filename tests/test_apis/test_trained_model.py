"""A checkpoint is used with the config of the model it was trained as:
the model parts' types are read from the config text MMEngine saves in the
checkpoint, as data (nothing executed), and a config that builds another
head (BoostLU's checkpoint with the linear head's config: the weights load
strictly, the predictions are another model's) is refused in one line, by
the tools that build a model from a checkpoint."""
import os.path as osp

import pytest
import torch
from conftest import ROOT, load_train_tool
from mmengine.config import Config

from mmlml.apis import build_model, check_trained_model
from mmlml.apis.trained_model import trained_model_types

SAVED = """
custom_imports = dict(imports=['mmlml'])
model = dict(
    backbone=dict(depth=18, type='mmpretrain.ResNet_CIFAR'),
    head=dict(loss=dict(type='LargeLoss'), type='BoostLUClsHead'),
    neck=None,
    type='ImageClassifier')
"""


def test_the_saved_model_is_read_as_data():
    assert trained_model_types(SAVED) == dict(
        model='ImageClassifier',
        backbone='ResNet_CIFAR',
        head='BoostLUClsHead')
    # Code in the text is parsed, never run; other text gives nothing.
    assert trained_model_types('import os\nos.system("false")\n') == {}
    assert trained_model_types('model = dict(') == {}
    assert trained_model_types(None) == {}


def test_another_head_is_refused_and_the_same_passes():
    linear = dict(
        type='ImageClassifier',
        backbone=dict(type='ResNet_CIFAR'),
        neck=dict(type='GlobalAveragePooling'),
        head=dict(type='MultiLabelLinearClsHead'))
    checkpoint = dict(meta=dict(cfg=SAVED))
    with pytest.raises(
            ValueError,
            match='^The checkpoint b.pth was trained as head BoostLUClsHead, '
            'but the config a.py builds head MultiLabelLinearClsHead: '):
        check_trained_model(linear, checkpoint, 'a.py', 'b.pth')
    boostlu = dict(linear, neck=None, head=dict(type='BoostLUClsHead'))
    check_trained_model(boostlu, checkpoint, 'a.py', 'b.pth')
    check_trained_model(linear, dict(state_dict={}), 'a.py', 'b.pth')


@pytest.mark.slow
def test_tools_refuse_a_checkpoint_of_another_head(tmp_path):
    """A one-epoch BoostLU demo checkpoint with the AN demo config: their
    weights share names, the tools' model builder refuses it."""
    config = tmp_path / 'boostlu.py'
    config.write_text(
        f"_base_ = [{osp.join(ROOT, 'configs/demo/boostlu_an.py')!r}]\n"
        'train_dataloader = dict(dataset=dict(dataset=dict(num_samples=32)))\n'
        'val_dataloader = dict(dataset=dict(dataset=dict(num_samples=32)))\n'
        'train_cfg = dict(max_epochs=1)\n'
        f"work_dir = {str(tmp_path / 'work')!r}\n")
    load_train_tool().main([str(config)])
    checkpoint = str(tmp_path / 'work' / 'epoch_1.pth')
    an = Config.fromfile(osp.join(ROOT, 'configs/demo/an.py'))
    with pytest.raises(ValueError, match='was trained as .*BoostLUClsHead'):
        build_model(an, checkpoint, 'cpu')
    model, _ = build_model(Config.fromfile(str(config)), checkpoint, 'cpu')
    assert type(model.head).__name__ == 'BoostLUClsHead'
    # The weights alone would have loaded: the check is what refuses.
    state = torch.load(
        checkpoint, map_location='cpu', weights_only=False)['state_dict']
    assert any(key.startswith('head.fc') for key in state)
