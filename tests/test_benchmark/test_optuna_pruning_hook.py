"""OptunaPruningHook on a journal storage, with successive halving among
the trials of the same schedule and seed: the rungs, the keep-top rule
(ties go on, pruned and running trials count), no decision with too few
comparable runs, a run compared again at its rung after later epochs; the
first rung after the method's warm-up read from its config; the hook's
arguments and a missing validation metric. The pruner is an Optuna
pruner of its own."""
import argparse
import types

import optuna
import pytest
from mmengine.config import Config

from mmlml.benchmark.cli import pruning
from mmlml.benchmark.sweep.method_warmup import steady_epoch
from mmlml.benchmark.training.config_keys import EPOCHS_KEY
from mmlml.benchmark.training.optuna_pruning_hook import OptunaPruningHook
from mmlml.benchmark.training.optuna_storage import open_storage
from mmlml.benchmark.training.pruning import build_pruner
from mmlml.benchmark.training.same_schedule_successive_halving_pruner import (
    SameScheduleSuccessiveHalvingPruner, rungs)

MAP = 'multi-label/mAP'


def study_with(tmp_path, others, epochs=10):
    """A study in a journal file with trials ``(mAP, state)`` (or ``(mAP,
    state, epochs, seed)``) that reported that mAP at epochs 1 to 3;
    the storage's path and the study."""
    storage = str(tmp_path / 'sweep.journal')
    study = optuna.create_study(
        study_name='sweep',
        storage=open_storage(storage),
        direction='maximize',
        load_if_exists=True)
    for value, state, *schedule in others:
        its_epochs, seed = schedule or (epochs, 0)
        trial = study.ask()
        trial.set_user_attr('point', {EPOCHS_KEY: its_epochs})
        trial.set_user_attr('seed', seed)
        for epoch in (1, 2, 3):
            trial.report(value, epoch)
        if state != 'running':
            study.tell(
                trial,
                value if state == 'complete' else None,
                state=optuna.trial.TrialState[state.upper()])
    return storage, study


def hook_for(storage, study, epochs=10, seed=0, first_rung=2, **pruner):
    """A hook of a new trial, whose pruner is successive halving with the
    parameters ``pruner`` (the defaults for the others)."""
    trial = study.ask()
    trial.set_user_attr('point', {EPOCHS_KEY: epochs})
    trial.set_user_attr('seed', seed)
    return OptunaPruningHook(
        storage=storage,
        study_name='sweep',
        trial_id=trial._trial_id,
        first_rung=first_rung,
        pruner=dict(type='same_schedule_halving', **pruner)
        if pruner else None)


def validate(hook, epoch, value, max_epochs=10):
    """Run the hook after the validation of ``epoch``; whether the
    training was told to stop."""
    runner = types.SimpleNamespace(
        epoch=epoch,
        max_epochs=max_epochs,
        train_loop=types.SimpleNamespace(stop_training=False),
        logger=types.SimpleNamespace(info=lambda message: None))
    hook.after_val_epoch(runner, {MAP: value})
    return runner.train_loop.stop_training


def test_the_rungs():
    assert rungs(2, 3, 10) == [2, 6]
    assert rungs(1, 2, 10) == [1, 2, 4, 8]
    assert rungs(6, 3, 10) == [6]
    assert rungs(10, 3, 10) == []  # a warm-up to the end: never pruned


def test_one_run_in_eta_goes_on_from_the_first_rung(tmp_path):
    storage, study = study_with(tmp_path, [(60., 'complete'), (70., 'pruned')])
    hook = hook_for(storage, study)
    assert not validate(hook, 1, 10.)  # before the first rung
    assert validate(hook, 2, 65.)  # 1 of 3 goes on: 70 does
    (trial, ) = [t for t in study.trials if t._trial_id == hook.trial_id]
    assert trial.user_attrs['pruned at epoch'] == 2
    assert trial.intermediate_values == {1: 10., 2: 65.}
    assert not validate(hook_for(storage, study), 2, 70.)  # ties go on
    # Five others (one still running): the top 2 of 6 go on.
    storage, study = study_with(tmp_path / 'five', [(50., 'complete'),
                                                    (60., 'pruned'),
                                                    (70., 'complete'),
                                                    (80., 'running'),
                                                    (90., 'complete')])
    assert validate(hook_for(storage, study), 2, 75.)
    assert not validate(hook_for(storage, study), 2, 85.)


def test_too_few_comparable_runs_decide_nothing(tmp_path):
    # Other epochs, another seed, a failed run: not comparable.
    storage, study = study_with(tmp_path, [(60., 'complete'),
                                           (70., 'complete', 20, 0),
                                           (70., 'complete', 10, 1),
                                           (70., 'fail')])
    hook = hook_for(storage, study)
    assert not validate(hook, 2, 10.)
    assert not validate(hook, 10, 10.)  # the last epoch: never
    assert not validate(hook_for(storage, study, min_trials=1), 2, 61.)
    assert validate(hook_for(storage, study, min_trials=1), 2, 59.)


