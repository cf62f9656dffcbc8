"""Pruning of a sweep's tuning runs, as one component: the pruners a sweep
may name, each parameter declared once, and who may be pruned.

A sweep stores its pruning as a *spec*, ``{'type': KIND, PARAMETER:
value, ...}`` (``prune`` of its definition, :mod:`.sweep_definition`;
None: no pruning). ``KIND`` is a name of :data:`PRUNERS`, an allow-list:
the sweep's own successive halving among runs of the same schedule and
seed (``same_schedule_halving``,
:class:`~.same_schedule_successive_halving_pruner.
SameScheduleSuccessiveHalvingPruner`) or one of Optuna's pruners
(``median``, ``successive_halving``, ``hyperband``, ``nop``). A storage is
untrusted: a spec is read as data (:func:`check_spec`), its name checked
against the allow-list and each parameter against its declaration; no
name in it is ever imported.

Each parameter is a :class:`Parameter`: its declaration (default and
bound, :mod:`mmlml.utils.hyperparameters`), its command-line option and
help. The tools' options (:func:`add_pruning_arguments`), the spec of the
options (:func:`spec_of_options`), the check of a stored spec, the
options that reproduce a spec (:func:`spec_options`) and the pruner that
a run reports to (:func:`build_pruner`, in
:class:`~.optuna_pruning_hook.OptunaPruningHook`) all come from these
declarations. A parameter added with a default reads older specs (they
take the default); a spec stored before kinds were named (successive
halving's two parameters, without ``type``) reads as
``same_schedule_halving``.

Every pruner starts at the run's *first rung*, the epoch after its
method's warm-up (:func:`~.method_warmup.steady_epoch` + 1, read from the
run's config): the first epoch compared by successive halving, the
``n_warmup_steps`` of the median rule, the ``min_resource`` of Optuna's
successive halving and Hyperband.

Who may be pruned (:func:`may_prune`) stands beside the rule: the tuning
runs of the first seed, never a seed run (its result is the table's),
never a run of an unpruned replay (it checks pruning), and never a run of
the ``full`` setting (every label: its best on validation is the honest
oracle, :mod:`.oracle`, which pruning could only miss).

This module runs inside a training run (the hook builds its pruner from
it): it imports the sweep's pruner and Optuna only when it builds one.
"""
import argparse
from typing import Any, Callable, Dict, List, Mapping, NamedTuple, Optional

from mmlml.utils.hyperparameters import Hyperparameter, Integer

__all__ = [
    'Parameter', 'PrunerKind', 'PRUNERS', 'DEFAULT_PRUNER',
    'UNPRUNED_SETTINGS', 'PrunerSpec', 'check_spec', 'build_pruner',
    'may_prune', 'add_pruning_arguments', 'spec_of_options', 'spec_options'
]


class Parameter(NamedTuple):
    """A pruner's parameter: its declaration (default and bound), the
    command-line option that sets it and the option's help."""

    declaration: Hyperparameter
    option: str
    help: str


class PrunerKind(NamedTuple):
    """A pruner a sweep may name: its parameters and how it is built
    (``build(first_rung, **parameters)``, an Optuna pruner)."""

    parameters: Dict[str, Parameter]
    build: Callable[..., Any]
    help: str


def _same_schedule_halving(first_rung: int, **parameters):
    from .same_schedule_successive_halving_pruner import \
        SameScheduleSuccessiveHalvingPruner
    return SameScheduleSuccessiveHalvingPruner(first_rung, **parameters)


def _median(first_rung: int, **parameters):
    import optuna
    return optuna.pruners.MedianPruner(n_warmup_steps=first_rung, **parameters)


def _successive_halving(first_rung: int, **parameters):
    import optuna
    return optuna.pruners.SuccessiveHalvingPruner(
        min_resource=first_rung, **parameters)


def _hyperband(first_rung: int, **parameters):
    import optuna
    return optuna.pruners.HyperbandPruner(
        min_resource=first_rung, **parameters)


def _nop(first_rung: int):
    import optuna
    return optuna.pruners.NopPruner()


_ETA_HELP = ('the reduction factor: at each rung (the epoch after the '
             "method's warm-up, then that times N, ...) one tuning run in N "
             'goes on')
_MIN_TRIALS_HELP = ('how many runs must have reached an epoch before a run '
                    'is stopped there (same_schedule_halving: other runs of '
                    'its schedule and seed)')

