"""The config keys that a sweep's point sets on every run: the learning
rate and the number of epochs (a point is a dict of ``--cfg-options``
overrides). Spelled here only: the search rules, the records and the
pruner of the tuning runs read them from this module."""

__all__ = ['LR_KEY', 'EPOCHS_KEY']

#: The override of the learning rate.
LR_KEY = 'optim_wrapper.optimizer.lr'
#: The override of the number of epochs.
EPOCHS_KEY = 'train_cfg.max_epochs'
