"""The trial queue of a benchmark sweep: each training run (a point of
the search and a seed) is a trial whose user attributes hold its
``point``, ``seed``, ``run`` (its folder under the work directory) and,
once it finished, its summary (:mod:`~mmlml.benchmark.training.trial_record`).

Trials are queued (``WAITING``) by the planning
(:meth:`~.sweep_planning.SweepPlanning.advance`) and taken by workers
with :meth:`TrialQueue.pop` (Optuna's atomic ``WAITING`` -> ``RUNNING``).
A worker records a trial's summary and its final state in one call; a
trial whose worker stops sending heartbeats is failed and queued again
(:meth:`TrialQueue.fail_stale`), so a killed worker never leaves a
half-recorded result. Any number of workers, on any machines that reach
the storage, can work on one sweep at once.
"""
import json
import time
from typing import Dict, List, Optional

from mmlml.benchmark.sweep.defined_sweep import (DUPLICATE, LOST, DefinedSweep,
                                                 Group, abs_path, run_id)
from mmlml.benchmark.sweep.stored_definition import check_trial
from mmlml.benchmark.training.trial_record import (FAILURE, HEARTBEAT, POINT,
                                                   RETRY_OF, RUN, SEED,
                                                   VAL_MAP, WORKER,
                                                   write_trial)

__all__ = ['TrialQueue']


