"""A worker of a benchmark sweep: takes queued trials from the storage and
runs each as a training process until the sweep is finished.

A trial is one :func:`~mmlml.apis.trial_training.train_trial` (never a path
from the storage, whose every value is checked as data first,
:mod:`.stored_definition`): train the config at the trial's point and seed in
its setting and mode, keep the checkpoint with the best validation mAP, test
it. With ``gpus_per_trial`` above one the run is launched through
``torch.distributed.run`` with MMEngine's ``pytorch`` launcher. The tuning runs
carry an
:class:`~.optuna_pruning_hook.OptunaPruningHook` when the sweep prunes
(its first rung the epoch after the method's warm-up, read from the run's
config: :func:`~.method_warmup.steady_epoch`) and :func:`~.pruning.
may_prune` lets them: never the seed runs, the ``full`` setting's or the
runs of an unpruned replay (:meth:`~.sweep.Sweep.replay_groups`).

Warm trials (``trial_process='warm'``, the default): the worker imports
the stack once and calls the trainer in its own process, each trial on a
fresh ``Runner`` and within :class:`~.process_globals.ProcessGlobals`
(every global a run touches put back after it), its output in the run's
``log.txt``; a failed one is recorded as a failed subprocess is. With
``trial_process='subprocess'`` (isolation), and always with
``gpus_per_trial`` above one, each trial is a process of its own:
``python -m mmlml.apis.trial_training`` (or
``$MMLML_SWEEP_TRAINER``, :func:`~.stored_definition.trainer_path`, the test
suite's stand-in, which is always a subprocess).

A second stage (a config that names ``first_stage``) first makes its
labels or scores from its first stage's run (:mod:`.first_stage`).

Run a worker with ``python -m mmlml.benchmark.sweep.worker --storage S
--study N`` (``tools/benchmark.py`` starts them: local processes or Slurm
jobs).
"""
import argparse
import contextlib
import os
import os.path as osp
import signal
import socket
import sys
import threading
import time
from typing import Any, Dict, Optional

from mmlml.benchmark.sweep.first_stage import prepare_second_stage
from mmlml.benchmark.sweep.progress import EpochWatch, SweepProgress
from mmlml.benchmark.sweep.settings import run_domain
from mmlml.benchmark.sweep.sweep import LOST, Group, Sweep, abs_path
from mmlml.benchmark.sweep.trial_process import (TRIAL_PROCESSES, TrialFailed,
                                                 run_options, train_run)
from mmlml.benchmark.training.config_keys import EPOCHS_KEY
from mmlml.benchmark.training.pruning import may_prune
from mmlml.benchmark.training.trial_record import (BEST_CHECKPOINT, EPOCHS,
                                                   EPOCHS_TRAINED, FAILURE,
                                                   POINT, PRUNED_AT, RUN, SEED,
                                                   VAL_MAP)

__all__ = ['TrialFailed', 'TRIAL_PROCESSES', 'run_trial', 'work', 'main']

#: Seconds between heartbeats, and without one before a trial is lost.
HEARTBEAT, GRACE = 20, 120


def _first_rung(group: Group,
                options: dict,
                domain: Optional[str] = None) -> int:
    """The first epoch at which a run may be pruned: the one after its
    method's warm-up, as the run's config (with its overrides) sets it."""
    from mmlml.benchmark.sweep.method_warmup import steady_epoch
    from mmlml.benchmark.sweep.settings import load_config
    return steady_epoch(load_config(abs_path(group.config), options,
                                    domain)) + 1


