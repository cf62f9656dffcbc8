"""Keep the random generators in every checkpoint, so that a resumed run
draws the same random augmentation as the uninterrupted one."""
import logging
import random
from typing import List, Optional, Tuple

import numpy as np
import torch
from mmengine.dist import all_gather_object, get_rank, get_world_size
from mmengine.hooks import Hook
from mmengine.logging import print_log

from mmlml.registry import HOOKS

__all__ = ['RandomStateHook', 'random_state', 'set_random_state']

#: The checkpoint entry: one state per rank.
KEY = 'random_states'


def random_state() -> dict:
    """This process's generators as plain data (what a checkpoint loaded
    with ``weights_only=True`` can hold): Python's ``random``, NumPy's
    global generator (which MMCV's and MMPretrain's random transforms
    draw from), torch's CPU generator and, where CUDA is in use, each
    device's."""
    numpy = np.random.get_state(legacy=False)
    return dict(
        python=list(random.getstate()[1]),
        python_version=random.getstate()[0],
        numpy_key=torch.from_numpy(numpy['state']['key'].astype(np.int64)),
        numpy_pos=int(numpy['state']['pos']),
        numpy_gauss=[int(numpy['has_gauss']),
                     float(numpy['gauss'])],
        torch=torch.get_rng_state(),
        cuda=torch.cuda.get_rng_state_all()
        if torch.cuda.is_initialized() else None)


def set_random_state(state: dict) -> None:
    """Restore the generators of :func:`random_state`."""
    random.setstate((state['python_version'], tuple(state['python']), None))
    np.random.set_state(
        dict(
            bit_generator='MT19937',
            state=dict(
                key=state['numpy_key'].numpy().astype(np.uint32),
                pos=state['numpy_pos']),
            has_gauss=state['numpy_gauss'][0],
            gauss=state['numpy_gauss'][1]))
    torch.set_rng_state(state['torch'])
    if state.get('cuda') is not None and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state['cuda'])


@HOOKS.register_module()
class RandomStateHook(Hook):
    """Save each rank's random generators in every checkpoint (under
    ``random_states``) and restore them when a run resumes.

    MMEngine seeds the generators once, when the Runner is built, so a
    resumed run would otherwise draw its random augmentation (MMCV's and
    MMPretrain's transforms draw from NumPy's global generator in the
    process that loads the data) from a fresh seed, not from where the
    interrupted run was. With this hook an epoch-based run resumed from
    an epoch checkpoint draws exactly what the uninterrupted run drew:
    Python's, NumPy's and torch's generators (and CUDA's) are those at the
    checkpoint, on every rank. The sampler's order needs nothing: MMEngine's
    ``DefaultSampler`` shuffles with ``seed + epoch``.

    What stays outside: data-loader worker processes are seeded afresh by
    MMEngine at every epoch (``worker_init_fn``), the same in both runs,
    but ``persistent_workers=True`` keeps a worker's generators across
    epochs, which no checkpoint holds; and an iteration-based loop, when it
    resumes, runs the transforms of the batches it skips, drawing from the
    restored generators; a distributed run keeps them in its epoch
    checkpoints only (they are gathered from every rank at the end of an
    epoch). A checkpoint of another number of processes resumes with a
    warning and fresh generators.
    """

    # Before the CheckpointHook (VERY_LOW) at the end of an epoch.
    priority = 'LOW'

    def __init__(self):
        self._loaded: Optional[List[dict]] = None
        self._gathered: Optional[Tuple[int, List[dict]]] = None

    def after_train_epoch(self, runner) -> None:
        # Only rank 0 saves checkpoints (MMEngine's save_checkpoint is
        # master-only): every rank's generators are gathered here, where
        # all ranks are, once an epoch.
        if get_world_size() > 1:
            self._gathered = (runner.iter, all_gather_object(random_state()))

    def before_save_checkpoint(self, runner, checkpoint: dict) -> None:
        if get_world_size() == 1:
            checkpoint[KEY] = [random_state()]
        elif self._gathered is not None and self._gathered[0] == runner.iter:
            checkpoint[KEY] = self._gathered[1]
        # else: a mid-epoch checkpoint of a distributed run: none kept

    def after_load_checkpoint(self, runner, checkpoint: dict) -> None:
        # Kept for before_train: MMEngine's resume may seed the generators
        # again after loading (a checkpoint of another seed).
        if getattr(runner, '_resume', False):
            self._loaded = checkpoint.get(KEY)

    def before_train(self, runner) -> None:
        states, self._loaded = self._loaded, None
        if states is None:
            return
        if len(states) != get_world_size():
            print_log(
                f'RandomStateHook: the checkpoint holds the random '
                f'generators of {len(states)} processes, this run has '
                f'{get_world_size()}: they are not restored (random '
                'augmentation differs from the interrupted run).',
                logger='current',
                level=logging.WARNING)
            return
        set_random_state(states[get_rank()])