class TrialQueue(DefinedSweep):
    """A sweep's trials: queued, taken, finished, given up (see the module
    docstring)."""

    def trials(self, group: Group, states=None) -> list:
        return self.study(group).get_trials(deepcopy=False, states=states)

    def records(self, group: Group) -> List[dict]:
        """The group's runs as :func:`plan` reads them, in trial order."""
        from optuna.trial import TrialState
        states = {
            TrialState.COMPLETE: 'complete',
            TrialState.PRUNED: 'pruned',
            TrialState.WAITING: 'pending',
            TrialState.RUNNING: 'pending'
        }
        records = []
        for trial in self.trials(group):
            if trial.state not in states or POINT not in trial.user_attrs:
                continue
            record = dict(self.checked_trial(group, trial))
            record['state'] = states[trial.state]
            if trial.state == TrialState.COMPLETE:
                record[VAL_MAP] = trial.value
            records.append(record)
        return records

    def checked_trial(self, group: Group, trial) -> dict:
        """A trial's fields, each checked by its declaration
        (:func:`~.stored_definition.check_trial`: its point, seed and
        folder are the sweep's own); a trial that is not data of the sweep
        stops it (:class:`SweepError`, one line naming it)."""
        return check_trial(
            trial.user_attrs,
            lambda point, seed: run_id(group.mode, group.setting, point, group.
                                       name, seed, group.replay),
            abs_path(self.definition['work_dir']),
            self.config_facts(group)['hyperparameter'],
            f'trial {trial.number} of {self.study_name(group)}')

    def _failed(self, group: Group) -> list:
        """The group's trials that failed on their own (not a lost worker,
        not a duplicate) and whose run has not been queued again since."""
        from optuna.trial import TrialState
        trials = self.trials(group)
        last = {}
        for trial in trials:
            last[trial.user_attrs.get(RUN)] = trial.number
        return [
            trial for trial in trials if trial.state == TrialState.FAIL
            and trial.user_attrs.get(FAILURE) not in (LOST, DUPLICATE)
            and last[trial.user_attrs.get(RUN)] == trial.number
        ]

    def failures(self, group: Group) -> List[str]:
        """The errors of the group's failed runs (:meth:`_failed`): the
        group stops until they are run again (:meth:`retry_failed`)."""
        return [
            f'{trial.user_attrs.get(RUN)}: '
            f'{trial.user_attrs.get(FAILURE, "failed")}'
            for trial in self._failed(group)
        ]

    def retry_failed(self) -> int:
        """Queue every failed run again (after its cause is fixed); returns
        how many."""
        count = 0
        with self._lock():
            for group in self.all_groups():
                for trial in self._failed(group):
                    self.requeue(group, trial.user_attrs)
                    count += 1
        return count

    def add_trial(self,
                  group: Group,
                  point: dict,
                  seed: int,
                  state=None,
                  value: Optional[float] = None,
                  summary: Optional[dict] = None,
                  intermediate: Optional[dict] = None) -> None:
        """Record a run (``WAITING`` by default: queued)."""
        import optuna
        state = state or optuna.trial.TrialState.WAITING
        attrs = write_trial(
            point, seed,
            run_id(group.mode, group.setting, point, group.name, seed,
                   group.replay), summary)
        self.study(group).add_trial(
            optuna.trial.create_trial(
                state=state,
                value=value,
                user_attrs=attrs,
                intermediate_values=intermediate or {}))

    def pop(self, worker: str = '') -> Optional[tuple]:
        """Take a queued trial: ``(group, trial_id, user_attrs)``, or None
        when none is queued. A run queued twice (two workers queueing at
        once on a database server, where no lock is held) is run by its
        first live trial only: :meth:`_first_copy`."""
        import optuna
        from optuna.trial import TrialState
        for group in self.all_groups():
            for trial in self.trials(group, (TrialState.WAITING, )):
                try:
                    if not self.storage.set_trial_state_values(
                            trial._trial_id, TrialState.RUNNING):
                        continue
                except optuna.exceptions.UpdateFinishedTrialError:
                    continue
                if not self._first_copy(group, trial):
                    self.finish(trial._trial_id, 'fail', failure=DUPLICATE)
                    continue
                self.heartbeat(trial._trial_id, worker)
                return group, trial._trial_id, dict(trial.user_attrs)
        return None

    def _first_copy(self, group: Group, taken) -> bool:
        """Whether a trial just taken is the first live copy of its run.

        Read again after taking it: a copy another worker took after this
        worker's list was read would otherwise be missed, and both would
        run. Live is queued, running or finished (not failed); the first
        (lowest number) runs and later copies are dropped. Two workers
        taking two copies at once cannot both run: each reads after its
        own take, so the later copy always sees the first one live
        (queued or taken), and the first copy is never dropped."""
        from optuna.trial import TrialState
        live = (TrialState.WAITING, TrialState.RUNNING, TrialState.COMPLETE,
                TrialState.PRUNED)
        run = taken.user_attrs.get(RUN)
        return not any(
            trial.number < taken.number and trial.user_attrs.get(RUN) == run
            for trial in self.trials(group, live))

    def heartbeat(self, trial_id: int, worker: str = '') -> None:
        self.storage.set_trial_user_attr(trial_id, HEARTBEAT, time.time())
        if worker:
            self.storage.set_trial_user_attr(trial_id, WORKER, worker)

    def finish(self,
               trial_id: int,
               state: str,
               value: Optional[float] = None,
               **attrs) -> bool:
        """Record a taken trial's summary, then its final state
        (``'complete'``, ``'pruned'`` or ``'fail'``); False when the trial
        was given up meanwhile (:meth:`fail_stale`: its run is queued
        again, and this result is dropped)."""
        import optuna
        from optuna.trial import TrialState
        final = dict(
            complete=TrialState.COMPLETE,
            pruned=TrialState.PRUNED,
            fail=TrialState.FAIL)[state]
        try:
            for key, item in json.loads(json.dumps(attrs)).items():
                self.storage.set_trial_user_attr(trial_id, key, item)
            return self.storage.set_trial_state_values(
                trial_id, final, [value] if state == 'complete' else None)
        except optuna.exceptions.UpdateFinishedTrialError:
            return False

    def requeue(self, group: Group, attrs: dict) -> None:
        """Queue a run again (its trial was lost)."""
        self.add_trial(
            group,
            attrs[POINT],
            attrs[SEED],
            summary={RETRY_OF: attrs.get(RUN)})

    def fail_stale(self, grace: float) -> int:
        """Fail the running trials without a heartbeat for ``grace``
        seconds (their worker died) and queue each run again; returns how
        many."""
        import optuna
        from optuna.trial import TrialState
        now, count = time.time(), 0
        for group in self.all_groups():
            for trial in self.trials(group, (TrialState.RUNNING, )):
                beat = trial.user_attrs.get(HEARTBEAT)
                if beat is None and trial.datetime_start is not None:
                    beat = trial.datetime_start.timestamp()
                if beat is None or now - beat < grace:
                    continue
                try:  # the reason first: a finished trial takes none
                    self.storage.set_trial_user_attr(trial._trial_id, FAILURE,
                                                     LOST)
                    changed = self.storage.set_trial_state_values(
                        trial._trial_id, TrialState.FAIL)
                except optuna.exceptions.UpdateFinishedTrialError:
                    continue
                if changed:
                    self.requeue(group, trial.user_attrs)
                    count += 1
        return count

    def unfinished(self) -> List[str]:
        """Why the sweep's workers, all ended, did not finish it: runs left
        ``RUNNING`` (their worker died) or queued, or no run at all; one
        line per cause, none when it is finished."""
        counts = self.progress()
        problems = []
        if counts.get('running'):
            problems.append(
                f'{counts["running"]} runs are left RUNNING: their worker '
                'died; run the same command again (they are queued again '
                'once their last heartbeat is two minutes old)')
        if counts.get('waiting'):
            problems.append(f'{counts["waiting"]} runs are still queued: '
                            'start workers (--workers, or --join elsewhere)')
        if not counts.get('complete') and not counts.get('pruned'):
            problems.append('nothing ran: no training run finished')
        return problems

    def progress(self) -> dict:
        """How many trials are in each state, over the whole sweep."""
        counts: Dict[str, int] = {}
        for group in self.all_groups():
            for trial in self.trials(group):
                name = trial.state.name.lower()
                counts[name] = counts.get(name, 0) + 1
        return counts