def run_trial(sweep: Sweep,
              group: Group,
              trial_id: int,
              attrs: dict,
              trial_process: str = 'warm') -> None:
    """Run a taken trial and record its result: complete (value: the
    validation mAP), pruned, or failed with the error. ``trial_process``:
    one of :data:`TRIAL_PROCESSES` (module docstring)."""
    definition = sweep.definition
    work_dir = abs_path(definition['work_dir'])
    try:  # the storage's trial is data: checked before it is run
        record = sweep.checked_trial(group, sweep.storage.get_trial(trial_id))
    except ValueError as error:
        sweep.finish(trial_id, 'fail', failure=str(error))
        return
    point, seed = record[POINT], record[SEED]
    # The domain of this run's mode, passed to each reading of its configs.
    domain = run_domain(definition.get('domain'), group.mode)
    run_dir = osp.join(work_dir, record[RUN])
    options = run_options(definition, group, point, seed)
    notes = {}
    prune = definition.get('prune')
    hook = None
    try:
        if may_prune(
                prune,
                setting=group.setting,
                seed=seed,
                first_seed=sweep.rules.seeds[0],
                tune=sweep.rules.tune,
                replay=group.replay):
            hook = dict(
                type='OptunaPruningHook',
                storage=sweep.spec,
                study_name=sweep.study_name(group),
                trial_id=trial_id,
                first_rung=_first_rung(group, options, domain),
                pruner=prune)
        try:
            os.makedirs(run_dir, exist_ok=True)
        except OSError as error:
            raise TrialFailed(f'cannot make the run folder {run_dir} '
                              f'({error.strerror}): check the sweep\'s '
                              'work directory') from None
        if group.first_stage is not None:
            notes = prepare_second_stage(sweep, group, seed, run_dir, options,
                                         trial_process)
        summary = train_run(sweep, group, point, seed, run_dir, options, hook,
                            trial_process)
    except Exception as error:  # recorded; the sweep reports it
        sweep.finish(trial_id, 'fail', failure=str(error))
        return
    checkpoint = summary.get(BEST_CHECKPOINT, '')
    if osp.isabs(checkpoint):
        summary[BEST_CHECKPOINT] = osp.relpath(checkpoint, work_dir)
    summary.update(notes)
    summary.update(
        setting=group.setting,
        mode=group.mode,
        config=group.config,
        heartbeat=time.time())
    pruned_at = sweep.storage.get_trial(trial_id).user_attrs.get(PRUNED_AT)
    if pruned_at is not None:
        summary[EPOCHS_TRAINED] = pruned_at
        sweep.finish(trial_id, 'pruned', **summary)
    else:
        summary[EPOCHS_TRAINED] = summary[EPOCHS]
        sweep.finish(trial_id, 'complete', summary[VAL_MAP], **summary)


class _Heartbeat:
    """Beats for a trial in a thread while it runs."""

    def __init__(self, sweep: Sweep, trial_id: int, interval: float):
        self.stop = threading.Event()
        self.thread = threading.Thread(
            target=self._beat, args=(sweep, trial_id, interval), daemon=True)
        self.thread.start()

    def _beat(self, sweep, trial_id, interval):
        while not self.stop.wait(interval):
            try:
                sweep.heartbeat(trial_id)
            except Exception:  # the next beat tries again
                pass

    def close(self):
        self.stop.set()
        self.thread.join()


def work(storage: str,
         study: str,
         name: Optional[str] = None,
         poll: float = 10,
         first_poll: float = 0.5,
         heartbeat: float = HEARTBEAT,
         grace: float = GRACE,
         max_trials: Optional[int] = None,
         trusted=(),
         trial_process: str = 'warm') -> dict:
    """Run trials of the sweep until it is finished (or ``max_trials``
    ran); returns ``{'trials': n, 'errors': [...]}``. Runs that are queued
    or running elsewhere are waited for, so that the rules can go on.
    ``trusted``: the configs outside the checkout's ``configs/`` that the
    command starting this worker named (:class:`~.sweep.Sweep`). A worker
    with nothing to run looks again after ``first_poll`` seconds, then
    twice as long each time up to ``poll`` (short runs of other workers
    end soon; a long wait costs the storage little). ``trial_process``:
    where each trial trains (:data:`TRIAL_PROCESSES`, module docstring).
    Stopped (SIGTERM, Ctrl-C), it fails the trial it runs as lost and
    queues the run again, then stops."""
    if trial_process not in TRIAL_PROCESSES:
        raise ValueError(f'trial_process must be one of {TRIAL_PROCESSES}; '
                         f'got {trial_process!r}')
    sweep = Sweep(storage, study, trusted=trusted)
    name = name or f'{socket.gethostname()}:{os.getpid()}'
    current: Dict[str, Any] = {}
    progress = SweepProgress(sweep, name)

    stop = _Stop()
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, stop)
    try:
        return _run_until_done(sweep, name, current, stop, progress, poll,
                               first_poll, heartbeat, grace, max_trials,
                               trial_process)
    except BaseException:
        # Stopped (SIGTERM, Ctrl-C) with a trial taken: its run is queued
        # again. Here, not in the signal handler: the storage call that
        # the signal interrupted has unwound and released its transaction
        # (the handler's own writes would wait for it on a database).
        if current and sweep.finish(current['id'], 'fail', failure=LOST):
            sweep.requeue(current['group'], current['attrs'])
        raise
    finally:
        if previous is not None:  # a worker called in a program's process
            signal.signal(signal.SIGTERM, previous)


