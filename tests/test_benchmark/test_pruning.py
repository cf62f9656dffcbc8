"""Pruning as one component (mmlml.benchmark.training.pruning): each
parameter's bound enforced on the command line and on a stored read, the
options that reproduce a spec, Optuna's pruners named by spec pruning as
Optuna's own, an unknown pruner name in a storage refused in one line, older
stored specs read (or refused in one line), and the ``full`` setting's tuning
never pruned."""
import argparse
import os.path as osp
import sys

import optuna
import pytest
from conftest import ROOT
from test_sweep import AN, FAKE, FULL, define

from mmlml.benchmark.cli import add_search_arguments, pruning
from mmlml.benchmark.sweep.settings import FULL_SETTING
from mmlml.benchmark.sweep.sweep_definition import (DefinitionError,
                                                    read_definition)
from mmlml.benchmark.sweep.worker import work
from mmlml.benchmark.training.pruning import (DEFAULT_PRUNER, PRUNERS,
                                              UNPRUNED_SETTINGS, Parameter,
                                              build_pruner, check_spec,
                                              may_prune, spec_options)
from mmlml.utils.hyperparameters import Integer

#: Every declared parameter: (kind, key, its declaration).
PARAMETERS = [
    pytest.param(kind, key, parameter, id=f'{kind}-{key}')
    for kind, pruner in PRUNERS.items()
    for key, parameter in pruner.parameters.items()
]


@pytest.fixture(autouse=True)
def fake_trainer(monkeypatch):
    monkeypatch.setenv('MMLML_SWEEP_TRAINER', FAKE)


def parse(*options):
    parser = argparse.ArgumentParser()
    add_search_arguments(parser)
    return parser.parse_args(list(options))


def outside(declaration):
    """Values just outside a declared integer's bound."""
    values = [declaration.low - 1]
    if declaration.high != float('inf'):
        values.append(declaration.high + 1)
    return values


def definition(prune):
    """A stored definition (as a storage holds it) with ``prune``."""
    return dict(
        name='s',
        configs=[AN],
        settings=['single_positive'],
        modes=['finetune'],
        rules=dict(
            lrs=[0.1],
            lr_bounds=[0.1, 0.1],
            max_doublings=0,
            seeds=[0],
            tune=True),
        prune=prune,
        work_dir='work',
        digests={AN: {
            AN: '0' * 64
        }})


@pytest.mark.parametrize('kind, key, parameter', PARAMETERS)
def test_each_bound_is_enforced_on_the_command_line(kind, key, parameter):
    declaration = parameter.declaration
    assert isinstance(declaration, Integer)
    for value in outside(declaration):
        with pytest.raises(
                ValueError,
                match=f'^{parameter.option} must be an integer .*, got '
                f'{value} \\(the {kind} pruner\\)$'):
            pruning(parse('--pruner', kind, parameter.option, str(value)))
    spec = pruning(
        parse('--pruner', kind, parameter.option, str(declaration.low)))
    assert spec['type'] == kind and spec[key] == declaration.low


@pytest.mark.parametrize('kind, key, parameter', PARAMETERS)
def test_each_bound_is_enforced_on_a_stored_read(kind, key, parameter):
    for value in outside(parameter.declaration):
        with pytest.raises(
                DefinitionError,
                match=f'^`prune.{key}` must be an integer .*, got {value}$'):
            read_definition(definition({'type': kind, key: value}))
    read = read_definition(definition({'type': kind}))
    assert read.prune[key] == parameter.declaration.default


def test_the_tool_refuses_an_option_out_of_bounds_in_one_line(capsys):
    sys.path.insert(0, osp.join(ROOT, 'tools'))
    import benchmark as tool
    with pytest.raises(SystemExit):
        tool.parse_args([AN, '--prune-eta', '1'])
    assert '--prune-eta must be an integer in [2, 1000], got 1' in \
        capsys.readouterr().err
    with pytest.raises(SystemExit):
        tool.parse_args([AN, '--pruner', 'nop', '--prune-eta', '3'])
    assert '--prune-eta is not an option of the nop pruner' in \
        capsys.readouterr().err


def test_the_defaults_and_the_reproducer_options_come_from_the_declaration():
    assert pruning(parse()) == dict(
        type=DEFAULT_PRUNER, reduction_factor=3, min_trials=2)
    assert pruning(parse('--no-prune')) is None
    assert spec_options(None) == ['--no-prune']
    assert spec_options(pruning(parse())) == []
    for kind, pruner in PRUNERS.items():
        spec = check_spec({'type': kind})
        for key, parameter in pruner.parameters.items():
            spec[key] = parameter.declaration.default + 1
        options = spec_options(spec)
        assert ('--pruner' in options) is (kind != DEFAULT_PRUNER)
        assert pruning(parse(*options)) == spec  # the command reproduces it


def test_an_unknown_pruner_in_a_storage_is_refused_in_one_line():
    for name in ('optuna.pruners.MedianPruner', 'os.system', 'Evil', 3):
        with pytest.raises(DefinitionError) as error:
            read_definition(definition({'type': name}))
        message = str(error.value)
        assert message.startswith('`prune` must name a pruner of ' +
                                  ', '.join(PRUNERS))
        assert '\n' not in message
    with pytest.raises(
            DefinitionError,
            match=r"^`prune` sets 'percentile', not a parameter of the "
            r'median pruner \(n_startup_trials, n_min_trials\); define the '
            'sweep again under a new --study$'):
        read_definition(definition({'type': 'median', 'percentile': 10}))


