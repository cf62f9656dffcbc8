"""Settings that used to fail deep in the first training step (or train
silently on nothing) are refused at construction or before the first
iteration, by a ``ValueError`` naming the setting to change."""
import os.path as osp

import numpy as np
import pytest
import torch
from conftest import ROOT, load_train_tool
from mmengine.config import Config
from mmengine.runner import Runner
from stateful_methods import assert_fails_before_training

import mmlml  # noqa: F401  (registers everything)
from mmlml.hooks import TrainingSetupCheckHook
from mmlml.hooks.training_setup_check_hook import uses_mmlml
from mmlml.models.losses import LOSS_CATALOG
from mmlml.registry import MODELS
from mmlml.utils.signatures import constructor_parameters

#: Losses with a ``loss_weight`` (``LossSum`` weighs its parts instead).
WEIGHTED_LOSSES = [
    name for name in LOSS_CATALOG
    if 'loss_weight' in constructor_parameters(MODELS.get(name))
]


def _build_loss(name, **kwargs):
    return MODELS.build(dict(type=name, **{**LOSS_CATALOG[name], **kwargs}))


# ------------------------------------------------------------ loss_weight
@pytest.mark.parametrize('value', [-1.0, -1e-8, np.float32(-2)])
@pytest.mark.parametrize('name', WEIGHTED_LOSSES)
def test_negative_loss_weight(name, value):
    """A negative ``loss_weight`` would maximise the loss: refused when the
    loss is built."""
    with pytest.raises(ValueError, match=r'loss_weight must lie in \[0, '):
        _build_loss(name, loss_weight=value)


@pytest.mark.parametrize('name', WEIGHTED_LOSSES)
def test_nan_and_zero_loss_weight(name):
    with pytest.raises(ValueError, match='loss_weight.*finite'):
        _build_loss(name, loss_weight=float('nan'))
    assert _build_loss(name, loss_weight=0).loss_weight == 0.0


def test_high_rank_regularizer_loss_weight():
    with pytest.raises(ValueError, match='loss_weight'):
        MODELS.build(dict(type='HighRankRegularizer', loss_weight=-1e-3))


# ------------------------------------------------------ expected_positives
@pytest.mark.parametrize('name', ['EPRLoss', 'ROLELoss'])
def test_expected_positives_must_be_positive(name):
    """k = 0 pushes every prediction to 0, the trivial all-negative
    solution the regulariser is there to avoid."""
    for value in (0, 0.0, -1):
        with pytest.raises(
                ValueError, match=r'expected_positives must lie in \(0, '):
            _build_loss(name, expected_positives=value)
    assert _build_loss(name, expected_positives=0.5).expected_positives == 0.5


def test_epr_functional_expected_positives_must_be_positive():
    from mmlml.models.losses.epr_loss import epr_loss
    with pytest.raises(ValueError, match='expected_positives'):
        epr_loss(
            torch.zeros(2, 3),
            torch.tensor([[1., 0., 0.], [0., 1., 0.]]),
            expected_positives=0)


# ------------------------------------------ settings that disagree (runs)
def _config(tiny_demo_config, extra):
    """The tiny demo config with ``extra`` appended (a child config)."""
    path = tiny_demo_config()
    with open(path, 'a') as file:
        file.write(extra)
    return path


HEAD_CLASSES = 'model = dict(head=dict(num_classes=7))\n'
PREPROCESSOR_CLASSES = 'model = dict(data_preprocessor=dict(num_classes=7))\n'
# How mmlml's dataset configs set it: the top-level key, which the Runner
# hands to the model.
TOP_LEVEL_PREPROCESSOR_CLASSES = 'data_preprocessor = dict(num_classes=7)\n'
# The tiny demo config has 51 training images.
BIG_BATCH = ('train_dataloader = dict(batch_size=64, drop_last=True, '
             'dataset=dict(dataset=dict(num_samples=64)))\n')

HEAD_MESSAGE = (r'model\.head\.num_classes is 7 but the training set .* has '
                r'20 classes.*set model\.head\.num_classes=20')
PREPROCESSOR_MESSAGE = (r'model\.data_preprocessor\.num_classes is 7 but '
                        r'model\.head\.num_classes is 20')
BATCH_MESSAGE = (r'train_dataloader\.batch_size \(64\) is larger than the '
                 r'training split \(51 samples.*drop_last=True.*'
                 r'at most 51')
NO_VALIDATION_SPLIT = ('train_dataloader = dict(dataset=dict(val_frac=0))\n'
                       'val_dataloader = dict(dataset=dict(val_frac=0))\n')
VALIDATION_MESSAGE = (r'the validation split \(val_dataloader\.dataset\) is '
                      r'empty \(its val_frac is 0\.0\).*val_cfg=None')


