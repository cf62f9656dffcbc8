"""Stop a benchmark trial early when its validation mAP trails the
trials it can fairly be compared with (successive halving among the
runs of the same schedule and seed:
:mod:`.same_schedule_successive_halving_pruner`).

The benchmark sweep (:mod:`mmlml.benchmark`) adds this hook to the tuning
runs it starts; a config never needs it. ``import mmlml`` registers it
(the sweep's runs name it by its type, ``OptunaPruningHook``) and imports
no other module of the sweep: the pruner and Optuna are imported when the
hook first reports, so ``import mmlml`` does not need Optuna.
"""
from typing import TYPE_CHECKING, Optional

from mmengine.dist import broadcast_object_list, is_main_process
from mmengine.hooks import Hook

from mmlml.registry import HOOKS
from mmlml.utils.hyperparameters import REQUIRED, Integer, Text, check_settings

if TYPE_CHECKING:
    import optuna

__all__ = ['OptunaPruningHook']


@HOOKS.register_module()
class OptunaPruningHook(Hook):
    """Report each epoch's validation mAP to an Optuna trial and end the
    training when :class:`~.same_schedule_successive_halving_pruner.
    SameScheduleSuccessiveHalvingPruner` prunes it.

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
        first_rung (int): The first epoch compared: the epoch after the
            method's warm-up (:func:`~.method_warmup.steady_epoch` + 1).
            Defaults to 1.
        reduction_factor (int): One run in this many goes on at each rung.
            Defaults to 3.
        min_trials (int): How many other comparable runs a decision
            needs. Defaults to 2. (See
            ``SameScheduleSuccessiveHalvingPruner`` for all three.)
    """

    priority = 'LOW'
    hyperparameters = dict(
        study_name=Text(),
        trial_id=Integer(low=0),
        monitor=Text('multi-label/mAP'),
        first_rung=Integer(1, low=1),
        reduction_factor=Integer(3, low=2),
        min_trials=Integer(2, low=1))

    def __init__(self,
                 *,
                 storage: str,
                 study_name: str = REQUIRED,
                 trial_id: int = REQUIRED,
                 monitor: str = 'multi-label/mAP',
                 first_rung: int = 1,
                 reduction_factor: int = 3,
                 min_trials: int = 2):
        self.storage = storage
        self.study_name = study_name
        self.trial_id = trial_id
        self.monitor = monitor
        self.first_rung = first_rung
        self.reduction_factor = reduction_factor
        self.min_trials = min_trials
        check_settings(self)
        self._trial: Optional['optuna.trial.Trial'] = None

    def _open(self) -> 'optuna.trial.Trial':
        if self._trial is None:
            import optuna

            from .optuna_storage import open_storage
            from .same_schedule_successive_halving_pruner import \
                SameScheduleSuccessiveHalvingPruner
            study = optuna.load_study(
                study_name=self.study_name,
                storage=open_storage(self.storage),
                pruner=SameScheduleSuccessiveHalvingPruner(
                    self.first_rung, self.reduction_factor, self.min_trials))
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
                f'{runner.epoch} (its validation mAP at its last rung is not '
                f'in the top 1/{self.reduction_factor} of the comparable '
                'trials there).')
            runner.train_loop.stop_training = True
