"""BoostLUClsHead: the official forward, its limits (alpha = 1 is the
linear head on pooled features), gradients, the pooled-input error, the
configs of configs/boostlu/ and a short LL-Cp training."""
import glob
import os.path as osp

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from conftest import ROOT
from mmengine.config import Config
from mmengine.registry import DefaultScope
from mmengine.runner import Runner
from mmpretrain.structures import DataSample
from stateful_methods import method_config

from mmlml.hooks import LargeLossCorrectionHook
from mmlml.models.heads import BoostLUClsHead, PartialLabelLinearClsHead
from mmlml.registry import MODELS


class OfficialBoostLU(nn.Module):
    """The classifier part of the official model (youngwk/
    BridgeGapExplanationPAMC, ``models.py``, ``ImageClassifier``: the
    ``onebyone_conv`` of ``__init__`` and ``forward`` after the feature
    extractor), transcribed."""

    def __init__(self, feat_dim, num_classes, alpha):
        super().__init__()
        self.onebyone_conv = nn.Conv2d(feat_dim, num_classes, 1)
        self.alpha = alpha

    def forward(self, feats):
        CAM = self.onebyone_conv(feats)
        CAM = torch.where(CAM > 0, CAM * self.alpha, CAM)
        return F.adaptive_avg_pool2d(CAM, 1).squeeze(-1).squeeze(-1)


def head(alpha=5.0, num_classes=6, in_channels=8, **kwargs):
    torch.manual_seed(0)
    return BoostLUClsHead(
        num_classes=num_classes,
        in_channels=in_channels,
        alpha=alpha,
        init_cfg=None,
        **kwargs)


def official_with_weights_of(ours):
    num_classes, in_channels = ours.fc.weight.shape
    official = OfficialBoostLU(in_channels, num_classes, ours.alpha)
    with torch.no_grad():
        official.onebyone_conv.weight.copy_(ours.fc.weight[:, :, None, None])
        official.onebyone_conv.bias.copy_(ours.fc.bias)
    return official


@pytest.mark.parametrize('alpha', [5.0, 2.5, 1.0, 0.5])
@pytest.mark.parametrize('size', [(7, 7), (3, 5), (1, 1)])
def test_matches_the_official_forward(alpha, size):
    ours = head(alpha)
    official = official_with_weights_of(ours)
    gen = torch.Generator().manual_seed(1)
    feats = torch.randn(4, 8, *size, generator=gen) * 2
    expected = official(feats)
    torch.testing.assert_close(ours((feats, )), expected)
    # Any stage tuple: the last stage is classified.
    torch.testing.assert_close(ours((feats[:, :3], feats)), expected)
    # Training and test time share the forward.
    ours.eval()
    torch.testing.assert_close(ours((feats, )), expected)


def test_hand_values_boost_the_bias_with_the_map():
    """One class, one channel, two positions f = (1, -3), w = 1, b = 0.5:
    CAM = (1.5, -2.5), boosted (7.5, -2.5), logit 2.5. A bias added after
    pooling would give (5 * 1 - 3) / 2 + 0.5 = 1.5."""
    ours = head(5.0, num_classes=1, in_channels=1)
    with torch.no_grad():
        ours.fc.weight.fill_(1.0)
        ours.fc.bias.fill_(0.5)
    feats = torch.tensor([1.0, -3.0]).view(1, 1, 1, 2)
    torch.testing.assert_close(ours((feats, )), torch.tensor([[2.5]]))
    cam = ours.class_activation_map((feats, ))
    torch.testing.assert_close(cam, torch.tensor([7.5, -2.5]).view(1, 1, 1, 2))


def test_alpha_one_is_the_linear_head_on_pooled_features():
    ours = head(1.0)
    linear = PartialLabelLinearClsHead(
        num_classes=6, in_channels=8, init_cfg=None)
    linear.load_state_dict(ours.state_dict())
    feats = torch.randn(5, 8, 4, 6, generator=torch.Generator().manual_seed(2))
    torch.testing.assert_close(
        ours((feats, )), linear((feats.mean(dim=(2, 3)), )))


