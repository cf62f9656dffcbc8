"""Base of the hooks that update the label store from each epoch's scores."""
from mmlml.utils.hyperparameters import REQUIRED, Integer, Rule, check_settings
from .label_store_hook import LabelStoreHook

__all__ = ['EpochScoresHook', 'WARMUP_EPOCHS', 'WARMUP_BEFORE_END']

#: The (1-based) epoch after which a hook starts updating the store; each
#: hook declares it with its own default (``WARMUP_EPOCHS.with_default``).
WARMUP_EPOCHS = Integer(REQUIRED, low=1)

#: A warm-up must leave an epoch that uses the hook's updates.
WARMUP_BEFORE_END = Rule(
    lambda warmup_epochs, max_epochs: warmup_epochs < max_epochs,
    '{owner}: warmup_epochs={warmup_epochs} leaves no epoch {purpose} in '
    '{max_epochs} epochs: set warmup_epochs below train_cfg.max_epochs '
    '(tools/train.py --smoke scales it to a short run).')


class EpochScoresHook(LabelStoreHook):
    """A :class:`LabelStoreHook` that updates the store after the epochs
    :meth:`scores_used_after` selects, from the probabilities the model gave
    every training entry during that epoch.

    The scores are forgotten when an epoch starts and recorded from each
    training forward pass (:meth:`last_loss_inputs`), which costs no pass
    over the data; with ``extra_pass = True`` a separate pass over the
    training dataloader at the end of the epoch scores the set with the
    epoch's final weights instead (:meth:`score_training_set`). Then
    :meth:`use_epoch_scores` updates the store.
    """

    #: Score the training set in a separate pass after the epoch.
    extra_pass = False
    #: What the epochs after the warm-up do (in the error of
    #: :data:`WARMUP_BEFORE_END`, for a hook with that rule).
    warmup_purpose = 'to update the labels'

    def before_train(self, runner) -> None:
        """Attach the store (see :class:`LabelStoreHook`) and check the
        rules that read the run's number of epochs.

        Args:
            runner (Runner): The runner of the training process.
        """
        super().before_train(runner)
        check_settings(
            self, max_epochs=runner.max_epochs, purpose=self.warmup_purpose)

    def scores_used_after(self, runner) -> bool:
        """Whether the store is updated after the current epoch."""
        return True

    def use_epoch_scores(self, runner) -> None:
        """Update the store from the epoch's recorded scores."""
        raise NotImplementedError

    def before_train_epoch(self, runner) -> None:
        """Forget the last epoch's scores."""
        self.store.reset_scores()

    def after_train_iter(self,
                         runner,
                         batch_idx: int,
                         data_batch=None,
                         outputs=None) -> None:
        """Record the training pass's probabilities of the batch (the
        arguments are :meth:`mmengine.hooks.Hook.after_train_iter`'s)."""
        inputs = self.last_loss_inputs()
        if self.extra_pass or not self.scores_used_after(runner):
            return
        self.store.record_scores(inputs.indices, inputs.cls_score.sigmoid())

    def after_train_epoch(self, runner) -> None:
        """Score the set if the hook makes an extra pass, then update the
        store (after the selected epochs)."""
        if not self.scores_used_after(runner):
            return
        if self.extra_pass:
            self.score_training_set(runner)
        self.use_epoch_scores(runner)
