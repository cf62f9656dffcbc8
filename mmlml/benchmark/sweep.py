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
:func:`~mmlml.benchmark.search.plan` what each study still needs, and
taken by workers with :meth:`Sweep.pop` (Optuna's atomic ``WAITING`` ->
``RUNNING``). A worker records a trial's summary and its final state in
one call; a trial whose worker stops sending heartbeats is failed and
queued again (:meth:`Sweep.fail_stale`), so a killed worker never leaves
a half-recorded result. Any number of workers, on any machines that
reach the storage, can work on one sweep at once.
"""
import contextlib
import dataclasses
import json
import os
import os.path as osp
import time
from typing import Dict, Iterator, List, NamedTuple, Optional

from mmengine.config import Config

from ..models.losses.stock_losses import stock_loss_in_config
from .optuna_storage import open_storage, storage_path
from .pruning import UNPRUNED_SETTINGS
from .search import Plan, SearchRules, key_hyperparameter, plan, point_name
from .settings import REPO_ROOT, SETTINGS, abs_path, dataset_modes
from .stored_definition import (SweepError, check_definition, check_trial,
                                sweep_digests)
from .sweep_definition import SweepDefinition, write_definition
from .trial_record import (FAILURE, HEARTBEAT, POINT, RETRY_OF, RUN, SEED,
                           VAL_MAP, WORKER, write_trial)

__all__ = [
    'SweepError', 'Group', 'Sweep', 'run_id', 'repo_path', 'abs_path',
    'first_seed_point', 'file_lock', 'REPO_ROOT', 'LOST', 'DUPLICATE'
]

#: The repository: config paths in a definition are relative to it.

#: What a trial's failure was: a lost worker (queued again) or a duplicate
#: of a run another worker took (dropped); any other failure is the run's.
LOST, DUPLICATE = 'worker lost', 'duplicate'


@contextlib.contextmanager
def file_lock(path: str) -> Iterator[None]:
    """An exclusive lock on the file ``path`` (made if missing)."""
    import fcntl
    with open(path, 'a') as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


class Group(NamedTuple):
    """A (mode, setting, config) of a sweep: one study."""
    mode: str
    setting: str
    config: str  # relative to the repository when inside it
    first_stage: Optional[str]  # the first stage's config, if any
    replay: bool = False  # the unpruned replay of the group's tuning

    @property
    def name(self) -> str:
        return osp.splitext(osp.basename(self.config))[0]


def run_id(mode: str,
           setting: str,
           point: dict,
           name: str,
           seed: int,
           replay: bool = False) -> str:
    """A run's folder under the work directory,
    ``MODE/SETTING/POINT/CONFIG/seedN`` (under ``unpruned/`` for a run of
    an unpruned replay)."""
    parts = [mode, setting, point_name(point), name, f'seed{seed}']
    return '/'.join((['unpruned'] if replay else []) + parts)


def repo_path(path: str) -> str:
    """``path`` relative to the repository when it is inside it, else
    absolute (a relative ``path`` is relative to the working directory,
    never to the repository)."""
    relative = osp.relpath(osp.abspath(path), REPO_ROOT)
    return osp.abspath(path) if relative.startswith('..') else relative


class Sweep:
    """A sweep in an Optuna storage (see the module docstring).

    Args:
        storage (str): The storage
            (:func:`~.optuna_storage.open_storage`).
        name (str): The sweep's name (its definition study).
        must_exist (bool): Refuse a storage or sweep that does not exist.
        trusted (list of str): The config paths that this process's
            command named: the configs outside the checkout's ``configs/``
            it may run, and its work directory
            (:func:`~.stored_definition.check_definition`).
    """

    def __init__(self,
                 storage: str,
                 name: str,
                 must_exist: bool = True,
                 trusted=()):
        import optuna
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        # A local file by its absolute path: the runs' processes (the
        # pruning hook) work in the repository, not in this process's folder.
        self.spec = storage if '://' in storage else osp.abspath(storage)
        self.name = name
        self.trusted = [osp.abspath(p) for p in trusted]
        self.storage = open_storage(storage, must_exist=must_exist)
        self._studies: Dict[str, object] = {}
        self._configs: Dict[tuple, dict] = {}
        self._definition: Optional[SweepDefinition] = None
        if must_exist:
            self.definition  # noqa: B018 (refuse a storage without it)

    @property
    def _storage_folder(self) -> Optional[str]:
        """The folder of a local storage file (None: a database)."""
        path = storage_path(self.spec)
        return osp.dirname(path) if path else None

    # The definition ------------------------------------------------------

    @property
    def definition(self) -> SweepDefinition:
        """The stored definition, every field checked by its declaration
        and every config's files unchanged
        (:func:`~.stored_definition.check_definition`)."""
        if self._definition is None:
            # Data, not code: checked before any config is read.
            definition = check_definition(
                self.stored_definition(), f'{self.spec} (sweep {self.name!r})',
                self.trusted, self._storage_folder)
            self._definition = definition
            if definition.get('domain'):
                os.environ['MMLML_DEMO_DOMAIN'] = definition['domain']
        return self._definition

    def stored_definition(self) -> dict:
        """The definition as stored, unchecked: read it, never run it
        (:attr:`definition` is the checked one)."""
        try:
            study_id = self.storage.get_study_id_from_name(self.name)
        except KeyError:
            names = [
                s.study_name for s in self.storage.get_all_studies()
                if ':' not in s.study_name
            ]
            raise SweepError(
                f'{self.spec}: no sweep named {self.name!r} (it holds '
                f'{names or "none"}); pass --study with one of them') from None
        definition = self.storage.get_study_user_attrs(study_id).get(
            'definition')
        if not isinstance(definition, dict) or not isinstance(
                definition.get('configs'), list):
            raise SweepError(f'{self.spec}: study {self.name!r} is not '
                             'a benchmark sweep (no definition)')
        return definition

    @property
    def rules(self) -> SearchRules:
        return SearchRules.from_dict(self.definition['rules'])

    def define(self, definition: dict, keep_configs: bool = True) -> None:
        """Record ``definition`` with the digest of each config; an
        existing sweep of this name may only grow (more configs, settings
        or modes) under the same rules, domain and overrides, and only if
        ``definition`` names every config it holds, unchanged (its
        ``replay_unpruned`` is the command's): a command
        never runs a config it did not name. With ``keep_configs=False``
        its configs become the definition's (``tools/select_method.py``:
        the methods of the command; the ones it drops are not read); the
        trials of the others stay in the storage, and naming a config
        again goes on with them."""
        # One command at a time defines a sweep in a local storage (two
        # commands creating the same new sweep at once both go on).
        with self._lock():
            self._define(definition, keep_configs)

    def _define(self, definition: dict, keep_configs: bool) -> None:
        """:meth:`define` under the queue lock."""
        import optuna
        definition = json.loads(json.dumps(definition))
        definition.pop('trainer', None)  # the checkout's, never stored
        definition['digests'] = sweep_digests(definition)
        definition = write_definition(definition)
        self.trusted += [abs_path(c) for c in definition['configs']
                         ] + [abs_path(definition['work_dir'])]
        try:
            study_id = self.storage.get_study_id_from_name(self.name)
        except KeyError:
            study_id = self.storage.create_new_study(
                [optuna.study.StudyDirection.MAXIMIZE], self.name)
            self.storage.set_study_user_attr(study_id, 'definition',
                                             definition)
            self._definition = None
            self.definition  # noqa: B018 (set the domain)
            return
        stored_configs = self.stored_definition().get('configs')
        if keep_configs:
            old = self.definition
        else:  # the configs it drops are not read
            # Checked with the command's configs in place of the others.
            found = dict(self.stored_definition())
            stored = found.get('digests')
            kept = [
                c for c in found.get('configs') or []
                if c in definition['configs'] and isinstance(stored, dict)
                and c in stored
            ]
            found['configs'] = kept or list(definition['configs'])
            found['digests'] = {
                c:
                stored[c]  # type: ignore[index]  # (kept: a dict's)
                if c in kept else definition['digests'][c]
                for c in found['configs']
            }
            old = check_definition(found, f'{self.spec} (sweep {self.name!r})',
                                   self.trusted, self._storage_folder)
        unnamed = [c for c in old['configs'] if c not in definition['configs']]
        if unnamed:
            raise SweepError(
                f'{self.spec}: sweep {self.name!r} exists with configs this '
                f'command does not name: {", ".join(unnamed)} (its configs: '
                f'{", ".join(old["configs"])}); name them all to continue '
                'it, join it with --join, or name a new --study')
        fixed = [
            k for k in ('rules', 'domain', 'cfg_options', 'prune', 'work_dir',
                        'label_seed_per_seed')
            if old.get(k) != definition.get(k)
        ]
        if fixed:
            was = ', '.join(f'{k}={old.get(k)!r}' for k in fixed)
            raise SweepError(
                f'{self.spec}: sweep {self.name!r} exists with other '
                f'{", ".join(fixed)} ({was}); continue it with the same '
                'ones or name a new --study')
        grown = dict(old)
        for key in ('configs', 'settings', 'modes'):
            grown[key] = list(dict.fromkeys(old[key] + definition[key]))
        grown['digests'] = definition['digests']
        # The replay may be asked for (or dropped) by a later command.
        grown['replay_unpruned'] = definition.get('replay_unpruned', 0)
        if not keep_configs:
            grown['configs'] = list(definition['configs'])
        if grown != old or grown['configs'] != stored_configs:
            self.storage.set_study_user_attr(study_id, 'definition',
                                             write_definition(grown))
            self._definition = None

    # Groups and their trials ---------------------------------------------

    def groups(self) -> List[Group]:
        """Every (mode, setting, config), first stages before the configs
        that need them."""
        definition = self.definition
        configs = list(definition['configs'])
        firsts = {}
        for config in list(configs):
            first = dataset_modes(abs_path(config), 'own')[2]
            if first is not None:
                firsts[config] = repo_path(first['config'])
                if firsts[config] not in configs:
                    configs.insert(0, firsts[config])
        configs.sort(key=lambda c: c not in firsts.values())
        return [
            Group(mode, setting, config, firsts.get(config))
            for mode in definition['modes']
            for setting in definition['settings'] for config in configs
            if self.trains_in(config, setting)
        ]

    def left_out(self) -> Dict[str, List[str]]:
        """The configs (by name) each setting leaves out
        (:meth:`trains_in`); only the settings that leave some out."""
        left: Dict[str, List[str]] = {}
        for setting in self.definition['settings']:
            for config in self.definition['configs']:
                if not self.trains_in(config, setting):
                    left.setdefault(setting, []).append(
                        osp.splitext(osp.basename(config))[0])
        return left

    def trains_in(self, config: str, setting: str) -> bool:
        """Whether ``config`` can train in ``setting``. MMPretrain's stock
        sigmoid losses cannot read observed negatives (-1), which the full
        labels are made of (PartialLabelDataset ``mode='full'``): a config
        training with one (alone or in a ``LossSum``) on labels the
        setting imposes is left out of the full setting (AN on all labels
        is ``full_labels.py``, with ``ANLoss``), and so is a second stage
        whose first stage is (its label file is made by that stage)."""
        if SETTINGS[setting].get('mode') != 'full':
            return True
        facts = self._config_facts(config)
        if facts['stock_loss'] and facts['train_mode'] != 'file':
            return False
        first = facts['first_stage']
        return first is None or self.trains_in(first, setting)

    def replay_groups(self) -> List[Group]:
        """The groups whose tuning is replayed without pruning: the first
        ``replay_unpruned`` of the definition, taken on a diagonal (the
        k-th pairs the k-th config, setting and mode, each list read
        cyclically) so that they spread over configs and settings, then
        in the sweep's order; none without pruning or tuning. A second
        stage is not replayed (its runs depend on its first stage's), nor
        a setting whose tuning is never pruned
        (:data:`~.pruning.UNPRUNED_SETTINGS`)."""
        count = self.definition.get('replay_unpruned') or 0
        if not count or not self.definition.get('prune') or \
                not self.rules.tune:
            return []
        groups = [
            g for g in self.groups()
            if g.first_stage is None and g.setting not in UNPRUNED_SETTINGS
        ]
        configs = list(dict.fromkeys(g.config for g in groups))
        settings, modes = self.definition['settings'], \
            self.definition['modes']
        index = {(g.mode, g.setting, g.config): g for g in groups}
        diagonal = [
            index.get((modes[k % len(modes)], settings[k % len(settings)],
                       configs[k % len(configs)])) for k in range(len(groups))
        ]
        chosen = list(dict.fromkeys(g for g in diagonal + groups if g))
        return [g._replace(replay=True) for g in chosen[:count]]

    def all_groups(self) -> List[Group]:
        """:meth:`groups` and :meth:`replay_groups`: every study whose
        trials the workers run."""
        return self.groups() + self.replay_groups()

    def group(self, mode: str, setting: str, name: str) -> Group:
        for group in self.groups():
            if (group.mode, group.setting, group.name) == (mode, setting,
                                                           name):
                return group
        raise SweepError(f'sweep {self.name!r} has no {mode} {setting} '
                         f'{name}')

    def study_name(self, group: Group) -> str:
        replay = ':unpruned' if group.replay else ''
        return (f'{self.name}{replay}:{group.mode}:{group.setting}:'
                f'{group.name}')

    def study(self, group: Group):
        import optuna
        name = self.study_name(group)
        if name not in self._studies:
            self._studies[name] = optuna.create_study(
                study_name=name,
                storage=self.storage,
                direction='maximize',
                load_if_exists=True)
        return self._studies[name]

    def config_facts(self, group: Group) -> dict:
        """The config's own epochs and learning rate, its key
        hyperparameter, whether its loss is one of MMPretrain's stock
        sigmoid losses and its training labels' mode, with the sweep's
        overrides."""
        return self._config_facts(group.config)

    def _config_facts(self, config: str) -> dict:
        """:meth:`config_facts` of a config (a path of the checkout), and
        its first stage's (None for a one-stage method)."""
        key = (config, )
        if key not in self._configs:
            cfg = Config.fromfile(abs_path(config))
            cfg.merge_from_dict(self.definition.get('cfg_options') or {})
            first = dataset_modes(abs_path(config), 'own')[2]
            self._configs[key] = dict(
                epochs=cfg.train_cfg.max_epochs,
                lr=cfg.optim_wrapper.optimizer.lr,
                hyperparameter=key_hyperparameter(cfg, config),
                stock_loss=stock_loss_in_config(
                    cfg.model.get('head', {}).get('loss')) is not None,
                train_mode=cfg.train_dataloader.dataset.get('mode'),
                first_stage=first and repo_path(first['config']))
        return self._configs[key]

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

    def plan(self, group: Group) -> Plan:
        """What the rules say of the group. A replay's search is the
        first seed's only, and it reuses the runs of that seed that the
        pruned search finished or is running (the same training: pruning
        only stops it), so that it trains only what pruning cut short."""
        facts = self.config_facts(group)
        rules, records = self.rules, self.records(group)
        if group.replay:
            rules = dataclasses.replace(rules, seeds=rules.seeds[:1])
            records = [
                r for r in self.records(group._replace(replay=False))
                if r[SEED] == rules.seeds[0] and r['state'] != 'pruned'
            ] + records
        return plan(records, rules, facts['epochs'], facts['lr'],
                    facts['hyperparameter'])

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

    # What workers do -----------------------------------------------------

    def _lock(self):
        """One process at a time queues trials (a file lock beside a local
        storage; with a database server, duplicates are dropped when they
        are taken instead). Not ``STORAGE.lock``: that is the journal
        file's own lock, which Optuna takes as held while the file exists
        and removes by force after 30 s."""
        path = storage_path(self.spec)
        return file_lock(path + '.queue-lock') if path else \
            contextlib.nullcontext()

    def advance(self) -> dict:
        """Queue every run the rules need now; returns ``{'queued': n,
        'errors': [...], 'done': bool}`` (done: every group finished or
        failed, nothing queued or running)."""
        queued, errors, busy = 0, [], False
        with self._lock():
            done_groups: Dict[Group, Optional[Plan]] = {}
            for group in self.groups():
                failures = self.failures(group)
                if failures:
                    errors.append(f'{group.mode} {group.setting} '
                                  f'{group.config}: {failures[0]}')
                    done_groups[group] = None
                    continue
                if group.first_stage is not None:
                    first = Group(group.mode, group.setting, group.first_stage,
                                  None)
                    first_plan = done_groups.get(first)
                    if first_plan is None or not first_plan.done:
                        busy = busy or first_plan is not None
                        if first_plan is None and first in done_groups:
                            errors.append(f'{group.mode} {group.setting} '
                                          f'{group.config}: its first stage '
                                          f'{group.first_stage} failed')
                        continue
                current = self.plan(group)
                done_groups[group] = current
                for point, seed in current.needed:
                    self.add_trial(group, point, seed)
                    queued += 1
                busy = busy or current.waiting or bool(current.needed)
            for group in self.replay_groups():
                # After the pruned search chose: its runs are reused.
                main = done_groups.get(group._replace(replay=False))
                if main is None or main.chosen is None:
                    continue
                failures = self.failures(group)
                if failures:
                    errors.append(f'unpruned replay of {group.mode} '
                                  f'{group.setting} {group.config}: '
                                  f'{failures[0]}')
                    continue
                current = self.plan(group)
                for point, seed in current.needed:
                    self.add_trial(group, point, seed)
                    queued += 1
                busy = busy or current.waiting or bool(current.needed)
        return dict(queued=queued, errors=errors, done=not busy)

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


def first_seed_point(sweep: Sweep, group: Group, seed: int) -> dict:
    """The record of the first stage's run that a second stage's run of
    ``seed`` uses: the first stage's chosen point at that seed."""
    first_stage: str = group.first_stage  # type: ignore[assignment]
    first = Group(group.mode, group.setting, first_stage, None)
    current = sweep.plan(first)
    if not current.done:
        raise SweepError(f'{group.config}: its first stage '
                         f'{group.first_stage} has not finished')
    for run in current.runs:  # type: ignore[union-attr]  # (done: set)
        if run[SEED] == seed:
            return run
    raise SweepError(f'{group.config}: its first stage has no run of seed '
                     f'{seed} (the sweep\'s seeds are {sweep.rules.seeds})')
