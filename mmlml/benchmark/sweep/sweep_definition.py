"""The definition of a benchmark sweep as its storage holds it: every field
declared once (:class:`SweepDefinition`, with the package's declared
hyperparameters, :mod:`mmlml.utils.hyperparameters`), written by
:func:`write_definition` and read back by :func:`read_definition`, which
checks each field by its declaration on every read.

A storage is shared by everyone who can write it, so what it holds is data
of the shapes declared here and nothing else: settings and modes of the
known sets, integer seeds, a domain of the checkout, a baseline and an
oracle among the sweep's configs, and overrides (``cfg_options``) that are
plain values under plain config keys (:class:`ConfigOverrides`: no
``type``, no ``_base_`` or other private key, no key that is a flag, no
string that names a module or a file). Where the configs may lie and
whether they changed is :mod:`.stored_definition`'s check.
"""
import math
import re
from typing import Any, Dict, Iterable, Mapping, Optional

from mmlml.benchmark.sweep.settings import MODES, SETTINGS, domains
from mmlml.benchmark.training.pruning import PrunerSpec
from mmlml.utils.hyperparameters import (Flag, Hyperparameter, Integer,
                                         RealTuple, Rule,
                                         check_hyperparameters)

__all__ = [
    'DefinitionError', 'SweepDefinition', 'ConfigOverrides', 'read_definition',
    'write_definition', 'DEFAULT_BASELINE', 'DEFAULT_ORACLE', 'config_name',
    'is_config_key'
]

#: The ends of the gap closed when the command names none
#: (``tools/benchmark.py --baseline/--oracle``).
DEFAULT_BASELINE, DEFAULT_ORACLE = 'an', 'full_labels'

#: A word: a config name, a plain string value of an override.
_WORD = re.compile(r'[A-Za-z0-9][A-Za-z0-9_-]*\Z')
#: One part of a dotted config key: a name or a list index.
_KEY_PART = re.compile(r'(?:[A-Za-z][A-Za-z0-9_]*|\d+)\Z')
#: Parts of a key whose string value MMEngine or a hook reads as code or as
#: a file: refused in a stored override (put them in a config).
_CODE_PARTS = ('type', 'custom_imports', 'imports')
_FILE_WORDS = ('file', 'dir', 'root', 'path', 'prefix', 'from', 'checkpoint',
               'resume', 'url', 'out', 'scope', 'module', 'script')


class DefinitionError(ValueError):
    """A stored field that is not of its declared shape (one line)."""


def config_name(config: str) -> str:
    """A config's name: its file name without ``.py``."""
    return config.replace('\\', '/').rsplit('/', 1)[-1].rsplit('.py', 1)[0]


def is_config_key(key: Any) -> bool:
    """Whether ``key`` is a plain dotted config key (names and list
    indices; no private part, no ``type``, nothing a command line would
    read as a flag)."""
    if not isinstance(key, str) or not key:
        return False
    parts = key.split('.')
    return all(_KEY_PART.match(p) for p in parts) and not any(p in _CODE_PARTS
                                                              for p in parts)


class ChoiceList(Hyperparameter):
    """A non-empty list of distinct strings of ``options`` (a tuple, or a
    callable that returns it at the check)."""

    options: Any = ()

    def check(self, name: str, value: Any) -> list:
        options = self.options() if callable(self.options) else self.options
        if not isinstance(value, list) or not value or \
                len(set(map(repr, value))) != len(value):
            raise ValueError(f'{name} must be a non-empty list of distinct '
                             f'values of {tuple(options)}, got {value!r}')
        for item in value:
            if not isinstance(item, str) or item not in options:
                raise ValueError(f'{name} must list values of '
                                 f'{tuple(options)}, got {item!r}')
        return list(value)


class IntegerList(Integer):
    """A non-empty list of distinct integers, each as :class:`Integer`
    checks it."""

    def check(self, name: str, value: Any) -> list:  # type: ignore[override]
        if not isinstance(value, list) or not value or \
                len(set(map(repr, value))) != len(value):
            raise ValueError(f'{name} must be a non-empty list of distinct '
                             f'integers, got {value!r}')
        return [
            super(IntegerList, self).check(f'{name}[{i}]', item)
            for i, item in enumerate(value)
        ]


class ConfigPaths(Hyperparameter):
    """A non-empty list of distinct ``.py`` paths (where they may lie is
    :func:`~.stored_definition.check_configs`')."""

    def check(self, name: str, value: Any) -> list:
        if not isinstance(value, list) or not value or len(
                set(map(repr, value))) != len(value) or not all(
                    isinstance(p, str) and p.endswith('.py') and '\0' not in p
                    and not p.startswith('-') for p in value):
            raise ValueError(f'{name} must be a non-empty list of distinct '
                             f'.py config paths, got {value!r}')
        return list(value)


