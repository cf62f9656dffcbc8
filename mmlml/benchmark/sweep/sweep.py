"""A benchmark sweep kept in an Optuna storage: its definition, one study
per (mode, setting, config), one trial per training run.

The storage is the sweep's only record. :class:`Sweep` joins its three
parts: the storage and its definition (:mod:`.defined_sweep`), the
planning, which asks :func:`~.search.plan` what each study still needs
and queues it, the unpruned replays included (:mod:`.sweep_planning`),
and the trial queue that workers take from and record into
(:mod:`.trial_queue`). Any number of workers, on any machines that reach
the storage, can work on one sweep at once.
"""
from mmlml.benchmark.sweep.defined_sweep import (DUPLICATE, LOST, REPO_ROOT,
                                                 Group, SweepError, abs_path,
                                                 file_lock, repo_path, run_id)
from mmlml.benchmark.sweep.sweep_planning import (SweepPlanning,
                                                  first_seed_point)
from mmlml.benchmark.sweep.trial_queue import TrialQueue

__all__ = [
    'SweepError', 'Group', 'Sweep', 'run_id', 'repo_path', 'abs_path',
    'first_seed_point', 'file_lock', 'REPO_ROOT', 'LOST', 'DUPLICATE'
]


class Sweep(SweepPlanning, TrialQueue):
    """A sweep in an Optuna storage: its definition
    (:class:`~.defined_sweep.DefinedSweep`), its planning
    (:class:`~.sweep_planning.SweepPlanning`) and its trial queue
    (:class:`~.trial_queue.TrialQueue`), joined (see the module
    docstring)."""
