"""Methods that keep per-sample state, trained through MMEngine's Runner:
a run killed with SIGKILL and resumed equals the uninterrupted one, and two
processes (torchrun, gloo) end with the same state on every rank."""
import os
import os.path as osp
import subprocess
import sys
import textwrap

import pytest
import torch
from conftest import ROOT, dist_train_env
from mmengine.config import Config
from mmengine.runner import Runner
from stateful_methods import (KILL_SWITCH, METHODS, RANDOM_PIPELINE,
                              method_config)

import mmlml  # noqa: F401

TESTS = osp.join(ROOT, 'tests')


def run(config, **options):
    cfg = Config.fromfile(config)
    cfg.merge_from_dict(options)
    cfg.experiment_name = f'{osp.basename(cfg.work_dir)}_{len(options)}'
    runner = Runner.from_cfg(cfg)
    return runner, runner.train


def final_state(runner):
    head = runner.model.head
    store = getattr(head, 'label_store', None)
    losses = runner.message_hub.get_scalar('train/loss').data[0]
    return dict(
        weights={
            k: v.clone()
            for k, v in runner.model.state_dict().items()
        },
        table=None if store is None else store.table.clone(),
        class_state={} if store is None else dict(store.class_state),
        losses=list(losses))


def assert_same_table(a, b, exact=False):
    assert (a is None) == (b is None)
    if a is not None:
        torch.testing.assert_close(
            a, b, equal_nan=True, rtol=0, atol=0 if exact else 1e-3)


def kill_and_resume(tiny_demo_config, tmp_path, method, loader_text=''):
    """Train ``method`` (with :data:`RANDOM_PIPELINE`) for 3 epochs with
    ``tools/train.py`` killed by SIGKILL in the middle of epoch 3 (after
    the checkpoint of epoch 2), uninterrupted with the killed run's seed,
    and resumed from the checkpoint; ``loader_text`` is config text
    appended to each. Returns the final state of the uninterrupted and
    the resumed run, and the resumed Runner."""
    sys.path.insert(0, TESTS)

    def config(name, hooks=()):
        path = method_config(
            tiny_demo_config,
            tmp_path,
            method,
            name,
            list(hooks),
            pipeline=RANDOM_PIPELINE)
        with open(path, 'a') as f:
            f.write(loader_text)
        return path

    cut = config('cut', [dict(type='KillDuringEpoch', epoch=3)])
    env = dict(os.environ)
    env[KILL_SWITCH] = '1'
    env['PYTHONPATH'] = TESTS + os.pathsep + env.get('PYTHONPATH', '')
    out = subprocess.run(
        [sys.executable,
         osp.join(ROOT, 'tools', 'train.py'), cut],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=ROOT)
    assert out.returncode == -9, (out.stdout + out.stderr)[-4000:]
    assert not osp.exists(osp.join(tmp_path, 'cut', 'epoch_3.pth'))
    checkpoint = torch.load(
        osp.join(tmp_path, 'cut', 'epoch_2.pth'), weights_only=False)
    assert len(checkpoint['random_states']) == 1
    # The uninterrupted run, with the killed run's seed (a config without
    # one draws it afresh).
    runner, train = run(
        config('full'), randomness=dict(seed=checkpoint['meta']['seed']))
    train()
    full = final_state(runner)
    store = getattr(runner.model.head, 'label_store', None)
    assert store is None or store.num_pseudo_labels > 0 or store.class_state
    assert (store is None) == ('label_store' not in checkpoint)
    resumed, train = run(
        cut, resume=True, load_from=osp.join(tmp_path, 'cut', 'epoch_2.pth'))
    train()
    assert resumed.epoch == 3
    return full, final_state(resumed), resumed


def assert_same_run(full, again, resumed_at):
    """Bit for bit: the same losses from the first one after the resume
    (iteration ``resumed_at``), label store and weights."""
    assert_same_table(full['table'], again['table'], exact=True)
    assert full['class_state'].keys() == again['class_state'].keys()
    for key, value in full['class_state'].items():
        assert torch.equal(value, again['class_state'][key]), key
    assert len(full['losses']) == len(again['losses']) > resumed_at
    assert full['losses'][resumed_at] == again['losses'][resumed_at], \
        'the first loss after the resume differs'
    assert full['losses'] == again['losses']
    for key, value in full['weights'].items():
        assert torch.equal(again['weights'][key], value), key


# APL's extra scoring pass keeps the same state as APL (two-process test).
@pytest.mark.slow
@pytest.mark.parametrize('method',
                         sorted(set(METHODS) - {'em_apl_extra_pass'}) + ['an'])
def test_killed_and_resumed_equals_uninterrupted(tiny_demo_config, tmp_path,
                                                 method):
    """``tools/train.py`` killed with SIGKILL in the middle of epoch 3 (after
    the checkpoint of epoch 2), then resumed from that checkpoint, ends
    with the weights, the label store and the losses of the uninterrupted
    run, with random augmentation (RandomResizedCrop, RandomFlip) in the
    pipeline: the checkpoint holds the random generators."""
    method = METHODS.get(method, dict(model={}, custom_hooks=[]))
    full, again, resumed = kill_and_resume(tiny_demo_config, tmp_path, method)
    assert_same_run(full, again, resumed_at=2 * len(resumed.train_dataloader))


@pytest.mark.slow
def test_resume_without_a_seed_in_worker_processes(tiny_demo_config, tmp_path):
    """The paper configs' ``randomness.seed=None`` and a data-loader worker
    process: MMEngine builds the training loader (its sampler's seed, its
    workers' seed) with a fresh seed before it resumes; the checkpoint's
    loader seeds make the resumed run bit for bit all the same (was: a
    fresh order and fresh augmentation after the resume)."""
    full, again, resumed = kill_and_resume(
        tiny_demo_config, tmp_path, dict(model={}, custom_hooks=[]),
        textwrap.dedent("""
        randomness = dict(seed=None)
        train_dataloader = dict(num_workers=1, persistent_workers=False)
        """))
    assert_same_run(full, again, resumed_at=2 * len(resumed.train_dataloader))


@pytest.mark.slow
def test_two_processes_end_with_the_same_state(tiny_demo_config, tmp_path):
    """Every method of :data:`METHODS` trained by two processes (torchrun,
    gloo; the methods in turn in the same two processes, one start for
    all): both ranks end with the same label store and head."""
    configs = {
        method:
        method_config(tiny_demo_config, tmp_path, method, f'dist_{method}',
                      [dict(type='DumpLabelState')])
        for method in sorted(METHODS)
    }
    env = dist_train_env(TESTS)
    out = subprocess.run([
        sys.executable, '-m', 'torch.distributed.run', '--nproc_per_node=2',
        f'--master_port={env["PORT"]}',
        osp.join(TESTS, 'train_in_turn.py'), *configs.values()
    ],
                         capture_output=True,
                         text=True,
                         timeout=600,
                         env=env,
                         cwd=ROOT)
    assert out.returncode == 0, (out.stdout + out.stderr)[-4000:]
    for method, config in configs.items():
        work_dir = Config.fromfile(config).work_dir
        ranks = [
            torch.load(osp.join(work_dir, f'state_rank{r}.pth'))
            for r in range(2)
        ]
        assert_same_table(ranks[0]['table'], ranks[1]['table'])
        for key, value in ranks[0]['head'].items():
            torch.testing.assert_close(
                ranks[1]['head'][key], value, msg=f'{method}: {key}')
        table = ranks[0]['table']
        if table is not None:
            assert int((~torch.signbit(table) & ~table.isnan()).sum()) > 0, \
                method
