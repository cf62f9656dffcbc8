"""The epoch-dependent losses (SPLC, GR, Large Loss R and Ct) follow the
training progress of MMEngine's Runner: in epoch- and iteration-based
loops, refusing what they cannot follow, and an interrupted and resumed
run equals the uninterrupted one."""
import os.path as osp
import textwrap

import pytest
import torch
from conftest import ROOT
from mmengine.config import Config
from mmengine.hooks import Hook
from mmengine.runner import Runner

import mmlml  # noqa: F401
from mmlml.registry import HOOKS

#: The epoch-dependent stateless losses, with settings under which the
#: epoch changes what they compute within 3 short epochs.
LOSSES = {
    'splc': dict(type='SPLCLoss', change_epoch=1, tau=0.55),
    'gr': dict(type='GRLoss'),
    'll_r': dict(type='LargeLoss', mode='rejection', delta_rel=0.1),
    'll_ct': dict(type='LargeLoss', mode='temporary', delta_rel=0.1),
}


class StopTraining(Exception):
    """Raised by :class:`InterruptAfterIter`."""


@HOOKS.register_module()
class InterruptAfterIter(Hook):
    """Stop training after (1-based) iteration ``iteration``, once its
    checkpoint is saved, as a crash would."""

    priority = 'LOWEST'

    def __init__(self, iteration):
        self.iteration = iteration

    def after_train_iter(self,
                         runner,
                         batch_idx,
                         data_batch=None,
                         outputs=None):
        if runner.iter + 1 == self.iteration:
            raise StopTraining


@HOOKS.register_module()
class RecordLossEpoch(Hook):
    """Record the epoch and number of epochs the loss reads at every
    iteration."""

    priority = 'LOWEST'

    def before_train(self, runner):
        self.seen = []

    def after_train_iter(self,
                         runner,
                         batch_idx,
                         data_batch=None,
                         outputs=None):
        loss = runner.model.head.loss_module
        self.seen.append((loss.current_epoch(), loss.total_epochs()))


def write_config(tmp_path,
                 name,
                 loss,
                 by_epoch=True,
                 length=3,
                 hooks=(),
                 checkpoint_interval=1):
    """The tiny demo config (64 images: 51 train, batch 16, so 4 iterations
    per epoch) with ``loss``, a deterministic pipeline (no random flip),
    and ``length`` epochs (``by_epoch``) or iterations."""
    if by_epoch:
        loop = f'train_cfg = dict(max_epochs={length})'
        if length == 1:  # the demo's warm-up takes an epoch of its own
            loop += '\nparam_scheduler = []'
    else:
        loop = textwrap.dedent(f"""
            train_cfg = dict(_delete_=True, type='IterBasedTrainLoop',
                             max_iters={length}, val_interval=1000)
            log_processor = dict(by_epoch=False)
            param_scheduler = [
                dict(type='LinearLR', start_factor=0.1, by_epoch=False,
                     begin=0, end=4),
                dict(type='CosineAnnealingLR', by_epoch=False, begin=4,
                     end={length}, eta_min=0.)]""")
    sampler = 'DefaultSampler' if by_epoch else 'InfiniteSampler'
    interval = checkpoint_interval
    path = tmp_path / f'{name}.py'
    path.write_text(
        textwrap.dedent(f"""
        _base_ = [{osp.join(ROOT, 'configs/demo/an.py')!r}]
        train_dataloader = dict(
            batch_size=16,
            sampler=dict(_delete_=True, type={sampler!r}, shuffle=True),
            dataset=dict(dataset=dict(num_samples=64,
                                      pipeline=[dict(type='PackInputs')])))
        val_dataloader = dict(
            batch_size=16, dataset=dict(dataset=dict(num_samples=64)))
        test_dataloader = dict(batch_size=16, dataset=dict(num_samples=32))
        model = dict(head=dict(loss=dict(_delete_=True, **{loss!r})))
        custom_hooks = {list(hooks)!r}
        default_hooks = dict(
            logger=dict(interval=1),
            checkpoint=dict(by_epoch={by_epoch}, interval={interval},
                            max_keep_ckpts=-1, save_best=None))
        work_dir = {str(tmp_path / name)!r}
        experiment_name = {name!r}
        """) + loop + '\n')
    return str(path)


def runner_of(config, **options):
    cfg = Config.fromfile(config)
    cfg.merge_from_dict(options)
    return Runner.from_cfg(cfg)


def trained(runner):
    """The run's per-iteration losses and its final weights."""
    losses = runner.message_hub.get_scalar('train/loss').data[0]
    weights = {k: v.clone() for k, v in runner.model.state_dict().items()}
    return torch.as_tensor(losses), weights


def assert_same_run(a, b):
    torch.testing.assert_close(a[0], b[0], rtol=1e-4, atol=1e-5)
    for key, value in a[1].items():
        torch.testing.assert_close(
            b[1][key], value, rtol=1e-4, atol=1e-5, msg=key)


def epochs_seen(runner):
    return [
        hook for hook in runner.hooks if isinstance(hook, RecordLossEpoch)
    ][0].seen


