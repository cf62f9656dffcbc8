"""Stop a benchmark trial early when its validation mAP trails the
trials it can fairly be compared with (Optuna's median pruning rule, on
the runs of the same schedule).

The benchmark sweep (:mod:`mmlml.benchmark`) adds this hook to the tuning
runs it starts; a config never needs it. Optuna is imported when the hook
first reports, so ``import mmlml`` does not need it.
"""
import math
from typing import TYPE_CHECKING, Optional

from mmengine.dist import broadcast_object_list, is_main_process
from mmengine.hooks import Hook

from mmlml.registry import HOOKS
from mmlml.utils.hyperparameters import (REQUIRED, Integer, Real, Text,
                                         check_settings)

if TYPE_CHECKING:
    import optuna

__all__ = ['OptunaPruningHook', 'SameScheduleMedianPruner']

#: The trial's user attributes that the rule reads: its point (a dict of
#: config overrides, with ``train_cfg.max_epochs``) and its seed.
_EPOCHS_KEY = 'train_cfg.max_epochs'


def SameScheduleMedianPruner(n_startup_trials: int = 2, warmup: float = 0.3):
    r"""Optuna's median rule restricted to comparable trials.

    A running trial is pruned at epoch :math:`e` when its validation mAP is
    below the median of the finished (complete) trials of its study **that
    trained the same number of epochs with the same seed** at epoch
    :math:`e`. Optuna's ``MedianPruner`` compares with every trial: a run
    with twice the epochs follows a slower learning-rate schedule and
    would be pruned for it. (The sweep gives the pruning hook to its
    tuning runs only: a seed run is never pruned.)

    Args:
        n_startup_trials: How many comparable finished trials a decision
            needs (fewer: the trial goes on).
        warmup: No pruning before this share of the trial's epochs.

    Returns:
        optuna.pruners.BasePruner: the pruner (a class built on first use,
        so that Optuna is imported only then).
    """
    if n_startup_trials < 1 or not 0 <= warmup < 1:
        raise ValueError('SameScheduleMedianPruner needs n_startup_trials '
                         f'>= 1 and 0 <= warmup < 1; got {n_startup_trials}, '
                         f'{warmup}.')
    import numpy as np
    import optuna

    class _Pruner(optuna.pruners.BasePruner):

        def prune(self, study, trial) -> bool:
            step = trial.last_step
            if step is None:
                return False
            point = trial.user_attrs.get('point', {})
            epochs = point.get(_EPOCHS_KEY)
            seed = trial.user_attrs.get('seed')
            if epochs is None or step < math.ceil(warmup * epochs):
                return False
            values = [
                other.intermediate_values[step] for other in study.get_trials(
                    deepcopy=False,
                    states=(optuna.trial.TrialState.COMPLETE, ))
                if other.user_attrs.get('seed') == seed and
                other.user_attrs.get('point', {}).get(_EPOCHS_KEY) == epochs
                and step in other.intermediate_values
            ]
            if len(values) < n_startup_trials:
                return False
            return trial.intermediate_values[step] < float(np.median(values))

    return _Pruner()


@HOOKS.register_module()
class OptunaPruningHook(Hook):
    """Report each epoch's validation mAP to an Optuna trial and end the
    training when :func:`SameScheduleMedianPruner` prunes it.

    The trial keeps the epoch it was pruned at in its user attribute
    ``'pruned at epoch'``; the sweep then records it as pruned. Only the
    main process talks to the storage; the decision reaches every rank.

    Args:
        storage (str): The Optuna storage (an RDB URL, or the path of a
            journal file) of the sweep.
        study_name (str): The trial's study.
        trial_id (int): The trial (its storage id).
        monitor (str): The validation metric. Defaults to
            ``'multi-label/mAP'``.
        n_startup_trials (int): See :func:`SameScheduleMedianPruner`.
        warmup (float): See :func:`SameScheduleMedianPruner`.
    """

    priority = 'LOW'
    hyperparameters = dict(
        study_name=Text(),
        trial_id=Integer(low=0),
        monitor=Text('multi-label/mAP'),
        n_startup_trials=Integer(2, low=1),
        warmup=Real(0.3, low=0, high=1, high_open=True))

    def __init__(self,
                 *,
                 storage: str,
                 study_name: str = REQUIRED,
                 trial_id: int = REQUIRED,
                 monitor: str = 'multi-label/mAP',
                 n_startup_trials: int = 2,
                 warmup: float = 0.3):
        self.storage = storage
        self.study_name = study_name
        self.trial_id = trial_id
        self.monitor = monitor
        self.n_startup_trials = n_startup_trials
        self.warmup = warmup
        check_settings(self)
        self._trial: Optional['optuna.trial.Trial'] = None

    def _open(self) -> 'optuna.trial.Trial':
        if self._trial is None:
            import optuna

            from mmlml.utils.optuna_storage import open_storage
            study = optuna.load_study(
                study_name=self.study_name,
                storage=open_storage(self.storage),
                pruner=SameScheduleMedianPruner(self.n_startup_trials,
                                                self.warmup))
            self._trial = optuna.trial.Trial(study, self.trial_id)
        return self._trial

    def after_val_epoch(self, runner, metrics=None) -> None:
        if runner.train_loop is None or not hasattr(runner.train_loop,
                                                    'stop_training'):
            return
        prune = [False]
        if is_main_process():
            if not metrics or self.monitor not in metrics:
                raise KeyError(
                    f'OptunaPruningHook: the validation metrics lack '
                    f'{self.monitor!r} (got {sorted(metrics or {})}); set '
                    '`monitor` to one of them.')
            trial = self._open()
            trial.report(float(metrics[self.monitor]), runner.epoch)
            if runner.epoch < runner.max_epochs and trial.should_prune():
                trial.set_user_attr('pruned at epoch', runner.epoch)
                prune = [True]
        broadcast_object_list(prune)
        if prune[0]:
            runner.logger.info(
                f'OptunaPruningHook: trial {self.trial_id} pruned at epoch '
                f'{runner.epoch} (its validation mAP trails the median of '
                'comparable trials).')
            runner.train_loop.stop_training = True
