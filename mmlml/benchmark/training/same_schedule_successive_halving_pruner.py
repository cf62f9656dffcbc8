"""The pruning rule of the benchmark sweep's tuning runs: successive
halving on the epochs a run has trained, restricted to the trials of the
same schedule and seed (:class:`SameScheduleSuccessiveHalvingPruner`).
The runs report to it through
:class:`~.optuna_pruning_hook.OptunaPruningHook`."""
from typing import Optional

import optuna

from mmlml.benchmark.training.config_keys import EPOCHS_KEY

__all__ = ['SameScheduleSuccessiveHalvingPruner', 'best_until', 'rungs']

#: The trials whose values a decision compares with: a failed trial (a
#: lost worker) is run again as a new trial and does not count twice.
_COMPARED = (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED,
             optuna.trial.TrialState.RUNNING)


def _schedule(trial: optuna.trial.FrozenTrial) -> tuple:
    """What trials must share to be compared: epochs and seed."""
    return (trial.user_attrs.get('point', {}).get(EPOCHS_KEY),
            trial.user_attrs.get('seed'))


def rungs(first_rung: int, reduction_factor: int, epochs: int) -> list:
    """The epochs at which a run of ``epochs`` epochs is compared:
    ``first_rung * reduction_factor ** k`` below ``epochs`` (the last
    epoch is never a rung: a run that reached it has cost its all)."""
    found, rung = [], first_rung
    while rung < epochs:
        found.append(rung)
        rung *= reduction_factor
    return found


def best_until(trial: optuna.trial.FrozenTrial, epoch: int) -> float:
    """The best validation mAP the trial reported up to ``epoch``: what
    the search would choose it by (its best epoch), were it stopped
    there."""
    return max(value for step, value in trial.intermediate_values.items()
               if step <= epoch)


class SameScheduleSuccessiveHalvingPruner(optuna.pruners.BasePruner):
    r"""Successive halving (asynchronous, as ASHA) among comparable trials.

    A run of :math:`E` epochs is compared at its *rungs*, the epochs

    .. math:: r_k = r_0 \eta^k < E, \qquad k = 0, 1, \ldots

    with :math:`r_0` the first epoch after the method's warm-up (the
    sweep's worker reads it from the run's config,
    :func:`~.method_warmup.steady_epoch`, and passes :math:`r_0 = W + 1`)
    and :math:`\eta` the reduction factor. After each epoch
    :math:`e \ge r_0`, let :math:`r` be the last rung :math:`\le e`, a
    trial's value at :math:`r` its best validation mAP up to epoch
    :math:`r` (:func:`best_until`: the search chooses a run by its best
    epoch, so a run that peaked early and declines is worth its peak;
    its current mAP stopped the learning rates that won on the real-photo
    domain), and :math:`V` the values at :math:`r` of the other trials of
    the study **that train the same number of epochs with the same seed**
    and reached :math:`r` (finished, pruned or still running). When
    :math:`|V| \ge` ``min_trials``, the trial goes on only if it is among
    the top

    .. math:: k = \max\left(1, \left\lfloor \frac{|V| + 1}{\eta}
              \right\rfloor\right)

    of the :math:`|V| + 1` runs at :math:`r`, i.e. if fewer than
    :math:`k` of :math:`V` are strictly above its own value (ties go on).
    With fewer comparable runs it goes on: the first runs of a schedule
    are never pruned for lack of company. As Optuna cannot pause a trial
    until enough others reach its rung, a trial that went on past a rung
    is compared at that rung again after each later epoch :math:`e`, and
    stops only if it also trails at :math:`e`: by the same rule, among
    the values up to :math:`e` of the others that reached :math:`e` (with
    none, it goes on). A run that led the first two of a schedule stops
    once later ones overtake it at the rung and where it is; a slow
    starter that trailed at the rung but leads where it has got to goes
    on (on the real-photo domain, BoostLU's lowest learning rate trailed
    by 0.3 mAP at epoch 2, led every run by 6.7 at epoch 5 and was stopped
    there, where its unpruned replay chose it).

    Why successive halving and not Hyperband: the sweep's coordinate
    search queues a handful of runs per schedule (the learning rates, then
    one edge extension or the key hyperparameter's values), too few to
    fill Hyperband's several brackets; one bracket whose first rung is the
    first epoch the method trains as itself is what halving can do with
    them. Optuna's ``SuccessiveHalvingPruner`` compares every trial of the
    study: a run with twice the epochs follows a slower learning-rate
    schedule and would be stopped for it, and seeds differ by their noise.
    (Who may be pruned is :func:`~.pruning.may_prune`'s: a seed run and
    the ``full`` setting's tuning never are.)

    A trial's number of epochs is the :data:`~.config_keys.EPOCHS_KEY` of
    its user attribute ``'point'`` (its config overrides), its seed the
    user attribute ``'seed'``; a trial without them is never pruned.

    Build it from a spec (:func:`~.pruning.build_pruner`, type
    ``same_schedule_halving``): its parameters' defaults and bounds are
    declared once, in :data:`~.pruning.PRUNERS`, and checked there.

    Args:
        first_rung: :math:`r_0`, the first epoch compared (1-based).
        reduction_factor: :math:`\eta`: one run in :math:`\eta` goes on at
            each rung.
        min_trials: How many other comparable runs must have reached a
            rung before a trial is stopped there.
    """

    def __init__(self, first_rung: int, reduction_factor: int,
                 min_trials: int):
        self.first_rung = first_rung
        self.reduction_factor = reduction_factor
        self.min_trials = min_trials

    def rung(self, trial: optuna.trial.FrozenTrial) -> Optional[int]:
        """The last rung the trial reached and reported, or None."""
        step = trial.last_step
        epochs = trial.user_attrs.get('point', {}).get(EPOCHS_KEY)
        if step is None or epochs is None:
            return None
        reached = [
            r for r in rungs(self.first_rung, self.reduction_factor, epochs)
            if r <= step and r in trial.intermediate_values
        ]
        return reached[-1] if reached else None

    def prune(self, study: optuna.Study,
              trial: optuna.trial.FrozenTrial) -> bool:
        rung = self.rung(trial)
        if rung is None:
            return False
        schedule = _schedule(trial)
        compared = [
            other
            for other in study.get_trials(deepcopy=False, states=_COMPARED)
            if other.number != trial.number and _schedule(other) == schedule
        ]
        if not self._trails(trial, compared, rung, self.min_trials):
            return False
        # Past its rung: stopped only if it trails where it has got to too.
        step = trial.last_step or rung  # not None: it reached a rung
        return step == rung or self._trails(trial, compared, step, 1)

    def _trails(self, trial: optuna.trial.FrozenTrial, compared: list,
                epoch: int, least: int) -> bool:
        """Whether, among the ``compared`` trials that reached ``epoch``
        (at least ``least`` of them), the trial is not in the top
        :math:`k` by the best value up to ``epoch``."""
        others = [
            best_until(other, epoch) for other in compared
            if epoch in other.intermediate_values
        ]
        if len(others) < least:
            return False
        keep = max(1, (len(others) + 1) // self.reduction_factor)
        value = best_until(trial, epoch)
        return sum(other > value for other in others) >= keep
