"""Stop a benchmark trial early when its sweep's pruner says so (by
default successive halving among the runs of the same schedule and seed,
:mod:`.same_schedule_successive_halving_pruner`; the pruner is built from
the sweep's spec, :mod:`.pruning`).

The benchmark sweep (:mod:`mmlml.benchmark`) adds this hook to the tuning
runs it starts; a config never needs it. ``import mmlml`` registers it
(the sweep's runs name it by its type, ``OptunaPruningHook``) and imports
no other module of the sweep: the spec's check, the pruner and Optuna are
imported when the hook is built or first reports, so ``import mmlml`` does
not need Optuna.
"""
from typing import TYPE_CHECKING, Optional

from mmengine.dist import broadcast_object_list, is_main_process
from mmengine.hooks import Hook

from mmlml.registry import HOOKS
from mmlml.utils.hyperparameters import (REQUIRED, Hyperparameter, Integer,
                                         Text, check_settings)

if TYPE_CHECKING:
    import optuna

__all__ = ['OptunaPruningHook']


class _PrunerSpec(Hyperparameter):
    """A pruner spec, checked by :func:`~.pruning.check_spec` (imported
    when a hook is built, not by ``import mmlml``)."""

    def check(self, name: str, value):
        from mmlml.benchmark.training.pruning import check_spec
        return check_spec(value, name)


@HOOKS.register_module()
class OptunaPruningHook(Hook):
    """Report each epoch's validation mAP to an Optuna trial and end the
    training when the sweep's pruner (:func:`~.pruning.build_pruner` of
    ``pruner``) prunes it.

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
        pruner (dict): The pruner's spec, ``{'type': KIND, PARAMETER:
            value, ...}`` of :data:`~.pruning.PRUNERS` (its parameters'
            defaults where it gives none). Defaults to None: the
            sweep's successive halving with its defaults.
    """

    priority = 'LOW'
    hyperparameters = dict(
        study_name=Text(),
        trial_id=Integer(low=0),
        monitor=Text('multi-label/mAP'),
        first_rung=Integer(1, low=1),
        pruner=_PrunerSpec(None, optional=True))

    def __init__(self,
                 *,
                 storage: str,
                 study_name: str = REQUIRED,
                 trial_id: int = REQUIRED,
                 monitor: str = 'multi-label/mAP',
                 first_rung: int = 1,
                 pruner: Optional[dict] = None):
        self.storage = storage
        self.study_name = study_name
        self.trial_id = trial_id
        self.monitor = monitor
        self.first_rung = first_rung
        self.pruner = pruner
        check_settings(self)
        self._trial: Optional['optuna.trial.Trial'] = None

    def _open(self) -> 'optuna.trial.Trial':
        if self._trial is None:
            import optuna

            from mmlml.benchmark.training.optuna_storage import open_storage
            from mmlml.benchmark.training.pruning import build_pruner
            study = optuna.load_study(
                study_name=self.study_name,
                storage=open_storage(self.storage),
                pruner=build_pruner(self.pruner or {}, self.first_rung))
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
                from mmlml.benchmark.training.trial_record import PRUNED_AT
                trial.set_user_attr(PRUNED_AT, runner.epoch)
                prune = [True]
        broadcast_object_list(prune)
        if prune[0]:
            runner.logger.info(
                f'OptunaPruningHook: trial {self.trial_id} pruned at epoch '
                f"{runner.epoch} by the sweep's pruner.")
            runner.train_loop.stop_training = True