def test_boosting_raises_the_logits():
    """boost(z) >= z, so the logits grow with alpha (strictly where a
    CAM value is positive)."""
    feats = torch.randn(3, 8, 5, 5, generator=torch.Generator().manual_seed(3))
    logits = [head(alpha)((feats, )) for alpha in (1.0, 2.0, 5.0)]
    assert (logits[1] > logits[0]).all() and (logits[2] > logits[1]).all()


def test_gradients():
    """d(sum of logits)/d(b_c) = (alpha * #{CAM_c > 0} + #{CAM_c <= 0}) /
    HW per sample: the boost multiplies the gradient of the positive
    positions by alpha."""
    ours = head(5.0)
    gen = torch.Generator().manual_seed(4)
    feats = torch.randn(2, 8, 4, 4, generator=gen).requires_grad_()
    ours((feats, )).sum().backward()
    with torch.no_grad():
        positive = (F.conv2d(feats, ours.fc.weight[:, :, None, None],
                             ours.fc.bias) > 0).float()
    expected = (5.0 * positive + (1 - positive)).mean(dim=(2, 3)).sum(0)
    torch.testing.assert_close(ours.fc.bias.grad, expected)
    for grad in (ours.fc.weight.grad, feats.grad):
        assert torch.isfinite(grad).all() and grad.abs().sum() > 0
    # The official forward gives the same gradient.
    official = official_with_weights_of(ours)
    official(feats.detach()).sum().backward()
    torch.testing.assert_close(official.onebyone_conv.weight.grad[:, :, 0, 0],
                               ours.fc.weight.grad)


def test_pooled_input_is_refused():
    ours = head()
    with pytest.raises(ValueError, match=r'model\.neck=None'):
        ours((torch.randn(2, 8), ))
    with pytest.raises(ValueError, match=r'\(N, C, H, W\)'):
        ours((torch.randn(2, 8, 5), ))


def test_wrong_channels_and_empty_maps_are_refused():
    """Another channel count than ``in_channels``, or a map without any
    position, is refused naming the expected and the given shape."""
    ours = head()
    for shape in ((2, 5, 3, 3), (2, 8, 0, 0), (2, 8, 0, 3), (0, 8, 2, 0)):
        with pytest.raises(ValueError) as info:
            ours((torch.randn(shape), ))
        message = str(info.value)
        assert r'(N, 8, H, W) with H, W >= 1' in message
        assert f'got {shape}' in message and 'in_channels' in message
    assert ours((torch.randn(0, 8, 1, 1), )).shape == (0, 6)


def test_builds_from_a_config_dict():
    built = MODELS.build(
        dict(
            type='BoostLUClsHead',
            num_classes=20,
            in_channels=16,
            alpha=3,
            loss=dict(type='LargeLoss', mode='rejection', delta_rel=0.002)))
    assert isinstance(built, PartialLabelLinearClsHead)
    assert built.alpha == 3.0 and 'alpha=3' in repr(built)
    assert type(built.loss_module).__name__ == 'LargeLoss'
    assert MODELS.build(
        dict(type='BoostLUClsHead', num_classes=2, in_channels=4)).alpha == 5
    for alpha in (0, -1, float('inf'), 'five'):
        with pytest.raises(ValueError, match='alpha'):
            head(alpha)


BOOSTLU_CONFIGS = sorted(
    glob.glob(osp.join(ROOT, 'configs', 'boostlu', '*.py')))


