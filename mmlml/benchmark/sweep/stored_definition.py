"""What a sweep's storage may hold: data, never code.

A sweep's storage (an SQLite or journal file, a database) is shared by
every worker of the sweep, on a cluster by everyone who can write it. So
each value read from it is checked as data before anything acts on it:

- every field of the definition by its declaration
  (:class:`~.sweep_definition.SweepDefinition`: settings, modes, seeds,
  domain, baseline and oracle, overrides that name no type, module, flag
  or file, ...), and every field of a trial by its own
  (:class:`~.trial_record.TrialRecord`), on every read;
- the trainer of a run is always the worker's own package's
  (:mod:`mmlml.apis.trial_training`, in the worker's process or as
  ``python -m mmlml.apis.trial_training``; or
  ``MMLML_SWEEP_TRAINER`` in the worker's own environment, e.g. the test
  suite's stand-in), never a path from the storage;
- a config is run only if it lies in the checkout's ``configs/`` folder or
  was named by the command that started the process, and only while every
  file MMEngine reads for it (:func:`config_files`: its ``_base_`` chain
  with MMEngine's placeholders resolved and ``+`` expressions evaluated,
  read as data, and the domain file of the runs) still has the SHA-256
  digest recorded when the sweep was defined (:func:`sweep_digests`);
- a trial's folder (``run``) is recomputed from its point and seed and
  must lie inside the work directory, and its point may only set the
  sweep's search keys (the learning rate, the epochs, the config's own
  ``tuning`` key) to values of their kind; a first stage's folder and
  checkpoint are derived, never read (:mod:`.worker`).

Whoever can write the storage can therefore stop or spoil a sweep's
results, but cannot make a worker run code that its checkout or its
command did not name, nor write outside the work directory. Each refusal
is a :class:`SweepError` of one line.
"""
import ast
import hashlib
import os
import os.path as osp
import re
from typing import (Any, Callable, Dict, Iterable, List, Mapping, NoReturn,
                    Optional)

from mmlml.benchmark.sweep.settings import (DOMAIN_VARIABLE, REPO_ROOT,
                                            abs_path, domain_file, run_domain)
from mmlml.benchmark.sweep.sweep_definition import (DefinitionError,
                                                    SweepDefinition,
                                                    read_definition)
from mmlml.benchmark.training.trial_record import (TrialError, TrialRecord,
                                                   read_trial)

__all__ = [
    'SweepError', 'TRAINER_VARIABLE', 'config_files', 'config_digests',
    'sweep_digests', 'file_key', 'trainer_path', 'check_definition',
    'check_trial', 'DOMAIN_VARIABLE'
]

#: The environment variable that names another trainer for the workers of
#: this environment (the test suite's stand-in of ``tools/demo.py``).
TRAINER_VARIABLE = 'MMLML_SWEEP_TRAINER'

# MMEngine's placeholders (mmengine.config.Config: _substitute_env_variables
# and _substitute_predefined_vars), resolved here as it resolves them.
_ENV_PLACEHOLDER = re.compile(
    r'\{\{[\'\"]?\s*\$(\w+)\s*\:\s*(\S*?)\s*[\'\"]?\}\}')
_PREDEFINED = ('fileDirname', 'fileBasename', 'fileBasenameNoExtension',
               'fileExtname')


class SweepError(ValueError):
    """A sweep that cannot be created, continued or read."""


def _substituted(text: str, file: str, env: Mapping[str, str]) -> str:
    """``text`` of the config ``file`` with MMEngine's placeholders
    replaced: the file's own names (``{{ fileDirname }}``...) and the
    environment's variables (``{{$VAR:default}}``) of ``env``."""
    values = dict(
        fileDirname=osp.dirname(file),
        fileBasename=osp.basename(file),
        fileBasenameNoExtension=osp.splitext(osp.basename(file))[0],
        fileExtname=osp.splitext(file)[1])
    for key in _PREDEFINED:
        value = values[key].replace('\\', '/')
        text = re.sub(r'\{\{\s*' + key + r'\s*\}\}', lambda _: value, text)
    return _ENV_PLACEHOLDER.sub(lambda m: env.get(m.group(1), m.group(2)),
                                text)


