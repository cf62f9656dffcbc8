"""The stateful methods as config overrides of the tiny demo config, and
the hooks the stateful training tests add (importable by a torchrun
subprocess through ``custom_imports``)."""
import os
import os.path as osp
import signal
import textwrap

import pytest
import torch
from mmengine.config import Config
from mmengine.dist import get_rank
from mmengine.hooks import Hook
from mmengine.model import is_model_wrapper
from mmengine.runner import Runner

from mmlml.registry import HOOKS


class HandOver:
    """A head's side of the loss-input hand-over (``pop_loss_inputs``): a
    hook under test reads ``inputs`` once, as from a training head."""

    inputs = None

    def pop_loss_inputs(self):
        inputs, self.inputs = self.inputs, None
        return inputs


def store_method(loss, *hooks):
    """The overrides of a method made of a loss (read by a
    ``PartialLabelLinearClsHead``) and the hooks that keep its state."""
    return dict(
        model=dict(
            head=dict(
                type='PartialLabelLinearClsHead',
                loss=dict(_delete_=True, **loss))),
        custom_hooks=list(hooks))


#: Method name -> the ``model`` and ``custom_hooks`` of its config (the
#: tiny demo config trains 3 epochs of 4 iterations).
METHODS = {
    'em_apl':
    dict(
        model=dict(
            head=dict(
                type='PartialLabelLinearClsHead',
                loss=dict(
                    _delete_=True, type='EMAPLLoss', alpha=0.2, beta=0.5))),
        custom_hooks=[dict(type='APLHook', warmup_epochs=1)]),
    'em_apl_extra_pass':
    dict(
        model=dict(
            head=dict(
                type='PartialLabelLinearClsHead',
                loss=dict(
                    _delete_=True, type='EMAPLLoss', alpha=0.2, beta=0.5))),
        custom_hooks=[dict(type='APLHook', warmup_epochs=1, extra_pass=True)]),
    'll_cp':
    store_method(
        dict(type='LargeLoss', mode='permanent', delta_rel=0.01),
        dict(type='LargeLossCorrectionHook')),
    'opml_sp':
    store_method(
        dict(
            type='LossSum',
            losses=[
                dict(type='OPMLSPLoss', rho=0.5),
                dict(type='HighRankRegularizer'),
            ]), dict(type='ClassAPCorrectionHook', warmup_epochs=1,
                     delta=1.0)),
    'role':
    dict(
        model=dict(
            head=dict(
                type='PartialLabelLinearClsHead',
                loss=dict(
                    _delete_=True, type='ROLELoss', expected_positives=2.49),
                label_estimator=dict(
                    type='ROLELabelEstimator', num_samples=51,
                    num_classes=20))),
        custom_hooks=[dict(type='LabelEstimatorHook')]),
}

#: A training pipeline of random augmentation (NumPy's generator).
RANDOM_PIPELINE = [
    dict(type='RandomResizedCrop', scale=32, crop_ratio_range=(0.5, 1.0)),
    dict(type='RandomFlip', prob=0.5, direction='horizontal'),
    dict(type='PackInputs'),
]


def method_config(tiny_demo_config,
                  tmp_path,
                  method,
                  name,
                  extra_hooks=(),
                  max_epochs=3,
                  pipeline=(dict(type='PackInputs'), )):
    """The tiny demo config (see conftest.py) with the method (a name of
    :data:`METHODS` or a dict like its values), a training pipeline
    (deterministic unless given, e.g. :data:`RANDOM_PIPELINE`) and a
    checkpoint every epoch."""
    base = tiny_demo_config(max_epochs=max_epochs)
    overrides = METHODS[method] if isinstance(method, str) else method
    hooks = overrides['custom_hooks'] + list(extra_hooks)
    path = tmp_path / f'{name}.py'
    path.write_text(
        textwrap.dedent(f"""
        _base_ = [{base!r}]
        custom_imports = dict(
            imports=['mmlml', 'stateful_methods'],
            allow_failed_imports=False)
        train_dataloader = dict(
            dataset=dict(dataset=dict(pipeline={list(pipeline)!r})))
        model = {overrides['model']!r}
        custom_hooks = {hooks!r}
        default_hooks = dict(
            checkpoint=dict(interval=1, max_keep_ckpts=-1, save_best=None))
        work_dir = {str(tmp_path / name)!r}
        """))
    return str(path)


def method_runner(tiny_demo_config,
                  tmp_path,
                  model,
                  hooks,
                  name='method',
                  max_epochs=3):
    """A Runner of :func:`method_config` for a ``model`` and ``hooks``."""
    config = method_config(
        tiny_demo_config,
        tmp_path,
        dict(model=model, custom_hooks=hooks),
        name,
        max_epochs=max_epochs)
    return Runner.from_cfg(Config.fromfile(config))


def assert_fails_before_training(runner, error, match):
    """``runner.train()`` raises ``error`` before the first iteration."""
    with pytest.raises(error, match=match):
        runner.train()
    assert runner.iter == 0  # nothing was trained


#: The environment variable that arms :class:`KillDuringEpoch`.
KILL_SWITCH = 'MMLML_TEST_KILL'


@HOOKS.register_module()
class KillDuringEpoch(Hook):
    """Kill the process with SIGKILL before iteration ``iteration`` (0-based)
    of (1-based) ``epoch``, as a crash or a preempted job would: no hook,
    no ``finally`` and no buffered write runs. Armed only where the
    environment variable :data:`KILL_SWITCH` is set, so that the config
    that is killed also resumes."""

    priority = 'HIGHEST'

    def __init__(self, epoch, iteration=1):
        self.epoch, self.iteration = epoch, iteration

    def before_train_iter(self, runner, batch_idx, data_batch=None):
        if (os.environ.get(KILL_SWITCH) and runner.epoch + 1 == self.epoch
                and batch_idx == self.iteration):
            os.kill(os.getpid(), signal.SIGKILL)


@HOOKS.register_module()
class DumpLabelState(Hook):
    """Save every rank's label store table and head state at the end of
    training to ``{work_dir}/state_rank{r}.pth``."""

    priority = 'LOWEST'

    def after_train(self, runner):
        model = runner.model.module if is_model_wrapper(
            runner.model) else runner.model
        store = model.head.label_store
        torch.save(
            dict(
                table=None if store is None else store.table.clone(),
                class_state={} if store is None else dict(store.class_state),
                head={
                    k: v.clone()
                    for k, v in model.head.state_dict().items()
                }), osp.join(runner.work_dir, f'state_rank{get_rank()}.pth'))
