"""What a sweep's storage may hold: data, never code.

A sweep's storage (an SQLite or journal file, a database) is shared by
every worker of the sweep, on a cluster by everyone who can write it. So
each value read from it is checked as data before anything acts on it:

- the trainer of a run is always the worker's own checkout's
  ``tools/demo.py`` (or ``MMLML_SWEEP_TRAINER`` in the worker's own
  environment, e.g. the test suite's stand-in), never a path from the
  storage;
- a config is run only if it lies in the checkout's ``configs/`` folder or
  was named by the command that started the process, and only if its
  content still has the SHA-256 digest recorded when the sweep was
  defined;
- a trial's folder (``run``) is recomputed from its point and seed and
  must lie inside the work directory, and its point may only set the
  sweep's search keys (the learning rate, the epochs, the config's own
  ``tuning`` key) to values of their kind;
- the other fields (overrides, domain, pruning and its replay, threads,
  GPUs) must have the shape the tools write.

Whoever can write the storage can therefore stop or spoil a sweep's
results, but cannot make a worker run code that its checkout or its
command did not name. Each refusal is a :class:`SweepError` of one line.
"""
import ast
import hashlib
import numbers
import os
import os.path as osp
from typing import Any, Callable, Iterable, List, NoReturn, Optional

from .config_keys import EPOCHS_KEY, LR_KEY
from .settings import REPO_ROOT, abs_path

__all__ = [
    'SweepError', 'TRAINER_VARIABLE', 'config_digest', 'trainer_path',
    'check_definition', 'check_trial'
]

#: The environment variable that names another trainer for the workers of
#: this environment (the test suite's stand-in of ``tools/demo.py``).
TRAINER_VARIABLE = 'MMLML_SWEEP_TRAINER'
#: The keys of ``prune`` (:data:`~mmlml.benchmark.cli.PRUNING`).
PRUNE_KEYS = ('reduction_factor', 'min_trials')
#: Config keys that import code: refused in a stored ``cfg_options``.
CODE_KEYS = ('custom_imports', '_base_')


class SweepError(ValueError):
    """A sweep that cannot be created, continued or read."""


def config_files(path: str) -> List[str]:
    """``path`` and the files of its ``_base_`` chain, depth first (read
    as data: ``_base_`` must be a literal; a package's config,
    ``pkg::path``, is left to the installed package)."""
    files: List[str] = []

    def visit(file: str) -> None:
        file = osp.realpath(file)
        if file in files:
            return
        files.append(file)
        if not file.endswith('.py') or not osp.isfile(file):
            return
        with open(file, encoding='utf-8') as f:
            try:
                body = ast.parse(f.read()).body
            except SyntaxError:
                return  # the digest of its bytes; loading it says why
        for node in body:
            if isinstance(node, ast.Assign) and any(
                    getattr(t, 'id', None) == '_base_' for t in node.targets):
                try:
                    bases = ast.literal_eval(node.value)
                except ValueError:
                    return
                for base in [bases] if isinstance(bases, str) else bases:
                    if isinstance(base, str) and '::' not in base:
                        visit(osp.join(osp.dirname(file), base))

    visit(path)
    return files


def config_digest(path: str) -> str:
    """The SHA-256 digest of a config and every file of its ``_base_``
    chain (:func:`config_files`): a method config that is a child of the
    user's config changes when that config does."""
    digest = hashlib.sha256()
    for file in config_files(path):
        digest.update(osp.basename(file).encode() + b'\0')
        if osp.isfile(file):
            with open(file, 'rb') as f:
                digest.update(f.read())
        digest.update(b'\0')
    return digest.hexdigest()


def trainer_path() -> str:
    """The script a worker runs for each training: its own checkout's
    ``tools/demo.py``, or ``$MMLML_SWEEP_TRAINER``."""
    return os.environ.get(TRAINER_VARIABLE) or osp.join(
        REPO_ROOT, 'tools', 'demo.py')


def _inside(path: str, folder: str) -> bool:
    path, folder = osp.realpath(path), osp.realpath(folder)
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _is_number(value, integer: bool = False) -> bool:
    kind = numbers.Integral if integer else numbers.Real
    return isinstance(value, kind) and not isinstance(value, bool)