def _data(node: ast.AST, file: str) -> Any:
    """The value of a ``_base_`` expression made of data only: strings,
    lists and tuples of them, joined with ``+`` (what MMEngine evaluates,
    read without running anything)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_data(item, file) for item in node.elts]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _data(node.left, file), _data(node.right, file)
        if type(left) is type(right):
            return left + right
    if isinstance(node, ast.JoinedStr):
        return ''.join(_data(v, file) for v in node.values)
    raise SweepError(f'{file}: its _base_ is not data (strings, lists and '
                     '+ of them): a sweep cannot tell which files it reads')


def _bases(file: str, env: Mapping[str, str]) -> List[str]:
    """The ``_base_`` files of the config ``file``, as MMEngine finds them
    (placeholders resolved, relative to the file's folder; a package's
    config, ``pkg::path``, is left to the installed package)."""
    with open(file, encoding='utf-8') as f:
        text = _substituted(f.read(), file, env)
    try:
        body = ast.parse(text).body
    except SyntaxError:
        return []  # the digest of its bytes; loading it says why
    for node in body:
        if isinstance(node, ast.Assign) and isinstance(
                node.targets[0], ast.Name) and node.targets[0].id == '_base_':
            bases = _data(node.value, file)
            bases = bases if isinstance(bases, list) else [bases]
            return [
                osp.join(osp.dirname(file), b) for b in bases
                if isinstance(b, str) and '::' not in b
            ]
    return []


def config_files(path: str,
                 env: Optional[Mapping[str, str]] = None) -> List[str]:
    """``path`` and every file of its resolved ``_base_`` chain, depth
    first, as MMEngine reads them in the environment ``env`` (this
    process's by default): the placeholders of the demo configs' domain
    (``{{$MMLML_DEMO_DOMAIN:...}}``) and of the file's own names resolved,
    bases written as expressions evaluated as data (:func:`_data`)."""
    env = os.environ if env is None else env
    files: List[str] = []

    def visit(file: str) -> None:
        file = osp.realpath(file)
        if file in files:
            return
        files.append(file)
        if file.endswith('.py') and osp.isfile(file):
            for base in _bases(file, env):
                visit(base)

    visit(path)
    return files


def file_key(file: str) -> str:
    """How ``digests`` name a file: relative to the repository when inside
    it, else absolute."""
    relative = osp.relpath(file, REPO_ROOT)
    return file if relative.startswith('..') else relative


def _sha256(file: str) -> str:
    digest = hashlib.sha256()
    if osp.isfile(file):
        with open(file, 'rb') as f:
            digest.update(f.read())
    else:
        digest.update(b'missing')
    return digest.hexdigest()


def config_digests(path: str, domains: Iterable = (None, )) -> dict:
    """The SHA-256 digest of each file MMEngine reads for the config
    ``path`` (:func:`config_files`) in each of ``domains`` (the runs'
    values of ``MMLML_DEMO_DOMAIN``; None: this process's environment),
    of a second stage's first stage config (:func:`_first_stage`) and
    of each named domain's own file, by path (relative to the repository
    when inside it): a method config that is a child of the user's config
    changes when that config does, a demo config when its domain's file
    does."""
    found: Dict[str, str] = {}
    for domain in domains:
        env = dict(os.environ)
        if domain is not None:
            env[DOMAIN_VARIABLE] = domain
        files = config_files(abs_path(path), env)
        first = _first_stage(files, abs_path(path))
        while first is not None and osp.realpath(first) not in files:
            stage = config_files(first, env)
            files += stage
            first = _first_stage(stage, first)
        if domain is not None:
            files.append(osp.realpath(domain_file(domain)))
        for file in files:
            found.setdefault(file_key(file), _sha256(file))
    return found


def _first_stage(files: List[str], config: str) -> Optional[str]:
    """The config of a second stage's ``first_stage`` (its ``config``,
    relative to ``config``'s folder, as
    :func:`~.settings.dataset_modes` reads it), read as data from the
    first of ``files`` (the config, then its bases) that sets it; None
    for a one-stage config or one whose ``first_stage`` is no literal."""
    for file in files:
        if not (file.endswith('.py') and osp.isfile(file)):
            continue
        with open(file, encoding='utf-8') as f:
            try:
                body = ast.parse(f.read()).body
            except SyntaxError:
                continue
        for node in body:
            if isinstance(node, ast.Assign) and isinstance(
                    node.targets[0], ast.Name) and \
                    node.targets[0].id == 'first_stage':
                value = node.value
                if isinstance(value, ast.Call) and getattr(
                        value.func, 'id', None) == 'dict':
                    fields = {k.arg: k.value for k in value.keywords}
                elif isinstance(value, ast.Dict):
                    fields = {
                        getattr(k, 'value', None): v
                        for k, v in zip(value.keys, value.values)
                    }
                else:
                    return None
                stage = fields.get('config')
                if isinstance(stage, ast.Constant) and isinstance(
                        stage.value, str):
                    return osp.normpath(
                        osp.join(osp.dirname(config), stage.value))
                return None
    return None


def run_domains(domain: Optional[str], modes: Iterable[str]) -> list:
    """The values of ``MMLML_DEMO_DOMAIN`` that the runs of a sweep in
    ``domain`` and ``modes`` have (:func:`~.settings.run_domain`; None:
    the worker's own environment)."""
    return list(dict.fromkeys(run_domain(domain, mode) for mode in modes))


def sweep_digests(definition: Mapping[str, Any]) -> Dict[str, dict]:
    """:func:`config_digests` of each config of a definition, in the
    domains of its runs: the ``digests`` it records."""
    domains = run_domains(definition.get('domain'), definition['modes'])
    return {
        config: config_digests(config, domains)
        for config in definition['configs']
    }


def trainer_path() -> str:
    """The script that ``$MMLML_SWEEP_TRAINER`` names in the worker's own
    environment (the test suite's stand-in), which a worker runs for each
    training in place of :mod:`mmlml.apis.trial_training`; the caller
    checks that it is set."""
    return os.environ[TRAINER_VARIABLE]


def _inside(path: str, folder: str) -> bool:
    path, folder = osp.realpath(path), osp.realpath(folder)
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _changed_file(stored: Mapping[str, str], now: Mapping[str, str]) -> str:
    """The first file whose digest differs (or that one side lacks)."""
    for file in list(now) + list(stored):
        if stored.get(file) != now.get(file):
            return file
    return ''


def check_definition(definition: Any,
                     where: str,
                     trusted: Iterable = (),
                     storage_folder: Optional[str] = None) -> SweepDefinition:
    """The stored definition, checked: every field of its declared shape
    (:func:`~.sweep_definition.read_definition`), every config one this
    process may run, and no file MMEngine reads for one changed since the
    sweep was defined.

    Args:
        definition: The definition read from the storage.
        where: How errors name the sweep (storage and name).
        trusted: Config paths the command of this process named: besides
            the checkout's ``configs/``, the only configs it runs; and the
            work directory it named (``--work-dir``).
        storage_folder: The folder of a local storage file: a work
            directory inside it, or inside the checkout, needs no naming
            (None: a database server).

    Raises:
        SweepError: one line naming the field, config or file.
    """

    def refuse(problem: str) -> NoReturn:
        raise SweepError(f'{where}: {problem}; the storage holds data, not '
                         'code: define the sweep again with tools/benchmark.py'
                         ' (or name a new --study)')

    if isinstance(definition,
                  dict) and not isinstance(definition.get('digests'), dict):
        refuse('it records no digests of its configs (defined by an older '
               'version)')
    try:
        checked = read_definition(definition)
    except DefinitionError as error:
        refuse(str(error))
    named = {osp.realpath(abs_path(p)) for p in trusted}
    work_dir = abs_path(checked.work_dir)
    if not (_inside(work_dir, REPO_ROOT) or osp.realpath(work_dir) in named or
            (storage_folder is not None
             and _inside(work_dir, storage_folder))):
        refuse(f'its work_dir {checked.work_dir!r} lies outside this '
               'checkout and the storage\'s folder, and the command did not '
               'name it (give it as --work-dir to run there)')
    for config in checked.configs:
        path = abs_path(config)
        if not (_inside(path, osp.join(REPO_ROOT, 'configs'))
                or osp.realpath(path) in named):
            refuse(f'config {config!r} lies outside this checkout\'s '
                   'configs/ and the command did not name it (name it on '
                   'the command line to run it)')
        if not osp.isfile(path):
            raise SweepError(f'{where}: config {config!r} is not on this '
                             'machine (check out the same configs)')
    digests = checked.digests
    if set(digests) != set(checked.configs):
        refuse('its `digests` are not those of its configs')
    try:
        now = sweep_digests(checked)
    except SweepError as error:
        raise SweepError(f'{where}: {error}') from None
    for config in checked.configs:
        file = _changed_file(digests[config], now[config])
        if file:
            raise SweepError(
                f'{where}: {file} (read for config {config}) changed since '
                'the sweep was defined: restore it or name a new --study')
    return checked


def check_trial(attrs: dict, make_run: Callable[[dict, int],
                                                str], work_dir: str,
                hyperparameter: Optional[tuple], where: str) -> TrialRecord:
    """The stored trial, checked (:func:`~.trial_record.read_trial`): its
    point sets only the search keys to values of their kind, its seed is an
    integer, its folder the one they make inside the work directory.

    Args:
        attrs: The trial's user attributes (``point``, ``seed``, ``run``).
        make_run: The folder a point and seed make
            (:func:`.sweep.run_id` of the trial's group).
        work_dir: The sweep's work directory (absolute).
        hyperparameter: The config's ``(key, values)`` of ``tuning``.
        where: How errors name the trial.

    Raises:
        SweepError: one line naming the trial and the field.
    """
    try:
        return read_trial(attrs, make_run, work_dir, hyperparameter)
    except TrialError as error:
        raise SweepError(f'{where}: {error}') from None
