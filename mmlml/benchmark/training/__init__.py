"""The sweep's part that runs inside a training run: the pruning hook
(registered by ``import mmlml``), the pruning component and its
pruner, the storage, the config keys the pruner reads and the record
of a trial that the hook and the trainer write."""
