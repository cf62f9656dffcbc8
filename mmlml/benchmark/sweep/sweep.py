"""A benchmark sweep kept in an Optuna storage: its definition, one study
per (mode, setting, config), one trial per training run.

The storage is the sweep's only record. Its definition (the configs,
settings, modes, search rules, domain and overrides) is the user
attribute ``definition`` of the study named after the sweep; each
(mode, setting, config) is the study ``SWEEP:MODE:SETTING:CONFIG``; each
training run (a point of the search and a seed) is a trial whose user
attributes hold its ``point``, ``seed``, ``run`` (its folder under the
work directory) and, once it finished, its summary (test metrics,
``val mAP``, ``best epoch``, ``epochs``, ``minutes``, ``best checkpoint``).

A pruning sweep may replay the tuning of its first seed without pruning
for some groups (``replay_unpruned`` of its definition,
:meth:`Sweep.replay_groups`): each such group has a second study,
``SWEEP:unpruned:MODE:SETTING:CONFIG``, whose runs (folders under
``unpruned/``) are never pruned and reuse the runs the pruned search
finished; :mod:`.unpruned_replay` compares the two choices.

Trials are queued (``WAITING``) by :meth:`Sweep.advance`, which asks
:func:`~mmlml.benchmark.sweep.search.plan` what each study still needs, and
taken by workers with :meth:`Sweep.pop` (Optuna's atomic ``WAITING`` ->
``RUNNING``). A worker records a trial's summary and its final state in
one call; a trial whose worker stops sending heartbeats is failed and
queued again (:meth:`Sweep.fail_stale`), so a killed worker never leaves
a half-recorded result. Any number of workers, on any machines that
reach the storage, can work on one sweep at once.
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
