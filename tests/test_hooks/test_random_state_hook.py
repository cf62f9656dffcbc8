"""RandomStateHook: the random generators in every checkpoint, restored
when a run resumes (the kill-and-resume tests with random augmentation are
in tests/test_runtime/test_stateful_training.py)."""
import functools
import random
import types

import numpy as np
import torch
from mmengine.dataset import DefaultSampler, worker_init_fn
from mmengine.runner import BaseLoop
from torch.utils.data import DataLoader

from mmlml.hooks import RandomStateHook
from mmlml.hooks.random_state_hook import (loader_seeds, random_state,
                                           set_loader_seeds, set_random_state)


def _draws():
    return (random.random(), np.random.rand(), np.random.randn(),
            torch.rand(1).item())


def test_state_round_trip_is_plain_data():
    """The state restores every generator (NumPy's Gaussian cache too) and
    holds only what a weights_only checkpoint loads."""
    np.random.randn()  # leaves a cached Gaussian
    state = random_state()
    first = _draws()
    set_random_state(state)
    assert _draws() == first
    import io
    buffer = io.BytesIO()
    torch.save(state, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer, weights_only=True)
    set_random_state(loaded)
    assert _draws() == first


def test_hook_saves_and_restores_on_resume_only(caplog):
    hook = RandomStateHook()
    checkpoint = {}
    hook.before_save_checkpoint(None, checkpoint)
    first = _draws()
    # Loaded without resuming (load_from to fine-tune): left alone.
    hook.after_load_checkpoint(
        types.SimpleNamespace(_resume=False), checkpoint)
    hook.before_train(None)
    assert _draws() != first
    hook.after_load_checkpoint(types.SimpleNamespace(_resume=True), checkpoint)
    np.random.rand(5)  # MMEngine's resume may seed again after loading
    hook.before_train(None)
    assert _draws() == first
    # A checkpoint of two processes in a run of one: fresh generators and
    # a warning.
    two = dict(random_states=checkpoint['random_states'] * 2)
    hook.after_load_checkpoint(types.SimpleNamespace(_resume=True), two)
    hook.before_train(None)
    assert _draws() != first


class _Loop(BaseLoop):
    """A built training loop around a data loader."""

    def run(self):
        pass


def _loader(seed, **options):
    """A loader as MMEngine's Runner builds it: a ``DefaultSampler`` and
    a ``worker_init_fn`` bound to ``seed``."""
    return DataLoader(
        list(range(8)),
        sampler=DefaultSampler(list(range(8)), seed=seed),
        worker_init_fn=functools.partial(
            worker_init_fn, num_workers=1, rank=0, seed=seed),
        **options)


def _runner(loader, epoch=2):
    return types.SimpleNamespace(
        _train_loop=_Loop(types.SimpleNamespace(), loader),
        _resume=True,
        epoch=epoch)


def test_checkpoint_keeps_the_training_loaders_seeds():
    """MMEngine builds the training loader with a fresh seed before it
    resumes a run of ``randomness.seed=None``: the sampler's and the
    workers' seeds are the checkpoint's after the resume (a kill-and-resume
    of such a run: ``test_resume_without_a_seed_in_worker_processes``)."""
    checkpoint = {}
    RandomStateHook().before_save_checkpoint(_runner(_loader(11)), checkpoint)
    assert checkpoint['random_states'][0]['loader'] == dict(
        sampler=11, workers=11)
    loader = _loader(99)
    hook = RandomStateHook()
    hook.after_load_checkpoint(_runner(loader), checkpoint)
    hook.before_train(_runner(loader))
    assert loader.sampler.seed == 11
    assert loader.worker_init_fn.keywords == dict(
        num_workers=1, rank=0, seed=11)
    assert loader_seeds(loader) == dict(sampler=11, workers=11)
    # A loader without a seeded sampler or workers: nothing to restore.
    plain = DataLoader(list(range(4)))
    assert loader_seeds(plain) == dict(sampler=None, workers=None)
    set_loader_seeds(plain, dict(sampler=11, workers=11))
    assert plain.worker_init_fn is None


def test_resume_with_persistent_workers_warns(monkeypatch):
    """Persistent workers keep generators no checkpoint holds: resuming
    such a run says its augmentation differs and how to avoid it."""
    messages = []
    monkeypatch.setattr('mmlml.hooks.random_state_hook.print_log',
                        lambda msg, *args, **kwargs: messages.append(msg))
    loader = _loader(3, num_workers=1, persistent_workers=True)
    checkpoint = {}
    hook = RandomStateHook()
    hook.before_save_checkpoint(_runner(loader), checkpoint)
    hook.after_load_checkpoint(_runner(loader), checkpoint)
    hook.before_train(_runner(loader))
    assert len(messages) == 1
    assert 'persistent_workers=True' in messages[0]
    assert '--no-persistent-workers' in messages[0]
    # Without persistent workers: no warning.
    loader = _loader(3, num_workers=1)
    hook.after_load_checkpoint(_runner(loader), checkpoint)
    hook.before_train(_runner(loader))
    assert len(messages) == 1
