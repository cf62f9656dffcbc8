"""What every mmlml loss shares: the target convention, input checks,
reduction, and the training progress that epoch-dependent losses read.

Target encoding (one convention everywhere, see the README):

* ``1``  observed positive,
* ``0``  unannotated (unknown),
* ``-1`` observed negative.

A loss receives logits ``cls_score`` of shape ``(N, C)`` and a target of the
same shape in that encoding, or class indices of shape ``(N,)`` / ``(N, 1)``
(one observed positive per sample, everything else unknown), exactly like
MMPretrain's own losses.

Each loss is written twice, MMPretrain style: a functional form
(``hill_loss(cls_score, target, ..., weight=None, reduction='mean',
avg_factor=None)``), made by decorating an element-wise function with
:func:`partial_label_loss`, and a thin registered ``nn.Module`` built on
:class:`PartialLabelLoss`.
"""
import functools
import math
from typing import Callable, Dict, Optional, Tuple

import torch
import torch.nn as nn
from mmengine.logging import MessageHub
from torch import Tensor

POSITIVE = 1
UNKNOWN = 0
NEGATIVE = -1

REDUCTIONS = ('none', 'mean', 'sum')

# MMPretrain divides by ``avg_factor + eps`` (models/losses/utils.py); so do
# we, so that a loss with ``avg_factor=N`` matches MMPretrain's magnitudes.
_AVG_EPS = torch.finfo(torch.float32).eps


def check_hparam(name: str,
                 value: float,
                 low: float = -math.inf,
                 high: float = math.inf,
                 low_open: bool = False,
                 high_open: bool = False) -> float:
    """Return ``float(value)`` if it is a finite real number in the interval.

    The interval is ``[low, high]``; ``low_open``/``high_open`` exclude an
    end.

    Raises:
        ValueError: ``value`` is not a real number, not finite, or outside
            the interval. The message names the argument and the value.
    """
    if (isinstance(value, bool) or not isinstance(value, (int, float))
            or not math.isfinite(value)):
        raise ValueError(f'{name} must be a finite real number, got '
                         f'{value!r}')
    too_low = value <= low if low_open else value < low
    too_high = value >= high if high_open else value > high
    if too_low or too_high:
        interval = (('(' if low_open else '[') + f'{low}, {high}' +
                    (')' if high_open else ']'))
        raise ValueError(f'{name} must lie in {interval}, got {value!r}')
    return float(value)


def check_reduction(reduction: str) -> str:
    """Return ``reduction`` if it is one of ``'none' | 'mean' | 'sum'``."""
    if reduction not in REDUCTIONS:
        raise ValueError(f'reduction must be one of {REDUCTIONS}, '
                         f'got {reduction!r}')
    return reduction