def check_definition(definition: dict, where: str,
                     trusted: Iterable[str] = ()) -> None:
    """Refuse a stored definition that is not plain data of the tools'
    shape, names a config this process may not run, or whose configs
    changed since the sweep was defined.

    Args:
        definition: The definition read from the storage.
        where: How errors name the sweep (storage and name).
        trusted: Config paths the command of this process named: besides
            the checkout's ``configs/``, the only configs it runs.
    """

    def refuse(problem: str) -> NoReturn:
        raise SweepError(f'{where}: {problem}; the storage holds data, not '
                         'code: define the sweep again with tools/benchmark.py'
                         ' (or name a new --study)')

    configs = definition.get('configs')
    if not isinstance(configs, list) or not all(
            isinstance(c, str) for c in configs):
        refuse('its `configs` are not a list of paths')
    digests = definition.get('digests')
    if not isinstance(digests, dict):
        refuse('it records no digests of its configs (defined by an older '
               'version)')
    named = {osp.realpath(abs_path(p)) for p in trusted}
    for config in configs:
        path = abs_path(config)
        if not (_inside(path, osp.join(REPO_ROOT, 'configs'))
                or osp.realpath(path) in named):
            refuse(f'config {config!r} lies outside this checkout\'s '
                   'configs/ and the command did not name it (name it on '
                   'the command line to run it)')
        if not osp.isfile(path):
            raise SweepError(f'{where}: config {config!r} is not on this '
                             'machine (check out the same configs)')
        if config_digest(path) != digests.get(config):
            raise SweepError(
                f'{where}: config {config!r} (or a file of its _base_ chain) '
                'changed since the sweep was '
                f'defined (digest {str(digests.get(config))[:12]}, now '
                f'{config_digest(path)[:12]}): restore it or name a new '
                '--study')
    options = definition.get('cfg_options') or {}
    if not isinstance(options, dict) or not all(
            isinstance(k, str) for k in options):
        refuse('its `cfg_options` are not a mapping of config keys')
    for key in options:
        if key.split('.')[0] in CODE_KEYS:
            refuse(f'its `cfg_options` set {key!r}, which imports code '
                   '(put it in a config the command names)')
    domain = definition.get('domain')
    if domain is not None and (not isinstance(domain, str) or not osp.isfile(
            osp.join(REPO_ROOT, 'configs', '_base_', 'domains',
                     f'{domain}.py')) or '/' in domain or '\\' in domain):
        refuse(f'its `domain` {domain!r} is not a domain of this checkout '
               '(configs/_base_/domains/)')
    prune = definition.get('prune')
    if prune is not None and not (isinstance(prune, dict)
                                  and set(prune) == set(PRUNE_KEYS) and all(
                                      _is_number(v, integer=True)
                                      for v in prune.values())):
        refuse(f'its `prune` {prune!r} is not {{{", ".join(PRUNE_KEYS)}}} '
               'of integers (a sweep defined with the earlier median rule '
               'is continued by importing its record, --import-ledger)')
    if definition.get('label_seed_per_seed', False) not in (True, False):
        refuse('its `label_seed_per_seed` '
               f'{definition["label_seed_per_seed"]!r} is not true or false')
    replay = definition.get('replay_unpruned', 0)
    if not _is_number(replay, integer=True) or not 0 <= replay <= 10000:
        refuse(f'its `replay_unpruned` {replay!r} is not an integer in '
               '[0, 10000]')
    for key, high in (('threads', 1024), ('gpus_per_trial', 64)):
        value = definition.get(key, 1)
        if not _is_number(value, integer=True) or not 1 <= value <= high:
            refuse(f'its `{key}` {value!r} is not an integer in [1, {high}]')
    if not isinstance(definition.get('work_dir'), str):
        refuse('its `work_dir` is not a path')


def check_trial(attrs: dict, make_run: Callable[[dict, int],
                                                str], work_dir: str,
                hyperparameter: Optional[tuple], where: str) -> None:
    """Refuse a stored trial whose point sets anything but the search keys
    (or a value of the wrong kind), or whose folder leaves the work
    directory.

    Args:
        attrs: The trial's user attributes (``point``, ``seed``, ``run``).
        make_run: The folder a point and seed make
            (:func:`.sweep.run_id` of the trial's group).
        work_dir: The sweep's work directory (absolute).
        hyperparameter: The config's ``(key, values)`` of ``tuning``.
        where: How errors name the trial.
    """
    point = attrs.get('point')
    seed: Any = attrs.get('seed')  # data of the storage, checked below
    if not isinstance(point, dict) or not _is_number(seed, integer=True):
        raise SweepError(f'{where}: its point or seed is not data of a '
                         'sweep')
    key, values = hyperparameter or (None, ())
    for name, value in point.items():
        if name == LR_KEY:
            good = _is_number(value) and value > 0
        elif name == EPOCHS_KEY:
            good = _is_number(value, integer=True) and value >= 1
        else:
            good = name == key and value in values
        if not good:
            raise SweepError(
                f'{where}: its point sets {name}={value!r}, outside the '
                f'sweep\'s search (the learning rate, the epochs'
                f'{f", {key} in {values}" if key else ""})')
    run = make_run(point, seed)
    if attrs.get('run') != run or not _inside(
            osp.join(work_dir, run), work_dir) or osp.isabs(run):
        raise SweepError(f'{where}: its folder {attrs.get("run")!r} is not '
                         f'the one its point and seed make ({run!r}) inside '
                         'the work directory')
