"""OptunaPruningHook on a journal storage: a trial trailing the median of
the finished trials of its schedule and seed is pruned (its training
stops, the epoch is recorded), not before the warm-up, nor against trials
of another schedule; its arguments and a missing validation metric. The
pruner is an Optuna pruner of its own."""
import types

import optuna
import pytest

from mmlml.benchmark.config_keys import EPOCHS_KEY
from mmlml.benchmark.optuna_pruning_hook import OptunaPruningHook
from mmlml.benchmark.optuna_storage import open_storage
from mmlml.benchmark.same_schedule_median_pruner import \
    SameScheduleMedianPruner

MAP = 'multi-label/mAP'


def study_with(tmp_path, finished):
    """A study in a journal file whose finished trials (``(epochs, seed,
    mAP at every epoch)``) reported their mAP at epochs 1 to ``epochs``;
    the storage's path and the study."""
    storage = str(tmp_path / 'sweep.journal')
    study = optuna.create_study(
        study_name='sweep',
        storage=open_storage(storage),
        direction='maximize')
    for epochs, seed, value in finished:
        trial = study.ask()
        trial.set_user_attr('point', {EPOCHS_KEY: epochs})
        trial.set_user_attr('seed', seed)
        for epoch in range(1, epochs + 1):
            trial.report(value, epoch)
        study.tell(trial, value)
    return storage, study


def running_trial(study, epochs, seed=0):
    trial = study.ask()
    trial.set_user_attr('point', {EPOCHS_KEY: epochs})
    trial.set_user_attr('seed', seed)
    return trial._trial_id


def validate(hook, epoch, max_epochs, value):
    """Run the hook after the validation of ``epoch``; whether the
    training was told to stop."""
    runner = types.SimpleNamespace(
        epoch=epoch,
        max_epochs=max_epochs,
        train_loop=types.SimpleNamespace(stop_training=False),
        logger=types.SimpleNamespace(info=lambda message: None))
    hook.after_val_epoch(runner, {MAP: value})
    return runner.train_loop.stop_training


def test_a_trailing_trial_is_pruned_after_the_warmup(tmp_path):
    storage, study = study_with(tmp_path, [(4, 0, 60.0), (4, 0, 70.0)])
    trial_id = running_trial(study, 4)
    hook = OptunaPruningHook(
        storage=storage, study_name='sweep', trial_id=trial_id, warmup=0.5)
    assert not validate(hook, 1, 4, 10.0)  # epoch 1 < 0.5 * 4: warm-up
    assert validate(hook, 2, 4, 10.0)
    (trial, ) = [t for t in study.trials if t._trial_id == trial_id]
    assert trial.user_attrs['pruned at epoch'] == 2
    assert trial.intermediate_values == {1: 10.0, 2: 10.0}


def test_only_trials_of_the_same_schedule_and_seed_count(tmp_path):
    storage, study = study_with(tmp_path, [(8, 0, 60.0), (8, 0, 70.0),
                                           (4, 1, 60.0), (4, 1, 70.0)])
    trial_id = running_trial(study, 4, seed=0)
    hook = OptunaPruningHook(
        storage=storage, study_name='sweep', trial_id=trial_id)
    for epoch in (1, 2, 3):
        assert not validate(hook, epoch, 4, 10.0)
    # Above the median of its comparable trials: goes on; the last epoch
    # is never pruned.
    storage, study = study_with(tmp_path / 'other', [(4, 0, 60.0),
                                                     (4, 0, 70.0)])
    hook = OptunaPruningHook(
        storage=storage, study_name='sweep', trial_id=running_trial(study, 4))
    assert not validate(hook, 2, 4, 66.0)
    assert not validate(hook, 4, 4, 10.0)


def test_arguments_and_missing_metric(tmp_path):
    with pytest.raises(ValueError, match='trial_id must be an integer >= 0'):
        OptunaPruningHook(storage='s.journal', study_name='s', trial_id=-1)
    with pytest.raises(ValueError, match='n_startup_trials >= 1'):
        SameScheduleMedianPruner(n_startup_trials=0)
    with pytest.raises(ValueError, match='0 <= warmup < 1'):
        SameScheduleMedianPruner(warmup=1.0)
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
    pruner = SameScheduleMedianPruner(n_startup_trials=2, warmup=0.5)
    assert isinstance(pruner, optuna.pruners.BasePruner)
    _, study = study_with(tmp_path, [(4, 0, 60.0), (4, 0, 70.0)])
    study.pruner = pruner
    for epochs, pruned in ((4, True), (8, False)):
        trial = optuna.trial.Trial(study, running_trial(study, epochs))
        trial.report(10.0, 2)
        assert trial.should_prune() is pruned