class Path(Hyperparameter):
    """A path (or a name): a non-empty line that no command line reads as
    a flag."""

    def check(self, name: str, value: Any) -> str:
        plain = isinstance(value, str) and bool(value)
        if not plain or value.startswith('-') or any(c in value
                                                     for c in '\0\n\r'):
            raise ValueError(f'{name} must be a path, got {value!r}')
        return value


class Word(Hyperparameter):
    """A word (a name: letters, digits, ``_`` and ``-``, no path)."""

    def check(self, name: str, value: Any) -> str:
        if not isinstance(value, str) or not _WORD.match(value):
            raise ValueError(f'{name} must be a name (letters, digits, _ '
                             f'and -), got {value!r}')
        return value


class Domain(Hyperparameter):
    """A domain of this checkout (a file of ``configs/_base_/domains/``,
    :func:`~.settings.domains`)."""

    def check(self, name: str, value: Any) -> str:
        found = domains()
        if not isinstance(value, str) or value not in found:
            raise ValueError(f'{name} must be a domain of this checkout '
                             f'(configs/_base_/domains/: {", ".join(found)}),'
                             f' got {value!r}')
        return value


def _override_value(value: Any, string_ok: bool) -> bool:
    """Whether ``value`` is plain data of an override: None, a bool, a
    finite number, a word (where the key names no file), or a list of
    them."""
    if value is None or isinstance(value, bool):
        return True
    if isinstance(value, (int, float)):
        return math.isfinite(value)
    if isinstance(value, str):
        return string_ok and bool(_WORD.match(value))
    if isinstance(value, list):
        return all(_override_value(v, string_ok) for v in value)
    return False


class ConfigOverrides(Hyperparameter):
    """The overrides of every run (``--cfg-options``), as data only: each
    key a plain dotted config key (:func:`is_config_key`: no ``type``,
    ``custom_imports`` or ``_base_``, no flag), each value None, a bool, a
    finite number, a word or a list of them, and no word where the key's
    last part names a file or a folder (``load_from``, ``data_root``,
    ``work_dir``...). What needs more goes in a config the command
    names."""

    def check(self, name: str, value: Any) -> dict:
        if not isinstance(value, dict):
            raise ValueError(f'{name} must be a mapping of config keys, got '
                             f'{value!r}')
        for key, item in value.items():
            if not is_config_key(key):
                raise ValueError(
                    f'{name} must set plain config keys (no type, '
                    'custom_imports, _base_ or private key, no flag), got '
                    f'{key!r} (put it in a config the command names)')
            last = key.rsplit('.', 1)[-1].lower()
            string_ok = not any(word in last for word in _FILE_WORDS)
            if not _override_value(item, string_ok):
                raise ValueError(
                    f'{name} must give {key} a number, a bool, None, a word'
                    f'{"" if string_ok else " (no file: its key names one)"}'
                    f' or a list of them, got {item!r} (put it in a config '
                    'the command names)')
        return dict(value)


class Digests(Hyperparameter):
    """For each config, the SHA-256 digest of each file MMEngine reads for
    it (:func:`~.stored_definition.config_digests`)."""

    def check(self, name: str, value: Any) -> dict:
        if not isinstance(value, dict) or not all(
                isinstance(files, dict) and files and all(
                    isinstance(f, str) and isinstance(d, str)
                    and re.match(r'[0-9a-f]{64}\Z', d)
                    for f, d in files.items()) for files in value.values()):
            raise ValueError(
                f'{name} must map each config to the digests of its files, '
                'got another shape (a sweep defined by an earlier version, '
                'whose digests missed the bases MMEngine reads)')
        return dict(value)


class Declared(Hyperparameter):
    """A mapping of fields declared by ``fields`` (checked by
    :func:`~mmlml.utils.hyperparameters.check_hyperparameters`), then
    ``build`` (e.g. a dataclass that checks how they agree)."""

    fields: Mapping[str, Hyperparameter] = {}
    build: Any = None

    def check(self, name: str, value: Any) -> dict:
        if not isinstance(value, dict) or set(value) - set(self.fields):
            raise ValueError(f'{name} must be {{{", ".join(self.fields)}}}, '
                             f'got {value!r}')
        try:
            checked = check_hyperparameters(self.fields, value, name)
        except (TypeError, ValueError) as error:
            raise ValueError(f'{name}.{error}') from None
        if self.build is not None:
            try:
                self.build(**checked)
            except (TypeError, ValueError) as error:
                raise ValueError(f'{name} disagree: {error}') from None
        return checked


def _search_rules(**fields):
    from mmlml.benchmark.sweep.search import SearchRules
    return SearchRules.from_dict(fields)


def _listed(**fields) -> dict:
    """Tuples as the JSON of a storage holds them: lists."""
    return {
        k: list(v) if isinstance(v, tuple) else v
        for k, v in fields.items()
    }