class _Stop:
    """The worker's SIGTERM handler (Slurm's preemption, a kill): it
    raises ``SystemExit``, except while a trial is being taken
    (:meth:`held`), where it waits until the worker knows which trial it
    holds, so that a stopped worker always queues its run again."""

    def __init__(self):
        self.holding = False
        self.pending: Optional[int] = None

    def __call__(self, signum, frame):
        if self.holding:
            self.pending = signum
        else:
            raise SystemExit(128 + signum)

    @contextlib.contextmanager
    def held(self):
        self.holding = True
        try:
            yield
        finally:
            self.holding = False
        if self.pending is not None:
            raise SystemExit(128 + self.pending)


def _run_until_done(sweep: Sweep,
                    name: str,
                    current: dict,
                    stop: _Stop,
                    progress: SweepProgress,
                    poll: float,
                    first_poll: float,
                    heartbeat: float,
                    grace: float,
                    max_trials: Optional[int],
                    trial_process: str = 'warm') -> dict:
    """:func:`work`'s loop; ``current`` holds the trial being run."""
    ran = 0
    wait = first_poll
    while max_trials is None or ran < max_trials:
        sweep.fail_stale(grace)
        with stop.held():
            taken = sweep.pop(name)
            if taken is not None:
                group, trial_id, attrs = taken
                current.update(id=trial_id, group=group, attrs=attrs)
        if taken is None:
            state = sweep.advance()
            if state['queued']:
                continue
            if state['done']:
                return dict(trials=ran, errors=state['errors'])
            time.sleep(min(wait, poll))
            wait *= 2
            continue
        wait = first_poll
        beat = _Heartbeat(sweep, trial_id, heartbeat)
        # Shown and followed only once checked (run_trial fails the others).
        try:
            checked = sweep.checked_trial(group,
                                          sweep.storage.get_trial(trial_id))
            run = checked[RUN]
            log = osp.join(
                abs_path(sweep.definition['work_dir']), run, 'log.txt')
            epochs = int(checked[POINT].get(EPOCHS_KEY, 0))
        except ValueError:
            run, log, epochs = f'trial {trial_id}', os.devnull, 0
        print(progress.trial_line(run), file=sys.stderr, flush=True)
        watch = EpochWatch(log, f'[{name}] {run}', epochs)
        try:
            run_trial(sweep, group, trial_id, attrs, trial_process)
        finally:
            watch.close()
            beat.close()
        current.clear()
        ran += 1
        progress.ran += 1
        record = sweep.storage.get_trial(trial_id)
        value = f'{VAL_MAP} {record.value:.2f}' if record.value is not None \
            else record.user_attrs.get(FAILURE) or \
            f'{PRUNED_AT} {record.user_attrs.get(PRUNED_AT)}'
        print(
            f'[{name}] {run}: {record.state.name.lower()}, {value}',
            flush=True)
    return dict(trials=ran, errors=[])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--storage', required=True)
    parser.add_argument('--study', required=True)
    parser.add_argument('--poll', type=float, default=10)
    parser.add_argument('--heartbeat', type=float, default=HEARTBEAT)
    parser.add_argument('--grace', type=float, default=GRACE)
    parser.add_argument(
        '--trust-config',
        nargs='+',
        default=[],
        help='configs outside the checkout\'s configs/ that the sweep may '
        'run (those its command named)')
    parser.add_argument(
        '--trial-process',
        choices=TRIAL_PROCESSES,
        default='warm',
        help='train each trial in this process (warm: the stack imported '
        'once) or in a process of its own (subprocess: isolation); '
        'default: warm')
    args = parser.parse_args(argv)
    try:
        result = work(
            args.storage,
            args.study,
            poll=args.poll,
            heartbeat=args.heartbeat,
            grace=args.grace,
            trusted=args.trust_config,
            trial_process=args.trial_process)
    except KeyboardInterrupt:  # Ctrl-C: its run is queued again (work)
        raise SystemExit(128 + signal.SIGINT) from None
    for error in result['errors']:
        print(f'[worker] failed: {error}', file=sys.stderr)
    return result


if __name__ == '__main__':
    main()