#: The pruners a sweep may name (``--pruner``), the allow-list of a stored
#: spec's ``type``.
PRUNERS: Dict[str, PrunerKind] = {
    'same_schedule_halving':
    PrunerKind(
        dict(
            reduction_factor=Parameter(
                Integer(3, low=2, high=1000), '--prune-eta', _ETA_HELP),
            min_trials=Parameter(
                Integer(2, low=1, high=100000), '--prune-min-trials',
                _MIN_TRIALS_HELP)), _same_schedule_halving,
        'successive halving among the runs of the same epochs and seed'),
    'median':
    PrunerKind(
        dict(
            n_startup_trials=Parameter(
                Integer(5, low=0, high=100000), '--prune-startup-trials',
                'finished runs of the study before any is stopped'),
            n_min_trials=Parameter(
                Integer(1, low=1, high=100000), '--prune-min-trials',
                _MIN_TRIALS_HELP)), _median,
        "Optuna's MedianPruner (every run of the group's study)"),
    'successive_halving':
    PrunerKind(
        dict(
            reduction_factor=Parameter(
                Integer(4, low=2, high=1000), '--prune-eta', _ETA_HELP),
            min_early_stopping_rate=Parameter(
                Integer(0, high=100), '--prune-min-early-stopping-rate',
                'rungs skipped before the first decision')),
        _successive_halving,
        "Optuna's SuccessiveHalvingPruner (every run of the group's study)"),
    'hyperband':
    PrunerKind(
        dict(
            reduction_factor=Parameter(
                Integer(3, low=2, high=1000), '--prune-eta', _ETA_HELP)),
        _hyperband, "Optuna's HyperbandPruner (every run of the group's "
        'study; its maximum resource: the epochs of its first finished '
        'run)'),
    'nop':
    PrunerKind({}, _nop, "Optuna's NopPruner: reports, never stops"),
}

#: The pruner of a sweep whose command names none.
DEFAULT_PRUNER = 'same_schedule_halving'

#: The settings whose tuning is never pruned: ``full`` (every label,
#: :data:`~.settings.FULL_SETTING`), whose best on validation is the honest
#: oracle (:mod:`.oracle`): unpruned, it is that by construction.
UNPRUNED_SETTINGS = ('full', )

#: The fields of a spec stored by a version whose median rule kept no
#: ``type`` (continued by importing its record, not read).
_MEDIAN_FIELDS = {'n_startup_trials', 'warmup'}


def check_spec(spec: Any, name: str = 'prune') -> dict:
    """The spec ``{'type': KIND, PARAMETER: value, ...}`` with every
    parameter of its kind (the declared default where it has none), each
    checked by its declaration; a spec without ``type`` whose fields are
    successive halving's reads as ``same_schedule_halving``.

    Raises:
        ValueError: one line naming ``name``, the field and what it holds
            (an unknown kind: the allow-list; a spec of the earlier median
            rule: to import its record).
    """
    if not isinstance(spec, Mapping):
        raise ValueError(f'{name} must be a mapping {{type: one of '
                         f'{", ".join(PRUNERS)}, parameters...}}, got '
                         f'{spec!r}')
    spec = dict(spec)
    if 'type' not in spec:
        if spec and set(spec) <= _MEDIAN_FIELDS:
            raise ValueError(
                f'{name} holds the earlier median rule ({spec!r}): a sweep '
                'defined with the earlier median rule is continued by '
                'importing its record, --import-ledger (or define it again '
                'under a new --study)')
        spec['type'] = DEFAULT_PRUNER  # stored before kinds were named
    kind = spec.pop('type')
    if not isinstance(kind, str) or kind not in PRUNERS:
        raise ValueError(f'{name} must name a pruner of '
                         f'{", ".join(PRUNERS)} in its type, got {kind!r}')
    declared = PRUNERS[kind].parameters
    unknown = [key for key in spec if key not in declared]
    if unknown:
        raise ValueError(
            f'{name} sets {unknown[0]!r}, not a parameter of the {kind} '
            f'pruner ({", ".join(declared) or "none"}); define the sweep '
            'again under a new --study')
    checked = {'type': kind}
    for key, parameter in declared.items():
        checked[key] = parameter.declaration.validate(
            f'{name}.{key}', spec.get(key, parameter.declaration.default))
    return checked


class PrunerSpec(Hyperparameter):
    """A declared hyperparameter whose value is a pruner spec, checked by
    :func:`check_spec` (the ``prune`` field of a sweep's definition, the
    ``pruner`` of the pruning hook)."""

    def check(self, name: str, value: Any) -> dict:
        return check_spec(value, name)