def test_older_stored_specs_read_or_are_refused_in_one_line(monkeypatch):
    # Stored before kinds were named: the sweep's successive halving.
    old = read_definition(definition(dict(reduction_factor=4, min_trials=1)))
    assert old.prune == dict(
        type='same_schedule_halving', reduction_factor=4, min_trials=1)
    # The earlier median rule: continued by importing its record.
    with pytest.raises(
            DefinitionError,
            match='earlier median rule is continued by importing its '
            'record'):
        read_definition(definition(dict(n_startup_trials=2, warmup=0.3)))
    # A parameter added with a default reads the older specs (they take
    # the default), so a sweep continues with the same command.
    monkeypatch.setitem(
        PRUNERS['same_schedule_halving'].parameters, 'patience',
        Parameter(Integer(0, high=10), '--prune-patience', 'a new one'))
    read = read_definition(definition(dict(reduction_factor=4, min_trials=1)))
    assert read.prune['patience'] == 0
    assert pruning(parse('--prune-eta', '4', '--prune-min-trials',
                         '1')) == read.prune


def test_a_sweep_stored_with_the_old_spec_continues(tmp_path):
    """The stored definition read back maps the old spec; the same
    command (which now writes the new spec) continues it."""
    sweep = define(
        tmp_path, configs=(AN, ), prune=dict(type='same_schedule_halving'))
    study_id = sweep.storage.get_study_id_from_name(sweep.name)
    stored = sweep.storage.get_study_user_attrs(study_id)['definition']
    assert stored['prune'] == dict(
        type='same_schedule_halving', reduction_factor=3, min_trials=2)
    stored['prune'] = dict(reduction_factor=3, min_trials=2)
    sweep.storage.set_study_user_attr(study_id, 'definition', stored)
    define(tmp_path, configs=(AN, ), prune=pruning(parse()))


def _values(number: int, step: int) -> float:
    """A deterministic learning curve per trial (some trail, some lead)."""
    return (number * 37 % 11) + step * (1 + number % 3)


def _states(pruner, name='optuna') -> list:
    study = optuna.create_study(
        study_name=name, direction='maximize', pruner=pruner)

    def objective(trial):
        for step in range(1, 13):
            value = _values(trial.number, step)
            trial.report(value, step)
            if trial.should_prune():
                raise optuna.TrialPruned()
        return value

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study.optimize(objective, n_trials=16)
    return [(t.state.name, t.last_step) for t in study.trials]


@pytest.mark.parametrize(
    'spec, own',
    [(dict(type='median', n_startup_trials=2),
      lambda: optuna.pruners.MedianPruner(2, n_warmup_steps=3)),
     (dict(type='successive_halving', reduction_factor=3),
      lambda: optuna.pruners.SuccessiveHalvingPruner(3, 3)),
     (dict(type='hyperband', reduction_factor=2),
      lambda: optuna.pruners.HyperbandPruner(3, reduction_factor=2)),
     (dict(type='nop'), lambda: optuna.pruners.NopPruner())],
    ids=['median', 'successive_halving', 'hyperband', 'nop'])
def test_an_optuna_pruner_named_by_spec_prunes_as_optunas_does(spec, own):
    """Built with the run's first rung 3: Optuna's pruner with that as its
    warm-up (``n_warmup_steps``) or first resource (``min_resource``)."""
    named = _states(build_pruner(spec, first_rung=3))
    assert named == _states(own())
    pruned = [state for state, _ in named if state == 'PRUNED']
    assert bool(pruned) is (spec['type'] != 'nop')


def test_the_full_setting_is_never_replayed_unpruned(tmp_path):
    sweep = define(
        tmp_path,
        configs=(FULL, ),
        settings=(FULL_SETTING, 'single_positive'),
        prune=pruning(parse()),
        replay=2)
    assert [g.setting for g in sweep.replay_groups()] == ['single_positive']


def test_who_may_be_pruned():
    spec = check_spec({})
    tuning = dict(
        setting='single_positive',
        seed=0,
        first_seed=0,
        tune=True,
        replay=False)
    assert may_prune(spec, **tuning)
    assert FULL_SETTING in UNPRUNED_SETTINGS
    for change in (dict(setting=FULL_SETTING), dict(seed=1), dict(tune=False),
                   dict(replay=True)):
        assert not may_prune(spec, **dict(tuning, **change))
    assert not may_prune(None, **tuning)


@pytest.mark.slow
def test_the_full_settings_tuning_is_never_pruned(tmp_path):
    """The same tuning in two settings: 0.5 trails both others at its first
    rung and is pruned in single_positive (as in test_sweep.py), while in
    the full setting every run goes to its end without reporting to a
    pruner, so the honest oracle is the best on validation of unpruned
    runs."""
    sweep = define(
        tmp_path,
        configs=(FULL, ),
        settings=('single_positive', FULL_SETTING),
        seeds=(0, ),
        lrs=(0.1, 0.3, 0.5),
        lr_bounds=(0.1, 0.5),
        prune=pruning(parse()))
    assert work(sweep.spec, 's', poll=0.2)['errors'] == []
    states = {
        g.setting: sorted(t.state.name for t in sweep.trials(g))
        for g in sweep.groups()
    }
    assert states == {
        'single_positive': ['COMPLETE', 'COMPLETE', 'PRUNED'],
        FULL_SETTING: ['COMPLETE'] * 3
    }
    (full, ) = [g for g in sweep.groups() if g.setting == FULL_SETTING]
    assert not any(t.intermediate_values for t in sweep.trials(full))
