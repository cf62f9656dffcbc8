"""MMPretrain's sigmoid losses and mmlml's training targets: which stock
losses cannot read an observed negative (-1), and the error that says which
mmlml loss to use instead.

MMPretrain's ``CrossEntropyLoss``, ``FocalLoss`` and ``AsymmetricLoss``
expect targets in ``[0, 1]`` (0/1 labels, or soft scores from Mixup, CutMix
or label smoothing). Fed the ``-1`` of mmlml's training encoding, their
value goes below zero (without bound for the first two, as the logit goes
to minus infinity) and the model trains silently wrong. The stock losses are
left as they are; mmlml checks where it knows the configuration: its heads
check the target of their first training loss, and ``tools/train.py`` (or
``TrainingSetupCheckHook``) checks the training set's labels before the
first iteration.
"""
from typing import Optional

import numpy as np
import torch
from mmpretrain.models import losses as stock

from .loss_sum import LossSum

__all__ = [
    'STOCK_SIGMOID_LOSSES', 'stock_loss_name', 'stock_loss_in_config',
    'check_stock_loss_target', 'stock_loss_error'
]

#: MMPretrain's losses that take sigmoid multi-label targets in [0, 1]:
#: class name -> (the mmlml loss that computes the same with -1 read as a
#: negative, what it computes).
STOCK_SIGMOID_LOSSES = {
    'CrossEntropyLoss': ('ANLoss', 'binary cross-entropy'),
    'FocalLoss': ('PartialFocalLoss', 'sigmoid focal loss'),
    'AsymmetricLoss': ('PartialAsymmetricLoss', 'asymmetric loss'),
}


def stock_loss_name(loss: object) -> Optional[str]:
    """The name of ``loss``'s class if it is one of
    :data:`STOCK_SIGMOID_LOSSES` (exactly, not a subclass), or of the
    first such member of a sum of losses (:class:`~.loss_sum.LossSum`,
    whose members all get the same targets); else None."""
    if isinstance(loss, LossSum):
        return next(
            (n for n in map(stock_loss_name, loss.losses) if n is not None),
            None)
    for name in STOCK_SIGMOID_LOSSES:
        if type(loss) is getattr(stock, name, None):
            return name
    return None


def stock_loss_in_config(loss: Optional[dict]) -> Optional[str]:
    """:func:`stock_loss_name` of a loss config (a head's ``loss``), read
    without building it."""
    loss = loss or {}
    if loss.get('type') == 'LossSum':
        return next((n for n in map(stock_loss_in_config, loss['losses'])
                     if n is not None), None)
    return loss.get('type') if loss.get('type') in STOCK_SIGMOID_LOSSES \
        else None


def stock_loss_error(name: str, values, in_sum: bool = False) -> ValueError:
    """The error for MMPretrain's loss ``name`` fed the negative target
    ``values`` (``in_sum``: as a member of a ``LossSum``)."""
    replacement, kind = STOCK_SIGMOID_LOSSES[name]
    fix = (f"the LossSum member dict(type='{name}', ...) replaced by "
           f"dict(type='{replacement}')" if in_sum else
           f"model.head.loss=dict(_delete_=True, type='{replacement}')")
    return ValueError(
        f"MMPretrain's {name} got training targets with negative entries "
        f"{list(values)}: these are mmlml's observed negatives (-1), e.g. "
        "from PartialLabelDataset(mode='full'), mode='annotated' on a "
        "dataset with observed negatives, or a mode='file' label file with "
        f'-1 entries. {name} expects targets in [0, 1] (0/1 labels or soft '
        'scores); on -1 its value goes below zero (without bound for '
        'CrossEntropyLoss and FocalLoss) and the model trains silently '
        'wrong. Use an mmlml loss, which reads the training encoding (1 '
        'observed positive, 0 unknown, -1 observed negative): '
        f'{fix} is the same {kind} with -1 read as a negative (unknown '
        'labels count as '
        'negatives, as in the stock loss); '
        'mmlml.models.losses.LOSS_CATALOG lists the other mmlml losses.')


def check_stock_loss_target(loss: object, target) -> None:
    """Raise the error of :func:`stock_loss_error` if ``loss`` is one of
    :data:`STOCK_SIGMOID_LOSSES` and ``target`` has a negative entry.

    Args:
        loss: The loss module of a head.
        target: A floating-point tensor of training targets (an integer
            tensor holds single-label class indices and is left to the
            loss), or an array of training labels (e.g. a dataset's
            ``observed_labels``). Read on the host: check once, not every
            iteration.

    Raises:
        ValueError: A negative target for a stock sigmoid loss.
    """
    name = stock_loss_name(loss)
    if name is None:
        return
    if isinstance(target, torch.Tensor):
        if not target.is_floating_point():
            return
        target = target.detach().cpu().numpy()
    target = np.asarray(target)
    negative = target[target < 0]
    if negative.size:
        raise stock_loss_error(
            name,
            np.unique(negative)[:5].tolist(),
            in_sum=type(loss) is not getattr(stock, name))