def test_a_run_is_compared_at_its_rung_again_when_others_arrive(tmp_path):
    storage, study = study_with(tmp_path, [(60., 'complete')])
    hook = hook_for(storage, study)
    assert not validate(hook, 2, 65.)  # one other: too few
    study_with(tmp_path, [(70., 'running')])  # the same journal, later
    # Now 1 of 3 go on at epoch 2, and its 65 trails 70 there, and at
    # epoch 3 (both others reported it) its 66 trails 70 too.
    assert validate(hook, 3, 66.)


def test_a_run_past_its_rung_goes_on_where_it_leads(tmp_path):
    """A slow starter that trailed at the rung is not stopped later while
    it leads at the epoch it has reached (the real-photo sweep stopped
    BoostLU's best learning rate at epoch 5, where it led every run, by
    its epoch-2 value): compared there with the runs that reached that
    epoch, and with none, it goes on."""
    storage, study = study_with(tmp_path, [(60., 'complete')])
    hook = hook_for(storage, study)
    assert not validate(hook, 2, 65.)
    study_with(tmp_path, [(70., 'running')])
    assert not validate(hook, 3, 71.)  # trails at epoch 2, leads at 3
    assert not validate(hook, 4, 72.)  # nobody else reached epoch 4
    # Another run reaches epoch 5 above it: now it trails there too.
    storage, study = study_with(tmp_path, [(75., 'running')])
    for epoch in (4, 5):
        study._storage.set_trial_intermediate_value(study.trials[-1]._trial_id,
                                                    epoch, 75.)
    assert validate(hook, 5, 72.)


def test_a_run_is_worth_its_best_epoch_so_far(tmp_path):
    """The search chooses a run by its best epoch: one that peaked early
    and declines is compared by its peak, not its current mAP."""
    storage, study = study_with(tmp_path, [(60., 'complete')])
    early_peak = hook_for(storage, study, min_trials=1)
    assert not validate(early_peak, 1, 70.)
    assert not validate(early_peak, 2, 50.)  # 70 so far: above 60
    below = hook_for(storage, study, min_trials=1)
    assert not validate(below, 1, 55.)
    assert validate(below, 2, 58.)


def test_the_first_rung_follows_the_methods_warmup():
    """The demo schedule's one-epoch learning-rate warm-up; EM + APL's
    five epochs before its labels change (the hook's own setting); none
    without either."""
    an = Config.fromfile('configs/demo/an.py')
    assert steady_epoch(an) == 1
    assert steady_epoch(Config.fromfile('configs/demo/em_apl.py')) == 5
    an.merge_from_dict({'custom_hooks': [dict(type='APLHook')]})
    assert steady_epoch(an) == 5  # the class default: 5
    an.param_scheduler = [dict(type='CosineAnnealingLR', by_epoch=True)]
    an.custom_hooks = []
    assert steady_epoch(an) == 0


def test_arguments_and_missing_metric(tmp_path):
    with pytest.raises(ValueError, match='trial_id must be an integer >= 0'):
        OptunaPruningHook(storage='s.journal', study_name='s', trial_id=-1)
    with pytest.raises(
            ValueError,
            match=r'prune.reduction_factor must be an integer in \[2, 1000\]'):
        build_pruner(dict(type='same_schedule_halving', reduction_factor=1), 1)
    with pytest.raises(ValueError, match='first_rung must be an integer >= 1'):
        OptunaPruningHook(
            storage='s.journal', study_name='s', trial_id=0, first_rung=0)
    for eta, least, option in ((1, 2, '--prune-eta'), (3, 0,
                                                       '--prune-min-trials')):
        with pytest.raises(ValueError, match=f'{option} must be an integer'):
            pruning(
                argparse.Namespace(
                    no_prune=False,
                    pruner='same_schedule_halving',
                    prune_eta=eta,
                    prune_min_trials=least))
    hook = OptunaPruningHook(
        storage=str(tmp_path / 's.journal'), study_name='s', trial_id=0)
    runner = types.SimpleNamespace(
        epoch=1,
        max_epochs=2,
        train_loop=types.SimpleNamespace(stop_training=False))
    with pytest.raises(KeyError, match=r"lack 'multi-label/mAP'.*\['acc'\]"):
        hook.after_val_epoch(runner, {'acc': 1.0})
    # Outside a training loop (a test run) the hook does nothing.
    hook.after_val_epoch(types.SimpleNamespace(train_loop=None), {})


def test_the_pruner_is_an_optuna_pruner(tmp_path):
    """Optuna's own loop, given the pruner, prunes a trailing trial of the
    same schedule and lets one of another schedule go on."""
    pruner = build_pruner({'type': 'same_schedule_halving'}, 2)
    assert isinstance(pruner, SameScheduleSuccessiveHalvingPruner)
    assert isinstance(pruner, optuna.pruners.BasePruner)
    _, study = study_with(tmp_path, [(60., 'complete'), (70., 'complete')])
    study.pruner = pruner
    for epochs, pruned in ((10, True), (20, False)):
        trial = study.ask()
        trial.set_user_attr('point', {EPOCHS_KEY: epochs})
        trial.set_user_attr('seed', 0)
        trial.report(10., 2)
        assert trial.should_prune() is pruned