def test_boostlu_configs_classify_the_unpooled_map():
    """Every config of configs/boostlu/ is its Large Loss baseline with the
    BoostLU head on the backbone's map and the official recipe."""
    assert len(BOOSTLU_CONFIGS) == 12
    modes = {'ll-r': 'rejection', 'll-ct': 'temporary', 'll-cp': 'permanent'}
    delta = {'ll-r': 0.005, 'll-ct': 0.002, 'll-cp': 0.001}
    for path in BOOSTLU_CONFIGS:
        method = osp.basename(path).split('_')[0].replace('-boostlu', '')
        cfg = Config.fromfile(path)
        assert cfg.model.neck is None
        assert cfg.model.head.type == 'BoostLUClsHead'
        assert cfg.model.head.alpha == 5
        loss = cfg.model.head.loss
        assert (loss.type, loss.mode) == ('LargeLoss', modes[method])
        assert loss.delta_rel == delta[method]
        assert loss.loss_weight == 1 / cfg.model.head.num_classes
        optimizer = cfg.optim_wrapper.optimizer
        assert optimizer == dict(
            type='Adam', lr=1e-5, betas=(0.9, 0.999), weight_decay=0.)
        lr_mult = cfg.optim_wrapper.paramwise_cfg.custom_keys.head.lr_mult
        assert lr_mult == 10
        assert cfg.train_dataloader.batch_size == 16
        assert cfg.train_cfg.max_epochs == 10
        hooks = [h.type for h in cfg.get('custom_hooks', [])]
        assert hooks == (['LargeLossCorrectionHook']
                         if method == 'll-cp' else [])


def test_a_boostlu_config_classifies_the_resnet50_map():
    """The model of a config of configs/boostlu/ (ResNet-50 without its
    pooling neck, 64 x 64 inputs, no pretrained weights): a training loss
    whose gradient reaches the backbone, and predictions."""
    cfg = Config.fromfile(
        osp.join(ROOT, 'configs', 'boostlu',
                 'll-r-boostlu_resnet50_1xb16_voc2012-single.py'))
    cfg.model.backbone.init_cfg = None
    torch.manual_seed(0)
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        model = MODELS.build(cfg.model)
    assert not model.with_neck and isinstance(model.head, BoostLUClsHead)
    model.head.loss_module.set_epoch(1, cfg.train_cfg.max_epochs)
    inputs = torch.randn(2, 3, 64, 64)
    samples = [DataSample().set_gt_label([c]) for c in (3, 11)]
    loss = model(inputs, samples, mode='loss')['loss']
    assert torch.isfinite(loss)
    loss.backward()
    grad = model.backbone.conv1.weight.grad
    assert torch.isfinite(grad).all() and grad.abs().sum() > 0
    model.eval()
    with torch.no_grad():
        predictions = model(inputs, mode='predict')
    assert [p.pred_score.shape for p in predictions] == [(20, )] * 2


def test_ll_cp_training_with_the_boostlu_head(tiny_demo_config, tmp_path):
    """LL-Cp (LargeLoss mode='permanent' + LargeLossCorrectionHook) with
    the BoostLU head on the tiny demo cut to 32 images (25 train / 7 val):
    two epochs of 2 batches (16 and 9 images x 20 classes); the second
    corrects ceil(320 * 0.01) = 4 entries of the first batch and
    ceil(180 * 0.01) = 2 of the second, through the head's label store."""
    overrides = dict(
        model=dict(
            neck=None,
            head=dict(
                type='BoostLUClsHead',
                alpha=5.0,
                loss=dict(
                    _delete_=True,
                    type='LargeLoss',
                    mode='permanent',
                    delta_rel=0.01))),
        custom_hooks=[dict(type='LargeLossCorrectionHook')])
    config = method_config(
        tiny_demo_config, tmp_path, overrides, 'boostlu_ll_cp', max_epochs=2)
    cfg = Config.fromfile(config)
    cfg.default_hooks.checkpoint = dict(type='CheckpointHook', interval=-1)
    for loader in (cfg.train_dataloader, cfg.val_dataloader):
        loader.dataset.dataset.num_samples = 32
    cfg.train_cfg.val_interval = 10  # validated once, after training
    runner = Runner.from_cfg(cfg)
    assert not runner.model.with_neck
    assert isinstance(runner.model.head, BoostLUClsHead)
    runner.train()
    store = runner.model.head.label_store
    assert store.num_pseudo_labels == 4 + 2
    hook = next(
        h for h in runner.hooks if isinstance(h, LargeLossCorrectionHook))
    labelled = store.pseudo_label_mask().numpy()
    assert (hook.dataset.observed_labels[labelled] == 0).all()
    metrics = runner.val_loop.run()
    assert 0 <= metrics['multi-label/mAP'] <= 100