# LL-Ct reads the epoch as LL-R does (only its correction differs).
@pytest.mark.slow
@pytest.mark.parametrize('method', ['gr', 'll_r', 'splc'])
def test_resume_after_an_epoch_equals_uninterrupted(tmp_path, method):
    runner = runner_of(write_config(tmp_path, 'full', LOSSES[method]))
    runner.train()
    full = trained(runner)

    config = write_config(
        tmp_path,
        'cut',
        LOSSES[method],
        hooks=[dict(type='InterruptAfterIter', iteration=9)])
    with pytest.raises(StopTraining):
        runner_of(config).train()
    checkpoint = osp.join(tmp_path, 'cut', 'epoch_2.pth')
    resumed = runner_of(
        write_config(tmp_path, 'resumed', LOSSES[method]),
        resume=True,
        load_from=checkpoint)
    resumed.train()
    assert resumed.epoch == 3 and resumed.iter == 12
    assert_same_run(full, trained(resumed))


@pytest.mark.slow
@pytest.mark.parametrize('method', ['splc', 'll_r'])
def test_iteration_loop_resumed_mid_epoch_equals_uninterrupted(
        tmp_path, method):
    """12 iterations of 4 per pass over the data = 3 epochs for the loss;
    a checkpoint every 6 iterations, so the run is cut inside epoch 1."""
    hooks = [dict(type='TrainingProgressHook'), dict(type='RecordLossEpoch')]
    config = write_config(
        tmp_path,
        'full',
        LOSSES[method],
        by_epoch=False,
        length=12,
        hooks=hooks,
        checkpoint_interval=6)
    runner = runner_of(config)
    runner.train()
    full = trained(runner)
    assert epochs_seen(runner) == [(e, 3) for e in (0, 1, 2) for _ in '1234']

    config = write_config(
        tmp_path,
        'cut',
        LOSSES[method],
        by_epoch=False,
        length=12,
        hooks=hooks + [dict(type='InterruptAfterIter', iteration=6)],
        checkpoint_interval=6)
    with pytest.raises(StopTraining):
        runner_of(config).train()
    resumed = runner_of(
        config, resume=True, load_from=osp.join(tmp_path, 'cut', 'iter_6.pth'))
    resumed.train()
    assert resumed.iter == 12
    assert epochs_seen(resumed) == [(1, 3), (1, 3)] + [(2, 3)] * 4
    assert_same_run(full, trained(resumed))


@pytest.mark.parametrize('method', sorted(LOSSES))
def test_iteration_loop_without_the_hook_is_refused(tmp_path, method):
    config = write_config(
        tmp_path, 'iters', LOSSES[method], by_epoch=False, length=8)
    runner = runner_of(config)
    with pytest.raises(RuntimeError, match='TrainingProgressHook'):
        runner.train()
    assert runner.iter == 0  # refused at the first iteration, untrained


def test_one_epoch_run_is_refused_unless_accepted(tmp_path):
    config = write_config(tmp_path, 'one', LOSSES['splc'], length=1)
    runner = runner_of(config)
    with pytest.raises(RuntimeError, match='single epoch'):
        runner.train()
    assert runner.iter == 0
    config = write_config(
        tmp_path,
        'accepted',
        LOSSES['splc'],
        length=1,
        hooks=[
            dict(type='TrainingProgressHook'),
            dict(type='RecordLossEpoch')
        ])
    runner = runner_of(config)
    runner.train()
    assert epochs_seen(runner) == [(0, 1)] * 4


def test_epoch_loop_keeps_the_runner_epochs_with_the_hook(tmp_path):
    config = write_config(
        tmp_path,
        'epochs',
        LOSSES['gr'],
        length=2,
        hooks=[
            dict(type='TrainingProgressHook'),
            dict(type='RecordLossEpoch')
        ])
    runner = runner_of(config)
    runner.train()
    assert epochs_seen(runner) == [(0, 2)] * 4 + [(1, 2)] * 4
    # Nothing of the hook's is left behind, or saved in checkpoints.
    assert 'iters_per_epoch' not in runner.message_hub.runtime_info
    checkpoint = torch.load(
        osp.join(tmp_path, 'epochs', 'epoch_2.pth'), weights_only=False)
    assert 'iters_per_epoch' not in checkpoint['message_hub']['runtime_info']


def test_loss_used_after_the_run_finished_is_refused(tmp_path):
    runner = runner_of(
        write_config(tmp_path, 'done', LOSSES['ll_r'], length=2))
    runner.train()
    loss = runner.model.head.loss_module
    cls_score, target = torch.zeros(2, 3), torch.tensor([0, 1])
    with pytest.raises(RuntimeError, match='no training is running'):
        loss(cls_score, target)
    fresh = mmlml.registry.MODELS.build(LOSSES['splc'])
    with pytest.raises(RuntimeError, match='set_epoch'):
        fresh(cls_score, target)
    fresh.set_epoch(1)
    assert torch.isfinite(fresh(cls_score, target))