def prepare_inputs(cls_score: Tensor, target: Tensor,
                   soft: bool = False) -> Tuple[Tensor, Tensor]:
    """Check a (logits, target) pair and bring it to the canonical form.

    Args:
        cls_score (Tensor): Logits of shape ``(N, C)``, floating point.
        target (Tensor): Tri-state target of shape ``(N, C)`` with values in
            {-1, 0, 1}, or integer class indices of shape ``(N,)`` or
            ``(N, 1)`` (one observed positive per sample).
        soft (bool): Also accept soft targets in ``[0, 1]`` (and -1 for
            observed negatives). Defaults to False.

    Returns:
        tuple[Tensor, Tensor]: Logits and a dense target of the same shape,
        both in float32 (float64 inputs stay float64, for gradcheck). Half
        precision is promoted because ``log``/``pow`` of probabilities
        underflow in float16 under AMP.

    Raises:
        TypeError: ``cls_score`` is not floating point, or ``target`` is
            neither floating point nor integer.
        ValueError: Wrong dimensions, mismatched shapes, index out of range,
            or target values outside the encoding.
    """
    if not isinstance(cls_score, Tensor) or not isinstance(target, Tensor):
        raise TypeError('cls_score and target must be tensors, got '
                        f'{type(cls_score).__name__} and '
                        f'{type(target).__name__}')
    if not cls_score.is_floating_point():
        raise TypeError('cls_score must hold floating-point logits, got '
                        f'dtype {cls_score.dtype}')
    if cls_score.dim() != 2:
        raise ValueError('cls_score must have shape (N, C), got '
                         f'{tuple(cls_score.shape)}')
    if target.dtype == torch.bool or target.is_complex():
        raise TypeError('target must be a float tensor in {-1, 0, 1} or an '
                        f'integer index tensor, got dtype {target.dtype}')
    num_samples, num_classes = cls_score.shape
    compute_dtype = (torch.float64
                     if cls_score.dtype == torch.float64 else torch.float32)
    cls_score = cls_score.to(compute_dtype)

    is_index = target.dim() == 1 or (target.dim() == 2 and target.size(1) == 1
                                     and num_classes > 1)
    if is_index:
        if target.is_floating_point():
            raise TypeError('class-index targets of shape (N,) or (N, 1) '
                            f'must be integers, got dtype {target.dtype}')
        target = target.reshape(-1)
        if target.numel() != num_samples:
            raise ValueError(f'index target has {target.numel()} entries '
                             f'for {num_samples} samples')
        if target.numel() and (target.min() < 0
                               or target.max() >= num_classes):
            raise ValueError('class indices must lie in '
                             f'[0, {num_classes - 1}], got range '
                             f'[{int(target.min())}, {int(target.max())}]')
        dense = cls_score.new_zeros(num_samples, num_classes)
        dense[torch.arange(num_samples, device=target.device),
              target.long()] = POSITIVE
        return cls_score, dense

    if target.shape != cls_score.shape:
        raise ValueError('target must have the shape of cls_score '
                         f'{tuple(cls_score.shape)} (or be class indices of '
                         f'shape (N,)), got {tuple(target.shape)}')
    target = target.to(compute_dtype)
    if soft:
        bad = ((target < 0) & (target != NEGATIVE)) | (target > 1)
        expected = '{-1} or [0, 1]'
    else:
        bad = (target != POSITIVE) & (target != UNKNOWN) & (target != NEGATIVE)
        expected = '{-1, 0, 1}'
    if bool(bad.any()):
        values = torch.unique(target[bad])[:5].tolist()
        hint = ''
        if any(v != round(v) for v in values):
            hint = ('; fractional targets usually come from Mixup/CutMix '
                    'batch augments, which cannot blend partial labels '
                    '(an unknown is not half a negative): remove them')
        raise ValueError(f'target values must be in {expected} (1 observed '
                         'positive, 0 unannotated, -1 observed negative), '
                         f'found {values}{hint}')
    return cls_score, target


def reduce_loss(loss: Tensor,
                weight: Optional[Tensor] = None,
                reduction: str = 'mean',
                avg_factor: Optional[float] = None) -> Tensor:
    """Weight and reduce an element-wise ``(N, C)`` or per-sample ``(N,)``
    loss.

    Args:
        loss (Tensor): Element-wise loss.
        weight (Tensor, optional): Sample-wise ``(N,)`` or element-wise
            weights of the same shape as ``loss``.
        reduction (str): ``'none'``, ``'mean'`` or ``'sum'``.
        avg_factor (float, optional): With ``'mean'``, divide the sum by
            ``avg_factor`` instead of the number of elements (MMPretrain's
            heads pass the batch size, giving "sum over classes, mean over
            samples"). Ignored by ``'sum'``, so that the sum the official
            Hill/SPLC/ASL code uses works inside the stock head (which always
            passes ``avg_factor``; MMPretrain's own losses raise there).
    """
    check_reduction(reduction)
    if weight is not None:
        weight = weight.to(loss)
        if weight.dim() == 1 and loss.dim() == 2:
            if weight.numel() != loss.size(0):
                raise ValueError(f'sample-wise weight has {weight.numel()} '
                                 f'entries for {loss.size(0)} samples')
            weight = weight[:, None]
        elif weight.shape != loss.shape:
            raise ValueError('weight must have shape (N,) or '
                             f'{tuple(loss.shape)}, got {tuple(weight.shape)}')
        loss = loss * weight
    if reduction == 'none':
        return loss
    if reduction == 'sum':
        return loss.sum()
    if avg_factor is None:
        return loss.mean()
    return loss.sum() / (avg_factor + _AVG_EPS)


def partial_label_loss(elementwise: Callable) -> Callable:
    """Turn an element-wise loss into a checked, reducible functional loss.

    ``elementwise(cls_score, target, **hyperparameters)`` receives checked
    float tensors (see :func:`prepare_inputs`) and returns the per-element
    ``(N, C)`` (or per-sample ``(N,)``) loss. The decorated function takes
    the same hyperparameters plus ``weight``, ``reduction`` and
    ``avg_factor``, like MMPretrain's ``weighted_loss``.

    Set ``soft_targets=True`` on the element-wise function (an attribute) to
    accept soft targets in ``[0, 1]``.
    """
    soft = getattr(elementwise, 'soft_targets', False)

    @functools.wraps(elementwise)
    def wrapper(cls_score: Tensor,
                target: Tensor,
                *args,
                weight: Optional[Tensor] = None,
                reduction: str = 'mean',
                avg_factor: Optional[float] = None,
                **kwargs) -> Tensor:
        check_reduction(reduction)
        cls_score, target = prepare_inputs(cls_score, target, soft=soft)
        loss = elementwise(cls_score, target, *args, **kwargs)
        return reduce_loss(loss, weight, reduction, avg_factor)

    wrapper.elementwise = elementwise
    return wrapper


