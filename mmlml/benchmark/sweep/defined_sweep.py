"""A benchmark sweep's storage and definition: the part of
:class:`~.sweep.Sweep` that its trial queue (:mod:`.trial_queue`) and its
planning (:mod:`.sweep_planning`) share.

The definition (the configs, settings, modes, search rules, domain and
overrides) is the user attribute ``definition`` of the study named after
the sweep, written and read through
:func:`~.sweep_definition.write_definition` and checked by its
declaration on every read (:func:`~.stored_definition.check_definition`);
each (mode, setting, config) is the study ``SWEEP:MODE:SETTING:CONFIG``
(:class:`Group`), each training run a trial of it.
"""
import contextlib
import json
import os.path as osp
from typing import Dict, Iterator, List, NamedTuple, Optional

from mmlml.benchmark.sweep.search import SearchRules, point_name
from mmlml.benchmark.sweep.settings import REPO_ROOT, abs_path
from mmlml.benchmark.sweep.stored_definition import (SweepError,
                                                     check_definition,
                                                     sweep_digests)
from mmlml.benchmark.sweep.sweep_definition import (SweepDefinition,
                                                    write_definition)
from mmlml.benchmark.training.optuna_storage import open_storage, storage_path

__all__ = [
    'SweepError', 'Group', 'DefinedSweep', 'run_id', 'repo_path', 'abs_path',
    'file_lock', 'REPO_ROOT', 'LOST', 'DUPLICATE'
]

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


class DefinedSweep:
    """A sweep's storage and its definition: what the trial queue
    (:class:`~.trial_queue.TrialQueue`) and the planning
    (:class:`~.sweep_planning.SweepPlanning`) share; :class:`~.sweep.Sweep`
    joins the two.

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
    def domain(self) -> Optional[str]:
        """The demo configs' domain of the definition (None: their own):
        an argument of every parse (:func:`~.settings.load_config`), never
        this process's environment."""
        return self.definition.get('domain')

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

    def _lock(self):
        """One process at a time queues trials (a file lock beside a local
        storage; with a database server, duplicates are dropped when they
        are taken instead). Not ``STORAGE.lock``: that is the journal
        file's own lock, which Optuna takes as held while the file exists
        and removes by force after 30 s."""
        path = storage_path(self.spec)
        return file_lock(path + '.queue-lock') if path else \
            contextlib.nullcontext()

    # What the two halves give each other (Sweep joins them) --------------

    def all_groups(self) -> List[Group]:
        """Every study whose trials the workers run
        (:meth:`~.sweep_planning.SweepPlanning.all_groups`)."""
        raise NotImplementedError

    def config_facts(self, group: Group) -> dict:
        """A group's config facts
        (:meth:`~.sweep_planning.SweepPlanning.config_facts`)."""
        raise NotImplementedError

    def records(self, group: Group) -> List[dict]:
        """A group's runs (:meth:`~.trial_queue.TrialQueue.records`)."""
        raise NotImplementedError

    def failures(self, group: Group) -> List[str]:
        """A group's failed runs
        (:meth:`~.trial_queue.TrialQueue.failures`)."""
        raise NotImplementedError

    def add_trial(self,
                  group: Group,
                  point: dict,
                  seed: int,
                  state=None,
                  value: Optional[float] = None,
                  summary: Optional[dict] = None,
                  intermediate: Optional[dict] = None) -> None:
        """Record a run (:meth:`~.trial_queue.TrialQueue.add_trial`)."""
        raise NotImplementedError