def build_pruner(spec: Mapping, first_rung: int):
    """The Optuna pruner of a checked ``spec`` (:func:`check_spec`) for a
    run whose first rung is ``first_rung`` (a 1-based epoch)."""
    checked = check_spec(spec)
    kind = PRUNERS[checked.pop('type')]
    return kind.build(first_rung, **checked)


def may_prune(spec: Optional[Mapping], *, setting: str, seed: int,
              first_seed: int, tune: bool, replay: bool) -> bool:
    """Whether a run may carry the pruning hook: the sweep prunes
    (``spec``), tunes, and the run is a tuning run (of the ``first_seed``)
    of neither an unpruned replay nor a setting of
    :data:`UNPRUNED_SETTINGS`."""
    return bool(spec) and tune and seed == first_seed and not replay \
        and setting not in UNPRUNED_SETTINGS


def _options() -> Dict[str, Dict[str, Any]]:
    """Each command-line option -> ``dest``, its type, and the kinds that
    read it with their defaults and bounds (an option such as
    ``--prune-eta`` sets the same parameter of several pruners)."""
    options: Dict[str, Dict[str, Any]] = {}
    for kind, pruner in PRUNERS.items():
        for key, parameter in pruner.parameters.items():
            entry = options.setdefault(
                parameter.option,
                dict(
                    dest=parameter.option[2:].replace('-', '_'),
                    help=parameter.help,
                    kinds={}))
            entry['kinds'][kind] = (key, parameter.declaration.default)
    return options


def add_pruning_arguments(parser: argparse.ArgumentParser) -> None:
    """``--no-prune``, ``--pruner`` and each parameter's option (default
    None: the named pruner's declared default)."""
    parser.add_argument(
        '--no-prune',
        action='store_true',
        help='run every tuning run to its end')
    parser.add_argument(
        '--pruner',
        choices=tuple(PRUNERS),
        default=DEFAULT_PRUNER,
        help='how tuning runs are stopped early: ' +
        '; '.join(f'{kind}: {pruner.help}'
                  for kind, pruner in PRUNERS.items()) +
        ' (default: %(default)s)')
    for option, entry in _options().items():
        defaults = ', '.join(f'{default} for {kind}'
                             for kind, (_, default) in entry['kinds'].items())
        parser.add_argument(
            option,
            dest=entry['dest'],
            type=int,
            metavar='N',
            default=None,
            help=f"{entry['help']} (default: {defaults})")


def spec_of_options(args: argparse.Namespace) -> Optional[dict]:
    """The checked spec of the options (None with ``--no-prune``).

    Raises:
        ValueError: one line naming the option: outside its bound, or not
            a parameter of the named pruner.
    """
    if args.no_prune:
        return None
    kind = getattr(args, 'pruner', None) or DEFAULT_PRUNER
    spec: Dict[str, Any] = {'type': kind}
    for option, entry in _options().items():
        value = getattr(args, entry['dest'], None)
        if value is None:
            continue
        if kind not in entry['kinds']:
            raise ValueError(f'{option} is not an option of the {kind} '
                             f'pruner (it sets {", ".join(entry["kinds"])})')
        key, _ = entry['kinds'][kind]
        parameter = PRUNERS[kind].parameters[key]
        try:
            spec[key] = parameter.declaration.validate(option, value)
        except ValueError as error:
            raise ValueError(f'{error} (the {kind} pruner)') from None
    return check_spec(spec)


def spec_options(spec: Optional[Mapping]) -> List[str]:
    """The options that give ``spec`` (:func:`spec_of_options`), for the
    command that reproduces a sweep: those that differ from the defaults."""
    if not spec:
        return ['--no-prune']
    checked = check_spec(spec)
    kind = checked.pop('type')
    parts = [] if kind == DEFAULT_PRUNER else ['--pruner', kind]
    for key, parameter in PRUNERS[kind].parameters.items():
        if checked[key] != parameter.declaration.default:
            parts += [parameter.option, str(checked[key])]
    return parts


def pruning_options(definition: dict) -> List[str]:
    """The options of a sweep's definition that the sweep and
    ``--replay-unpruned`` read, for the command that reproduces it."""
    parts = spec_options(definition.get('prune'))
    if definition.get('replay_unpruned'):
        parts += ['--replay-unpruned', str(definition['replay_unpruned'])]
    return parts
