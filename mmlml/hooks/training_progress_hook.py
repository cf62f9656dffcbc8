"""Epochs as passes over the training data, in any training loop."""
import math

from mmengine.dist import get_world_size
from mmengine.hooks import Hook
from mmengine.logging import print_log
from mmengine.runner import EpochBasedTrainLoop

from mmlml.registry import HOOKS
from mmlml.utils.progress import ITERS_PER_EPOCH


@HOOKS.register_module()
class TrainingProgressHook(Hook):
    """Let the epoch-dependent losses follow an iteration-based loop.

    SPLC starts correcting, Large Loss rejects a growing fraction, and GR
    moves its schedules at epoch boundaries. They read the epoch from
    MMEngine's ``MessageHub``, where an ``IterBasedTrainLoop`` reports
    epoch 0 of 1 for the whole run, so without this hook they refuse to
    train (see :func:`~mmlml.utils.progress.epoch_progress`). This hook
    publishes ``iters_per_epoch``, the iterations of one pass over the
    training data in each process, and the losses then count

    .. math::

        \\text{epoch} = \\lfloor \\text{iter} / I \\rfloor, \\qquad
        \\text{max\\_epochs} = \\lceil \\text{max\\_iters} / I \\rceil,

    with :math:`I = \\lceil |D| / (B \\cdot W) \\rceil` for a dataset of
    :math:`|D|` samples, :math:`B` samples per batch and process and
    :math:`W` processes (the ``InfiniteSampler`` of an iteration-based
    loop deals the data out to the processes in turn). In an epoch-based
    loop the hook publishes ``None``: the losses keep the Runner's own
    epochs (which stay right after a mid-epoch resume, where MMEngine
    replays the interrupted epoch from its start), and the hook only makes
    a one-epoch run acceptable (a smoke test), which they otherwise refuse.

    Nothing is saved in checkpoints: the count follows the restored
    iteration after a resume, and a changed batch size takes effect.

    ``tools/train.py --training-progress`` adds it to any config (keeping
    the config's other custom hooks), e.g. for a one-epoch smoke run of a
    paper config: ``--training-progress --cfg-options
    train_cfg.max_epochs=1``.

    Example:
        >>> train_cfg = dict(by_epoch=False, max_iters=20000,
        ...                  val_interval=2000)
        >>> custom_hooks = [dict(type='TrainingProgressHook')]
    """

    priority = 'VERY_HIGH'

    def before_train(self, runner) -> None:
        """Publish the iterations of one pass over the training data
        (``None`` in an epoch-based loop).

        Args:
            runner (Runner): The runner of the training process.
        """
        loader = runner.train_dataloader
        if isinstance(runner.train_loop, EpochBasedTrainLoop):
            runner.message_hub.update_info(
                ITERS_PER_EPOCH, None, resumed=False)
            return
        if loader.batch_size is None:
            raise TypeError(
                'TrainingProgressHook needs the batch size of the training '
                'dataloader (got a custom batch_sampler): an iteration-based '
                'loop cannot count passes over the data without it')
        iters_per_epoch = math.ceil(
            len(loader.dataset) / (loader.batch_size * get_world_size()))
        if iters_per_epoch < 1:
            raise ValueError(
                'TrainingProgressHook: the training dataset is empty')
        runner.message_hub.update_info(
            ITERS_PER_EPOCH, iters_per_epoch, resumed=False)
        print_log(
            f'TrainingProgressHook: one epoch = {iters_per_epoch} '
            f'iterations, {runner.max_iters} iterations = '
            f'{math.ceil(runner.max_iters / iters_per_epoch)} epochs for '
            'the epoch-dependent losses',
            logger='current')

    def after_train(self, runner) -> None:
        """Remove the count: nothing reads it once training ends."""
        runner.message_hub.runtime_info.pop(ITERS_PER_EPOCH, None)
