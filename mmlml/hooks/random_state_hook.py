"""Keep the random generators in every checkpoint, so that a resumed run
draws the same random augmentation as the uninterrupted one."""
import functools
import logging
import random
from typing import Any, List, Optional, Tuple

import numpy as np
import torch
from mmengine.dist import all_gather_object, get_rank, get_world_size
from mmengine.hooks import Hook
from mmengine.logging import print_log
from mmengine.runner import BaseLoop

from mmlml.registry import HOOKS

__all__ = [
    'RandomStateHook', 'random_state', 'set_random_state', 'loader_seeds',
    'set_loader_seeds'
]

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


def loader_seeds(loader: Any) -> dict:
    """The seeds a data loader was built with: its sampler's (MMEngine's
    ``DefaultSampler`` and ``InfiniteSampler`` shuffle with ``seed`` (plus
    the epoch)) and its workers' (the ``seed`` MMEngine binds to the
    ``worker_init_fn`` that seeds each worker process); ``None`` where the
    loader has none."""
    init = getattr(loader, 'worker_init_fn', None)
    keywords = getattr(init, 'keywords', None) or {}
    sampler_seed = getattr(getattr(loader, 'sampler', None), 'seed', None)
    return dict(
        sampler=sampler_seed if isinstance(sampler_seed, int) else None,
        workers=keywords.get('seed'))


def set_loader_seeds(loader: Any, seeds: dict) -> None:
    """Give ``loader`` the seeds of :func:`loader_seeds`, before it starts
    an epoch: MMEngine builds the training loader (with the Runner's seed)
    before it resumes, so a run whose ``randomness.seed`` is ``None`` would
    shuffle and seed its workers with a fresh seed, not the checkpoint's."""
    if seeds.get('sampler') is not None and isinstance(
            getattr(getattr(loader, 'sampler', None), 'seed', None), int):
        loader.sampler.seed = seeds['sampler']
    init = getattr(loader, 'worker_init_fn', None)
    if seeds.get('workers') is not None and isinstance(
            init, functools.partial) and 'seed' in init.keywords:
        loader.worker_init_fn = functools.partial(
            init.func, *init.args,
            **dict(init.keywords, seed=seeds['workers']))


def _train_loader(runner) -> Any:
    """The runner's training data loader if its loop is built (reading
    ``runner.train_loop`` would build it), else ``None``."""
    loop = getattr(runner, '_train_loop', None)
    return loop.dataloader if isinstance(loop, BaseLoop) else None


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
    checkpoint, on every rank, and so are the training loader's seeds
    (:func:`loader_seeds`): its sampler's, which with ``seed + epoch``
    gives the order of every epoch (``DefaultSampler``), and the one its
    worker processes are seeded from at the start of every epoch. MMEngine
    builds the loader before it resumes, with the Runner's seed, so
    without them a run of ``randomness.seed=None`` (the paper configs')
    would shuffle and seed its workers afresh.

    What stays outside: ``persistent_workers=True`` keeps each worker's
    generators from one epoch to the next, and they live in the worker
    processes, which no checkpoint reaches: a resumed run's new workers
    start from their seed, and its augmentation differs from the
    uninterrupted run's (a warning says so when such a run resumes;
    ``tools/train.py --no-persistent-workers`` turns them off). An
    iteration-based loop, when it resumes, runs the transforms of the
    batches it skips, drawing from the restored generators. A distributed
    run keeps the generators in its epoch checkpoints only (they are
    gathered from every rank at the end of an epoch). A checkpoint of
    another number of processes resumes with a warning and fresh
    generators.
    """

    # Before the CheckpointHook (VERY_LOW) at the end of an epoch.
    priority = 'LOW'

    def __init__(self):
        self._loaded: Optional[List[dict]] = None
        self._gathered: Optional[Tuple[int, List[dict]]] = None

    @staticmethod
    def _state(runner) -> dict:
        """This process's generators and training loader's seeds."""
        loader = _train_loader(runner)
        return dict(
            random_state(),
            loader=None if loader is None else loader_seeds(loader))

    def after_train_epoch(self, runner) -> None:
        # Only rank 0 saves checkpoints (MMEngine's save_checkpoint is
        # master-only): every rank's generators are gathered here, where
        # all ranks are, once an epoch.
        if get_world_size() > 1:
            self._gathered = (runner.iter,
                              all_gather_object(self._state(runner)))

    def before_save_checkpoint(self, runner, checkpoint: dict) -> None:
        if get_world_size() == 1:
            checkpoint[KEY] = [self._state(runner)]
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
        state = states[get_rank()]
        set_random_state(state)
        loader = _train_loader(runner)
        if loader is None:
            return
        if state.get('loader') is not None:
            set_loader_seeds(loader, state['loader'])
        if getattr(loader, 'persistent_workers', False) and runner.epoch:
            print_log(
                'RandomStateHook: the training loader keeps its workers '
                '(persistent_workers=True), whose random generators no '
                'checkpoint holds: the random augmentation after this resume '
                'differs from the uninterrupted run. For a bit-for-bit '
                'resume set persistent_workers=False '
                '(tools/train.py --no-persistent-workers).',
                logger='current',
                level=logging.WARNING)