@pytest.mark.parametrize(
    'extra, message', [(HEAD_CLASSES, HEAD_MESSAGE),
                       (PREPROCESSOR_CLASSES, PREPROCESSOR_MESSAGE)],
    ids=['head', 'data_preprocessor'])
def test_num_classes_mismatch_hook(tiny_demo_config, extra, message):
    """A Runner built outside ``tools/train.py`` with the hook: the stock
    ``MultiLabelLinearClsHead`` with another ``num_classes`` than the
    dataset's fails before the first iteration, not with torch's size
    error at the first loss."""
    cfg = Config.fromfile(_config(tiny_demo_config, extra))
    cfg.custom_hooks = [dict(type='TrainingSetupCheckHook')]
    runner = Runner.from_cfg(cfg)
    assert any(
        isinstance(hook, TrainingSetupCheckHook) for hook in runner.hooks)
    assert_fails_before_training(runner, ValueError, message)


@pytest.mark.parametrize(
    'extra, message', [(HEAD_CLASSES, HEAD_MESSAGE),
                       (PREPROCESSOR_CLASSES, PREPROCESSOR_MESSAGE),
                       (TOP_LEVEL_PREPROCESSOR_CLASSES, PREPROCESSOR_MESSAGE),
                       (BIG_BATCH, BATCH_MESSAGE),
                       (NO_VALIDATION_SPLIT, VALIDATION_MESSAGE)],
    ids=[
        'head', 'data_preprocessor', 'top_level_data_preprocessor', 'batch',
        'empty_validation'
    ])
def test_train_tool_refuses_disagreeing_settings(tiny_demo_config, tmp_path,
                                                 extra, message):
    """``tools/train.py`` checks every run (no hook in the config): a batch
    larger than the split with ``drop_last`` fails with a message, not with
    MMEngine's ``end should be larger than begin`` from the schedulers."""
    tool = load_train_tool()
    with pytest.raises(ValueError, match=message):
        tool.main([
            _config(tiny_demo_config, extra), '--work-dir',
            str(tmp_path / 'work')
        ])
    assert not list((tmp_path / 'work').glob('*.pth'))


def test_batch_that_fits_passes_the_check(tiny_demo_config):
    """The check leaves a sound run alone (batch 51 of 51, drop_last)."""
    from mmlml.hooks.training_setup_check_hook import check_training_setup
    cfg = Config.fromfile(
        _config(tiny_demo_config,
                BIG_BATCH.replace('batch_size=64', 'batch_size=51')))
    runner = Runner.from_cfg(cfg)
    check_training_setup(runner)
    assert len(runner.train_loop.dataloader) == 1


#: A warm-up epoch, then MMEngine's own cosine annealing from epoch 1 to
#: the end of training (the demo schedule uses CosineAnnealingToEndLR,
#: which builds in a one-epoch run by itself).
STOCK_WARMUP_COSINE = (
    'param_scheduler = [\n'
    '    dict(type="LinearLR", start_factor=0.1, by_epoch=True, begin=0,\n'
    '         end=1, convert_to_iter_based=True),\n'
    '    dict(type="CosineAnnealingLR", by_epoch=True, begin=1,\n'
    '         eta_min=0., convert_to_iter_based=True)]\n')


def test_one_epoch_smoke_run_leaves_out_idle_schedulers(
        tiny_demo_config, tmp_path):
    """``max_epochs=1`` with a warm-up epoch, then MMEngine's cosine from
    epoch 1: MMEngine would refuse the cosine scheduler ("end should be
    larger than begin"); it never acts, so it is left out with a warning,
    and the run trains and validates."""
    tool = load_train_tool()
    path = tiny_demo_config(max_epochs=1)
    with open(path, 'a') as file:
        file.write(STOCK_WARMUP_COSINE)
    runner = tool.main([path, '--work-dir', str(tmp_path / 'work')])
    assert runner.epoch == 1
    assert [type(s).__name__ for s in runner.param_schedulers] == ['LinearLR']
    with open(osp.join(runner.log_dir, f'{runner.timestamp}.log')) as f:
        log = f.read()
    assert 'param_scheduler[1] (CosineAnnealingLR) begins at epoch 1' in log
    assert log.count('mmlml compatibility fixes applied') == 1


# -------------------------------------------------------------------- --amp
@pytest.mark.skipif(
    torch.cuda.is_available(), reason='mixed precision runs on a GPU')
