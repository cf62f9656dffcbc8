"""The pruning rule of the benchmark sweep's tuning runs: Optuna's median
rule, restricted to the trials of the same schedule and seed
(:class:`SameScheduleMedianPruner`). The runs report to it through
:class:`~.optuna_pruning_hook.OptunaPruningHook`."""
import math

import numpy as np
import optuna

from .config_keys import EPOCHS_KEY

__all__ = ['SameScheduleMedianPruner']


class SameScheduleMedianPruner(optuna.pruners.BasePruner):
    r"""Optuna's median rule restricted to comparable trials.

    A running trial is pruned at epoch :math:`e` when its validation mAP is
    below the median of the finished (complete) trials of its study **that
    trained the same number of epochs with the same seed** at epoch
    :math:`e`. Optuna's ``MedianPruner`` compares with every trial: a run
    with twice the epochs follows a slower learning-rate schedule and
    would be pruned for it. (The sweep gives the pruning hook to its
    tuning runs only: a seed run is never pruned.)

    A trial's number of epochs is the :data:`~.config_keys.EPOCHS_KEY` of
    its user attribute ``'point'`` (its config overrides), its seed the
    user attribute ``'seed'``; a trial without them is never pruned.

    Args:
        n_startup_trials: How many comparable finished trials a decision
            needs (fewer: the trial goes on).
        warmup: No pruning before this share of the trial's epochs.
    """

    def __init__(self, n_startup_trials: int = 2, warmup: float = 0.3):
        if n_startup_trials < 1 or not 0 <= warmup < 1:
            raise ValueError(
                'SameScheduleMedianPruner needs n_startup_trials >= 1 and '
                f'0 <= warmup < 1; got {n_startup_trials}, {warmup}.')
        self.n_startup_trials = n_startup_trials
        self.warmup = warmup

    def prune(self, study: optuna.Study,
              trial: optuna.trial.FrozenTrial) -> bool:
        step = trial.last_step
        if step is None:
            return False
        epochs = trial.user_attrs.get('point', {}).get(EPOCHS_KEY)
        seed = trial.user_attrs.get('seed')
        if epochs is None or step < math.ceil(self.warmup * epochs):
            return False
        values = [
            other.intermediate_values[step] for other in study.get_trials(
                deepcopy=False, states=(optuna.trial.TrialState.COMPLETE, ))
            if other.user_attrs.get('seed') == seed
            and other.user_attrs.get('point', {}).get(EPOCHS_KEY) == epochs
            and step in other.intermediate_values
        ]
        if len(values) < self.n_startup_trials:
            return False
        return trial.intermediate_values[step] < float(np.median(values))
