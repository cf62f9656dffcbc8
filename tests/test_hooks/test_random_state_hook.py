"""RandomStateHook: the random generators in every checkpoint, restored
when a run resumes (the kill-and-resume tests with random augmentation are
in tests/test_runtime/test_stateful_training.py)."""
import random
import types

import numpy as np
import torch

from mmlml.hooks import RandomStateHook
from mmlml.hooks.random_state_hook import random_state, set_random_state


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