def test_amp_without_gpu(tiny_demo_config):
    """``--amp`` on a machine without a GPU: refused when the command line
    is merged into the config, not by MMEngine's assertion."""
    tool = load_train_tool()
    config = tiny_demo_config()
    args = tool.parse_args([config, '--amp'])
    with pytest.raises(ValueError, match=r'--amp.*needs a CUDA'):
        tool.merge_args(Config.fromfile(config), args)
    args = tool.parse_args(
        [config, '--cfg-options', 'optim_wrapper.type=AmpOptimWrapper'])
    with pytest.raises(ValueError, match='AmpOptimWrapper'):
        tool.merge_args(Config.fromfile(config), args)
    # Without --amp the config is merged as before.
    cfg = tool.merge_args(Config.fromfile(config), tool.parse_args([config]))
    assert cfg.optim_wrapper.get('type', 'OptimWrapper') == 'OptimWrapper'


# --------------------------- configs without mmlml's runtime settings
def _stock_runtime_config(tmp_path, extra=''):
    """A config built on MMPretrain's own runtime settings (no
    ``default_hooks.setup_check``) that imports mmlml for its dataset
    wrapper and metric: the synthetic demo data, 64 images."""
    path = tmp_path / 'stock_runtime.py'
    path.write_text(
        f'_base_ = [{osp.join(ROOT, "configs/_base_/domains/synthetic_shapes.py")!r},\n'  # noqa: E501
        f'    {osp.join(ROOT, "configs/_base_/schedules/demo_sgd.py")!r},\n'
        "    'mmpretrain::_base_/default_runtime.py']\n"
        "custom_imports = dict(imports=['mmlml'], allow_failed_imports=False)\n"  # noqa: E501
        'train_dataloader = dict(batch_size=16, '
        'dataset=dict(dataset=dict(num_samples=64)))\n'
        'val_dataloader = dict(batch_size=16, '
        'dataset=dict(dataset=dict(num_samples=64)))\n'
        'test_dataloader = dict(batch_size=16, '
        'dataset=dict(num_samples=32))\n'
        'train_cfg = dict(max_epochs=1)\n'
        f'work_dir = {str(tmp_path / "work")!r}\n' + extra)
    return str(path)


#: Full labels: observed negatives (-1), which the config's stock
#: CrossEntropyLoss cannot read.
FULL_LABELS = "train_dataloader = dict(dataset=dict(mode='full'))\n"


@pytest.mark.parametrize(
    'extra, message', [(HEAD_CLASSES, HEAD_MESSAGE),
                       (PREPROCESSOR_CLASSES, PREPROCESSOR_MESSAGE),
                       (FULL_LABELS, "type='ANLoss'")],
    ids=['head', 'data_preprocessor', 'stock_loss_on_negatives'])
def test_runner_with_mmlml_components_is_checked(tmp_path, extra, message):
    """A config on MMPretrain's default runtime lists no setup check; its
    Runner, which builds mmlml's dataset wrapper and metric, gets one and
    fails before the first iteration, not at the first validation (nor
    trains a stock loss on -1 targets)."""
    cfg = Config.fromfile(_stock_runtime_config(tmp_path, extra))
    assert 'setup_check' not in cfg.default_hooks
    runner = Runner.from_cfg(cfg)
    assert uses_mmlml(runner)
    assert sum(
        isinstance(hook, TrainingSetupCheckHook) for hook in runner.hooks) == 1
    assert_fails_before_training(runner, ValueError, message)


def test_runner_with_a_mmlml_config_has_one_check(tiny_demo_config):
    """mmlml's configs list the hook: it is not added twice."""
    runner = Runner.from_cfg(Config.fromfile(tiny_demo_config()))
    assert sum(
        isinstance(hook, TrainingSetupCheckHook) for hook in runner.hooks) == 1


def test_runner_without_mmlml_components_is_left_alone(tmp_path):
    """Importing mmlml (custom_imports) adds nothing to a Runner that uses
    none of its components: stock model, dataset, metric and schedule."""
    cfg = Config.fromfile(_stock_runtime_config(tmp_path))
    cfg.model = dict(
        type='ImageClassifier',
        backbone=dict(type='ResNet_CIFAR', depth=18),
        neck=dict(type='GlobalAveragePooling'),
        head=dict(
            type='MultiLabelLinearClsHead', num_classes=20, in_channels=512))
    stock = dict(type='MultiLabelDataset', ann_file='unused.json')
    cfg.train_dataloader.dataset = stock
    cfg.val_dataloader.dataset = stock
    cfg.test_dataloader.dataset = stock
    cfg.val_evaluator = cfg.test_evaluator = dict(type='AveragePrecision')
    cfg.param_scheduler = [dict(type='CosineAnnealingLR', by_epoch=True)]
    runner = Runner.from_cfg(cfg)
    assert not uses_mmlml(runner)
    assert not any(
        isinstance(hook, TrainingSetupCheckHook) for hook in runner.hooks)