#: The search rules (:class:`~.search.SearchRules`).
RULES = Declared(
    fields=dict(
        lrs=RealTuple(low=0, low_open=True),
        lr_bounds=RealTuple(low=0, low_open=True, names=('low', 'high')),
        max_doublings=Integer(2, high=20),
        seeds=IntegerList(high=2**31 - 1),
        tune=Flag(True)),
    build=_search_rules)

#: The pruner's spec (:func:`~.pruning.check_spec`: a kind of the
#: allow-list and its declared parameters); None: no pruning.
PRUNE = PrunerSpec(None, optional=True)


def _end_among_configs(end: Optional[str], default: str,
                       configs: Iterable[str]) -> bool:
    return end is None or end == default or end in map(config_name, configs)


class SweepDefinition(dict):
    """A sweep's definition: the fields below, each checked by its
    declaration (:func:`read_definition`); read as a dict or by attribute
    (``definition.configs``).

    Fields:
        name: The sweep's name (its definition study).
        configs: The configs, relative to the repository when inside it.
        settings, modes: Of :data:`~.settings.SETTINGS` and
            :data:`~.settings.MODES`.
        rules: The search rules (:class:`~.search.SearchRules`).
        domain: A domain of the checkout, or None (the configs' own).
        cfg_options: The overrides of every run
            (:class:`ConfigOverrides`).
        baseline, oracle: The ends of the gap closed: config names among
            the sweep's (or the tool's defaults).
        label_seed_per_seed: Each training seed draws its labels.
        prune: The pruner's spec (:mod:`.pruning`), or None.
        replay_unpruned: How many groups replay their tuning unpruned.
        work_dir: Where the runs go.
        threads, gpus_per_trial: Of each run.
        digests: Of the files of each config
            (:mod:`.stored_definition`).
    """

    hyperparameters: Dict[str, Hyperparameter] = dict(
        name=Path(),
        configs=ConfigPaths(),
        settings=ChoiceList(options=tuple(SETTINGS)),
        modes=ChoiceList(options=MODES),
        rules=RULES,
        domain=Domain(None, optional=True),
        cfg_options=ConfigOverrides({}),
        baseline=Word(DEFAULT_BASELINE, optional=True),
        oracle=Word(DEFAULT_ORACLE, optional=True),
        label_seed_per_seed=Flag(False),
        prune=PRUNE,
        replay_unpruned=Integer(0, high=10000),
        work_dir=Path(),
        threads=Integer(1, low=1, high=1024),
        gpus_per_trial=Integer(1, low=1, high=64),
        digests=Digests(),
    )
    #: The checks that span fields (:class:`~mmlml.utils.hyperparameters.
    #: Rule`; not ``rules``, a field).
    field_rules = (
        Rule(
            lambda baseline, configs: _end_among_configs(
                baseline, DEFAULT_BASELINE, configs),
            'baseline must be the name of one of the configs, got '
            '{baseline!r}'),
        Rule(
            lambda oracle, configs: _end_among_configs(oracle, DEFAULT_ORACLE,
                                                       configs),
            'oracle must be the name of one of the configs, got {oracle!r}'),
    )
    #: Fields that earlier versions stored and that are never read (the
    #: trainer is always the worker's own, :func:`.stored_definition.
    #: trainer_path`).
    ignored = ('trainer', )

    def __getattr__(self, name: str) -> Any:
        if name in type(self).hyperparameters:
            return self.get(name)
        raise AttributeError(name)


def _checked(definition: Any) -> SweepDefinition:
    if not isinstance(definition, dict):
        raise DefinitionError('it is not a mapping of fields')
    declared = SweepDefinition.hyperparameters
    unknown = [
        k for k in definition
        if k not in declared and k not in SweepDefinition.ignored
    ]
    if unknown:
        raise DefinitionError(f'its field {unknown[0]!r} is not one of a '
                              f'sweep\'s ({", ".join(declared)})')
    values = {k: v for k, v in definition.items() if k in declared}
    try:
        checked = check_hyperparameters(
            declared, values, 'the sweep', rules=SweepDefinition.field_rules)
    except (TypeError, ValueError) as error:
        field, _, rest = str(error).partition(' ')
        raise DefinitionError(f'`{field}` {rest}') from None
    checked['rules'] = _listed(**checked['rules'])
    return SweepDefinition(checked)


def read_definition(stored: Any) -> SweepDefinition:
    """The definition a storage holds, every field checked by its
    declaration (the fields of earlier versions that are never read
    dropped).

    Raises:
        DefinitionError: one line naming the field and what it holds.
    """
    return _checked(stored)


def write_definition(definition: Mapping[str, Any]) -> dict:
    """The JSON data a storage holds of ``definition`` (checked as
    :func:`read_definition` checks it: a definition that could not be read
    back is never written)."""
    import json
    data = json.loads(json.dumps(dict(definition)))
    for key in SweepDefinition.ignored:
        data.pop(key, None)
    return json.loads(json.dumps(dict(_checked(data))))
