"""The training progress that epoch-dependent losses read (SPLC's start
epoch, GR Loss's schedules, Large Loss's rejection rate).

A loss reads the epoch inside its forward, which ``compile=True`` traces
into the training graph. MMEngine's ``MessageHub`` cannot be traced (it
takes a lock), and an epoch read as a Python number would be baked into the
graph and recompile it every epoch. So the forward reads it through
:func:`training_progress`, a custom operator: opaque to ``torch.compile``,
run at every call, returning the epoch and the number of epochs as a small
tensor, from which the loss computes its schedule with tensor arithmetic.
"""
from typing import Optional, Tuple

import torch
from mmengine.logging import MessageHub
from torch import Tensor

__all__ = [
    'ITERS_PER_EPOCH', 'epoch_progress', 'training_progress',
    'TrainingProgress'
]

#: The MessageHub key of :class:`~mmlml.hooks.TrainingProgressHook`: the
#: iterations of one pass over the training data (per process) in an
#: iteration-based loop, None in an epoch-based one.
ITERS_PER_EPOCH = 'iters_per_epoch'


def epoch_progress(owner: str) -> Tuple[int, int]:
    """The running training's 0-based epoch and number of epochs, from
    MMEngine's ``MessageHub``.

    An epoch-based Runner's ``RuntimeInfoHook`` publishes ``epoch`` and
    ``max_epochs``. An ``IterBasedTrainLoop`` publishes ``epoch=0`` and
    ``max_epochs=1`` for the whole run; with
    :class:`~mmlml.hooks.TrainingProgressHook`, which publishes the
    iterations of one pass over the data, an epoch is such a pass:
    ``epoch = iter // iters_per_epoch`` and ``max_epochs =
    ceil(max_iters / iters_per_epoch)``.

    Args:
        owner (str): Who asks, for the errors.

    Raises:
        RuntimeError: No training is running (no Runner, or one that has
            finished), or the run reports a single epoch, which an
            epoch-dependent method cannot use (an ``IterBasedTrainLoop``
            without ``TrainingProgressHook``, or a one-epoch run).
    """
    info = MessageHub.get_current_instance().runtime_info
    if info.get('loop_stage') != 'train' or 'epoch' not in info:
        state = ('the epoch of a run that is not training (finished, or '
                 'not started)' if 'epoch' in info else 'no epoch')
        raise RuntimeError(
            f'{owner} depends on the training epoch, but no training is '
            f'running (the MessageHub holds {state}): use it inside '
            "Runner.train(), whose RuntimeInfoHook publishes 'epoch' and "
            "'max_epochs', or call loss.set_epoch(epoch, max_epochs) first")
    iters_per_epoch = info.get(ITERS_PER_EPOCH)
    if iters_per_epoch is not None:
        return (int(info['iter']) // iters_per_epoch,
                -(-int(info['max_iters']) // iters_per_epoch))
    epoch, max_epochs = int(info['epoch']), int(info['max_epochs'])
    if max_epochs == 1 and ITERS_PER_EPOCH not in info:
        raise RuntimeError(
            f'{owner} depends on the training epoch, and this run reports a '
            'single epoch, so its epoch schedule would never move and it '
            'would run as another method. An iteration-based loop '
            '(IterBasedTrainLoop, train_cfg=dict(by_epoch=False, ...)) '
            'always reports one: add TrainingProgressHook '
            "(custom_hooks=[dict(type='TrainingProgressHook')], or "
            '`tools/train.py --training-progress`) to count an epoch as one '
            'pass over the training data. In an epoch-based run, train for '
            'more than one epoch (the same hook accepts a one-epoch run, '
            'e.g. for a smoke test).')
    return epoch, max_epochs


def check_more_epochs(owner: str, max_epochs: int, min_epochs: int) -> None:
    """Refuse a run of at most ``min_epochs`` epochs (e.g. GR Loss's
    ``linear_init``, the epochs its schedules wait)."""
    if max_epochs <= min_epochs:
        raise ValueError(
            f'{owner} waits {min_epochs} epoch(s) before its schedules move '
            f'(linear_init), but the run has {max_epochs}: lower '
            'linear_init or train longer')


@torch.library.custom_op('mmlml::training_progress', mutates_args=())
def training_progress(like: Tensor, owner: str, min_epochs: int) -> Tensor:
    """``(epoch, max_epochs)`` of the running training
    (:func:`epoch_progress`) as a tensor on ``like``'s device,
    refusing a run of at most ``min_epochs`` epochs. A custom operator:
    ``torch.compile`` calls it at every step instead of tracing it."""
    epoch, max_epochs = epoch_progress(owner)
    check_more_epochs(owner, max_epochs, min_epochs)
    return host_numbers_on(like, [epoch, max_epochs])


@training_progress.register_fake
def _training_progress_shape(like: Tensor, owner: str,
                             min_epochs: int) -> Tensor:
    return like.new_empty(2, dtype=progress_dtype(like))


def host_numbers_on(like: Tensor, numbers: list) -> Tensor:
    """``numbers`` as a tensor on ``like``'s device (dtype
    :func:`progress_dtype`) without waiting for the device: on CUDA a copy
    from pageable host memory synchronises the stream, one from pinned
    memory does not (PyTorch's pinned-memory cache keeps the buffer until
    the copy is done)."""
    if like.device.type != 'cuda' or torch.compiler.is_compiling():
        # (a compiled graph makes constants on the device itself)
        return torch.tensor(
            numbers, dtype=progress_dtype(like), device=like.device)
    values = torch.tensor(numbers, dtype=progress_dtype(like))
    return values.pin_memory().to(like.device, non_blocking=True)


def progress_dtype(like: Tensor) -> torch.dtype:
    """float64 for float64 logits (gradcheck), else float32: half-precision
    logits under autocast would round epochs above 256."""
    return torch.float64 if like.dtype == torch.float64 else torch.float32


class TrainingProgress:
    """Mixin for losses whose behaviour depends on the epoch.

    The epoch and the number of epochs are read from MMEngine's
    ``MessageHub`` (see :func:`epoch_progress`), so the loss works in a
    stock epoch-based config with no extra hook, and in an iteration-based
    one with :class:`~mmlml.hooks.TrainingProgressHook`. Outside a Runner
    call :meth:`set_epoch`.

    The forward reads :meth:`progress`, tensors that keep the compiled
    graph whole; :meth:`current_epoch` and :meth:`total_epochs` give the
    same as Python numbers, for hooks and inspection.
    """

    _epoch_override: Optional[int] = None
    _max_epochs_override: Optional[int] = None

    @property
    def min_epochs(self) -> int:
        """The epochs a schedule waits: a run must have more (see
        :func:`check_more_epochs`)."""
        return 0

    def set_epoch(self,
                  epoch: Optional[int],
                  max_epochs: Optional[int] = None) -> None:
        """Fix the (0-based) epoch and total epochs; ``None`` goes back to
        reading the MessageHub."""
        if epoch is not None and epoch < 0:
            raise ValueError(f'epoch must be >= 0, got {epoch}')
        if max_epochs is not None and max_epochs < 1:
            raise ValueError(f'max_epochs must be >= 1, got {max_epochs}')
        if epoch is not None and max_epochs is not None and (epoch
                                                             >= max_epochs):
            raise ValueError(
                f'epoch {epoch} is past the training of max_epochs='
                f'{max_epochs} (epochs are 0-based: the last is '
                f'{max_epochs - 1}); the schedules would stay at their end')
        self._epoch_override = epoch
        self._max_epochs_override = max_epochs

    def fixed_max_epochs(self) -> Optional[int]:
        """The number of epochs given to the loss (:meth:`set_epoch`), or
        None: the Runner's. A subclass may add its own setting."""
        return self._max_epochs_override

    def current_epoch(self) -> int:
        """The 0-based training epoch."""
        if self._epoch_override is not None:
            return self._epoch_override
        return epoch_progress(type(self).__name__)[0]

    def total_epochs(self) -> int:
        """The number of training epochs (``max_epochs``)."""
        fixed = self.fixed_max_epochs()
        if fixed is None:
            if self._epoch_override is not None:
                raise RuntimeError(
                    f'{type(self).__name__} needs the number of training '
                    'epochs: pass max_epochs to set_epoch() with the epoch')
            fixed = epoch_progress(type(self).__name__)[1]
        check_more_epochs(type(self).__name__, fixed, self.min_epochs)
        return fixed

    def progress(self,
                 like: Tensor,
                 need_total: bool = False) -> Tuple[Tensor, Tensor]:
        """The 0-based epoch and the number of epochs as 0-dim tensors on
        ``like``'s device (see :func:`progress_dtype`), for the forward: from
        :meth:`set_epoch` (numbers the compiled graph may hold), else from
        the running training (:func:`training_progress`). A loss that
        reads only the epoch may be given no number of epochs (then 0)."""
        owner = type(self).__name__
        fixed = self.fixed_max_epochs()
        if self._epoch_override is not None:
            total = self.total_epochs() if (need_total
                                            or fixed is not None) else 0
            values = host_numbers_on(like, [self._epoch_override, total])
        elif fixed is None:
            values = training_progress(like.detach(), owner, self.min_epochs)
        else:
            # The loss's own number of epochs, not the Runner's, is checked.
            check_more_epochs(owner, fixed, self.min_epochs)
            epoch = training_progress(like.detach(), owner, 0)[0]
            values = torch.stack((epoch, epoch.new_tensor(fixed)))
        return values[0], values[1]
