"""LabelEstimatorHook (ROLE): a short training through MMEngine's Runner
that trains the estimator it initialised with the lr multiplier and
resumes it, its checks of the estimator's size and of the set-up, and its
arguments."""
import textwrap

import numpy as np
import pytest
import torch
from conftest import case
from mmengine.config import Config
from mmengine.runner import Runner

from mmlml.hooks import LabelEstimatorHook
from mmlml.models.heads import ROLELabelEstimator

#: Refused arguments (the case ids follow
#: ``tests/test_datasets/test_dataset_bad_input.py``).
ARGUMENT_CASES = [
    case('label-estimator-hook-seed-bad',
         lambda t: LabelEstimatorHook(seed=1.5), ValueError,
         r'seed must be an integer in \[0, 4294967295\], got 1\.5', 1.5),
    case('label-estimator-hook-seed-bad',
         lambda t: LabelEstimatorHook(seed=-3), ValueError,
         r'seed must be an integer in \[0, 4294967295\], got -3', -3),
]


@pytest.mark.parametrize('make, error, match', ARGUMENT_CASES)
def test_arguments_refused(make, error, match, tmp_path):
    with pytest.raises(error, match=match):
        make(tmp_path)


def test_numpy_arguments_accepted():
    """hook-numpy-arguments: numpy numbers are numbers."""
    assert LabelEstimatorHook(seed=np.int64(4)).seed == 4


def role_config(tiny_demo_config, tmp_path, num_samples=51, **head):
    """The tiny demo config (51 training samples, 2 epochs of 2
    iterations, no validation) with ROLE, the lr multiplier and the
    hook."""
    base = tiny_demo_config()
    head = dict(
        type='PartialLabelLinearClsHead',
        loss=dict(_delete_=True, type='ROLELoss', expected_positives=2.49),
        label_estimator=dict(
            type='ROLELabelEstimator', num_samples=num_samples,
            num_classes=20),
        **head)
    path = tmp_path / f'role_{num_samples}.py'
    path.write_text(
        textwrap.dedent(f"""
        _base_ = [{base!r}]
        model = dict(head={head!r})
        optim_wrapper = dict(paramwise_cfg=dict(custom_keys={{
            'head.label_estimator': dict(lr_mult=10, decay_mult=0)}}))
        custom_hooks = [dict(type='LabelEstimatorHook')]
        train_dataloader = dict(batch_size=32)
        train_cfg = dict(val_interval=3)
        """))
    return str(path)


def build_runner(config, **options):
    cfg = Config.fromfile(config)
    cfg.merge_from_dict(options)
    return Runner.from_cfg(cfg)


def test_training_trains_the_estimator_with_the_lr_multiplier(
        tiny_demo_config, tmp_path):
    runner = build_runner(role_config(tiny_demo_config, tmp_path))
    estimator = runner.model.head.label_estimator
    runner.train()
    assert estimator.is_initialized
    groups = runner.optim_wrapper.optimizer.param_groups
    (group, ) = [
        g for g in groups if any(p is estimator.logits for p in g['params'])
    ]
    others = [g for g in groups if g is not group]
    assert group['initial_lr'] == pytest.approx(10 * others[0]['initial_lr'])
    assert group['weight_decay'] == 0
    assert len(group['params']) == 1

    labels = runner.train_dataloader.dataset.observed_labels
    fresh = ROLELabelEstimator(*labels.shape)
    fresh.initialize(torch.from_numpy(labels), seed=runner.seed)
    moved = (estimator.logits.detach() - fresh.logits).abs()
    assert moved.min() > 0  # every row was visited or moved by momentum
    assert moved.max() > 3e-3  # 2 epochs at the demo's lr 0.01, times 10

    checkpoint = torch.load(
        f'{runner.work_dir}/epoch_2.pth', weights_only=False)
    state = checkpoint['state_dict']
    assert torch.equal(state['head.label_estimator.logits'],
                       estimator.logits.detach())
    assert state['head.label_estimator.initialized_shape'].tolist() == [51, 20]

    # Resuming keeps the trained estimates (no second initialisation).
    resumed = build_runner(
        role_config(tiny_demo_config, tmp_path),
        resume=True,
        load_from=f'{runner.work_dir}/epoch_2.pth')
    resumed.load_or_resume()
    LabelEstimatorHook().before_train(resumed)
    assert torch.equal(resumed.model.head.label_estimator.logits,
                       estimator.logits)


def test_hook_checks_the_size_and_the_set_up(tiny_demo_config, tmp_path):
    runner = build_runner(role_config(tiny_demo_config, tmp_path, 64))
    with pytest.raises(ValueError, match='num_samples=51 and num_classes=20'):
        runner.train()

    stock = build_runner(
        tiny_demo_config(), custom_hooks=[dict(type='LabelEstimatorHook')])
    with pytest.raises(TypeError, match='label_estimator=.*num_samples=51'):
        stock.train()

    config = role_config(tiny_demo_config, tmp_path)
    other_loss = build_runner(
        config, model=dict(head=dict(loss=dict(type='EPRLoss'))))
    with pytest.raises(TypeError, match='EPRLoss reads none'):
        other_loss.train()