class PartialLabelLoss(nn.Module):
    """Base of mmlml's registered losses.

    Subclasses set ``loss_fn`` to a functional loss made with
    :func:`partial_label_loss` and return its hyperparameters from
    :meth:`loss_kwargs` (which may depend on the training progress). The
    forward signature is MMPretrain's, so any mmlml loss drops into the stock
    ``MultiLabelLinearClsHead``, which calls
    ``loss(cls_score, target, avg_factor=N)``: with the default
    ``reduction='mean'`` that is the sum over classes averaged over samples,
    like MMPretrain's sigmoid ``CrossEntropyLoss``.

    Args:
        reduction (str): ``'none'``, ``'mean'`` or ``'sum'``. Defaults to
            ``'mean'``.
        loss_weight (float): Multiplier of the loss. Defaults to 1.0.
    """

    loss_fn: Callable = None

    def __init__(self, reduction: str = 'mean', loss_weight: float = 1.0):
        super().__init__()
        self.reduction = check_reduction(reduction)
        self.loss_weight = float(loss_weight)

    def loss_kwargs(self) -> Dict:
        """Hyperparameters passed to ``loss_fn`` at this call."""
        return {}

    def forward(self,
                cls_score: Tensor,
                target: Tensor,
                weight: Optional[Tensor] = None,
                avg_factor: Optional[float] = None,
                reduction_override: Optional[str] = None,
                **kwargs) -> Tensor:
        """Compute the loss.

        Args:
            cls_score (Tensor): Logits ``(N, C)``.
            target (Tensor): Tri-state ``(N, C)`` target or ``(N,)`` indices.
            weight (Tensor, optional): ``(N,)`` or ``(N, C)`` weights.
            avg_factor (float, optional): Divisor for ``'mean'``.
            reduction_override (str, optional): Overrides ``reduction``.
            **kwargs: Extra per-call tensors some losses take (e.g. state
                looked up per sample by a head).
        """
        reduction = check_reduction(reduction_override or self.reduction)
        loss = type(self).loss_fn(
            cls_score,
            target,
            weight=weight,
            reduction=reduction,
            avg_factor=avg_factor,
            **self.loss_kwargs(),
            **kwargs)
        return self.loss_weight * loss

    def extra_repr(self) -> str:
        text = f'reduction={self.reduction!r}, loss_weight={self.loss_weight}'
        try:
            kwargs = self.loss_kwargs()
        except RuntimeError:  # epoch-dependent, outside a Runner
            return text
        return text + ''.join(f', {k}={v!r}' for k, v in kwargs.items()
                              if not isinstance(v, Tensor))


class TrainingProgress:
    """Mixin for losses whose behaviour depends on the epoch.

    The epoch is read from MMEngine's ``MessageHub`` (the default
    ``RuntimeInfoHook`` keeps ``epoch``, 0-based, and ``max_epochs`` there
    during training), so the loss works in a stock config with no extra hook.
    Outside a Runner call :meth:`set_epoch`.
    """

    _epoch_override: Optional[int] = None
    _max_epochs_override: Optional[int] = None

    def set_epoch(self,
                  epoch: Optional[int],
                  max_epochs: Optional[int] = None) -> None:
        """Fix the (0-based) epoch and total epochs; ``None`` goes back to
        reading the MessageHub."""
        if epoch is not None and epoch < 0:
            raise ValueError(f'epoch must be >= 0, got {epoch}')
        self._epoch_override = epoch
        self._max_epochs_override = max_epochs

    def current_epoch(self) -> int:
        """The 0-based training epoch."""
        if self._epoch_override is not None:
            return self._epoch_override
        epoch = MessageHub.get_current_instance().get_info('epoch')
        if epoch is None:
            raise RuntimeError(
                f'{type(self).__name__} depends on the training epoch but '
                'found none: run it inside an MMEngine Runner (the '
                "RuntimeInfoHook publishes 'epoch') or call "
                'loss.set_epoch(epoch, max_epochs) first')
        return int(epoch)

    def total_epochs(self) -> int:
        """The number of training epochs (``max_epochs``)."""
        total = self._max_epochs_override
        if total is None:
            total = MessageHub.get_current_instance().get_info('max_epochs')
        if total is None:
            raise RuntimeError(
                f'{type(self).__name__} needs the number of training epochs: '
                "run it inside an epoch-based Runner (which publishes "
                "'max_epochs') or pass max_epochs to set_epoch()")
        return int(total)
