r"""What the losses share: the target convention and its checks, the
numerically stable terms they are built from, and the reduction.

Target encoding (one convention everywhere, see the README): ``1`` observed
positive, ``0`` unannotated (unknown), ``-1`` observed negative. A loss
receives logits ``(N, C)`` and a target of the same shape in that encoding,
or class indices ``(N,)`` / ``(N, 1)`` (one observed positive per sample),
like MMPretrain's own losses.

Every term is a differentiable expression of the logit :math:`x`
(autograd gives the gradient), finite with finite gradients for any finite
logit: logs are log-sigmoids (:math:`\log p = -\mathrm{softplus}(-x)`,
:math:`\log(1 - p) = -\mathrm{softplus}(x)`) and powers of probabilities
are exponentials of them. The official implementations' ``log(p + eps)``
differs from :math:`\log p` by :math:`\log(1 + \epsilon / p)`: about
:math:`\epsilon / p` for :math:`p \gg \epsilon`.

Value checks never read a tensor on the host of an accelerator, nor break a
compiled graph (see :func:`check_values`).
"""
import math
from typing import Callable, Optional, Tuple, Union

import torch
import torch.nn.functional as F
from torch import Tensor

__all__ = [
    'POSITIVE', 'UNKNOWN', 'NEGATIVE', 'REDUCTIONS', 'check_reduction',
    'check_values', 'prepare_inputs', 'check_state_tensor',
    'prepare_pseudo_labels', 'label_states', 'by_state', 'focal_positive',
    'focal_negative', 'soft_bce', 'entropy', 'reduce_loss'
]

POSITIVE = 1
UNKNOWN = 0
NEGATIVE = -1

REDUCTIONS = ('none', 'mean', 'sum')

Number = Union[float, Tensor]


def check_reduction(reduction: str) -> str:
    """Return ``reduction`` if it is one of ``'none' | 'mean' | 'sum'``."""
    if reduction not in REDUCTIONS:
        raise ValueError(f'reduction must be one of {REDUCTIONS}, '
                         f'got {reduction!r}')
    return reduction


#: The error for a negative or NaN ``avg_factor``.
AVG_FACTOR_MESSAGE = ('avg_factor must be a number >= 0 (the count the mean '
                      'divides by, e.g. the batch size)')


def check_avg_factor(avg_factor: Optional[Number]) -> None:
    """Refuse a negative or NaN ``avg_factor`` (a number or a tensor; a
    tensor's check is queued on its device, see :func:`check_values`)."""
    if avg_factor is None:
        return
    if isinstance(avg_factor, Tensor):
        check_values(
            ~(avg_factor >= 0).all(), AVG_FACTOR_MESSAGE,
            lambda: f'{AVG_FACTOR_MESSAGE}, got {avg_factor.tolist()}')
    elif not avg_factor >= 0:  # also NaN
        raise ValueError(f'{AVG_FACTOR_MESSAGE}, got {avg_factor!r}')


def check_values(bad: Tensor,
                 message: str,
                 describe: Optional[Callable[[], str]] = None) -> None:
    """Refuse values where the 0-dim boolean ``bad`` is true.

    On the CPU, outside a compiled graph, a ``ValueError`` says
    ``describe()`` (a message that names the offending values), else
    ``message``.
    Elsewhere reading ``bad`` would synchronise with an accelerator or
    break the graph: the check is queued on the device
    (``torch._assert_async``) and a bad value stops the process at its
    next synchronisation with ``message``.
    """
    if torch.compiler.is_compiling() or bad.device.type != 'cpu':
        torch._assert_async(~bad, f'mmlml: {message}')
    elif bool(bad):
        raise ValueError(describe() if describe else message)


def _describe_target(target: Tensor, outside: Tensor, message: str) -> str:
    """``message`` with the values of ``target`` where ``outside`` and a
    hint at the usual causes (on the CPU, once the check has failed)."""
    values = torch.unique(target[outside])[:5].tolist()
    if not all(math.isfinite(v) for v in values):
        return ('target holds non-finite values (NaN or inf), found '
                f'{values}: a corrupt label (e.g. a NaN read from an '
                'annotation file or a division by zero in a transform); ' +
                message)
    hint = ''
    if any(v != round(v) for v in values):
        hint = ('; fractional targets usually come from Mixup/CutMix batch '
                'augments, which cannot blend partial labels (an unknown is '
                'not half a negative): remove them')
    return f'{message}, found {values}{hint}'


def prepare_inputs(cls_score: Tensor,
                   target: Tensor,
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
        precision is promoted: logs and powers of probabilities underflow
        in float16 under AMP.

    Raises:
        TypeError: ``cls_score`` is not floating point, or ``target`` is
            neither floating point nor integer.
        ValueError: Wrong dimensions or mismatched shapes; on the CPU also
            indices out of range and values outside the encoding, NaN and
            inf included (see :func:`check_values`).
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
    dtype = torch.float64 if cls_score.dtype == torch.float64 else \
        torch.float32
    cls_score = cls_score.to(dtype)

    if target.dim() == 1 or (target.dim() == 2 and target.size(1) == 1
                             and num_classes > 1):
        if target.is_floating_point():
            raise TypeError('class-index targets of shape (N,) or (N, 1) '
                            f'must be integers, got dtype {target.dtype}')
        index = target.reshape(-1, 1).long()
        if index.size(0) != num_samples:
            raise ValueError(f'index target has {index.size(0)} entries '
                             f'for {num_samples} samples')
        message = f'class indices must lie in [0, {num_classes - 1}]'
        check_values(((index < 0) | (index >= num_classes)).any(), message,
                     lambda: f'{message}, got range [{int(index.min())}, '
                     f'{int(index.max())}]')
        dense = cls_score.new_zeros(num_samples, num_classes)
        return cls_score, dense.scatter_(
            1, index.clamp(0, max(num_classes - 1, 0)), POSITIVE)

    if target.shape != cls_score.shape:
        raise ValueError('target must have the shape of cls_score '
                         f'{tuple(cls_score.shape)} (or be class indices of '
                         f'shape (N,)), got {tuple(target.shape)}')
    target = target.to(dtype)
    if soft:
        expected = '{-1} or [0, 1]'
        outside = ~(((target >= 0) & (target <= 1)) | (target == NEGATIVE))
    else:
        expected = '{-1, 0, 1}'
        outside = ~((target == POSITIVE) | (target == UNKNOWN) |
                    (target == NEGATIVE))
    message = (f'target values must be in {expected} (1 observed positive, '
               '0 unannotated, -1 observed negative)')
    check_values(outside.any(), message,
                 lambda: _describe_target(target, outside, message))
    return cls_score, target


def check_state_tensor(name: str,
                       value: Tensor,
                       cls_score: Tensor,
                       meaning: str = '') -> Tensor:
    """Check a per-sample state tensor a head hands a stateful loss: a
    floating-point tensor of the logits' shape, returned in their dtype
    and device (keeping its gradient).

    Raises:
        TypeError: Not a floating-point tensor (``meaning`` is appended).
        ValueError: Not the shape of ``cls_score``.
    """
    if not isinstance(value, Tensor) or not value.is_floating_point():
        raise TypeError(f'{name} must be a floating-point tensor{meaning}, '
                        f'got {type(value).__name__}')
    if value.shape != cls_score.shape:
        raise ValueError(f'{name} must have the shape of cls_score '
                         f'{tuple(cls_score.shape)}, got '
                         f'{tuple(value.shape)}')
    return value.to(cls_score)


def prepare_pseudo_labels(pseudo_labels: Tensor,
                          cls_score: Tensor) -> Tuple[Tensor, Tensor]:
    """Check the pseudo-labels a label store hands a stateful loss.

    Args:
        pseudo_labels (Tensor): ``(N, C)`` floating point: the soft target
            of each pseudo-labelled entry, in ``[0, 1]``, and NaN where an
            entry has none.
        cls_score (Tensor): The checked logits.

    Returns:
        tuple[Tensor, Tensor]: The boolean mask of the pseudo-labelled
        entries and their values with 0 for NaN (finite everywhere, so that
        a term that only those entries take has finite gradients).

    Raises:
        TypeError: Not a floating-point tensor.
        ValueError: Wrong shape; on the CPU also a value outside ``[0, 1]``
            and not NaN (see :func:`check_values`).
    """
    pseudo_labels = check_state_tensor(
        'pseudo_labels', pseudo_labels, cls_score,
        ' (NaN where an entry has no pseudo-label)')
    labelled = ~pseudo_labels.isnan()
    values = pseudo_labels.nan_to_num(0.0)
    check_values(((values < 0) | (values > 1)).any(),
                 'pseudo-labels must lie in [0, 1] (NaN: none)')
    return labelled, values


def label_states(target: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
    """Boolean masks of the observed positives, the unannotated labels and
    the observed negatives of a checked tri-state target."""
    return target == POSITIVE, target == UNKNOWN, target == NEGATIVE


def by_state(target: Tensor, positive: Number, unannotated: Number,
             negative: Number) -> Tensor:
    """Each label's loss by its state: ``positive`` where ``target`` is 1,
    ``negative`` where it is -1 and ``unannotated`` where it is 0 (tensors
    of the target's shape, or numbers). Every branch must be finite, with
    finite gradients, everywhere: ``torch.where`` gives the entries it does
    not select a zero gradient, and ``0 * inf`` would be NaN."""
    return torch.where(target == POSITIVE, positive,
                       torch.where(target == NEGATIVE, negative, unannotated))


def focal_positive(x: Tensor,
                   gamma: float = 0.0,
                   margin: Number = 0.0,
                   detach_focal_weight: bool = False) -> Tensor:
    r"""The loss of a positive label with focal weight and logit margin:
    :math:`-(1 - p_m)^{\gamma} \log p_m`, :math:`p_m = \sigma(x - m)`.

    ``gamma=0, margin=0`` is BCE's positive term, ``margin > 0`` the focal
    margin of Zhang et al. The weight is
    :math:`\exp(\gamma \log(1 - p_m))`; ``detach_focal_weight`` makes it a
    constant of the backward pass.
    """
    shifted = x - margin
    loss = -F.logsigmoid(shifted)
    if not gamma:
        return loss
    weight = torch.exp(gamma * F.logsigmoid(-shifted))
    return (weight.detach() if detach_focal_weight else weight) * loss


def focal_negative(x: Tensor,
                   gamma: float = 0.0,
                   clip: float = 0.0,
                   detach_focal_weight: bool = False) -> Tensor:
    r"""The loss of a negative label with focal weight and probability
    shift: :math:`-p_c^{\gamma} \log(1 - p_c)`,
    :math:`p_c = \max(\sigma(x) - c, 0)`.

    ``gamma=0, clip=0`` is BCE's negative term, ``clip > 0`` the
    probability shifting of ASL (Ridnik et al., ICCV 2021); its log is safe
    without an epsilon (:math:`1 - p_c \ge c`). ``detach_focal_weight``
    makes the weight a constant of the backward pass.
    """
    if clip:
        shifted = (torch.sigmoid(x) - clip).clamp(min=0)
        loss = -torch.log1p(-shifted)
        if not gamma:
            return loss
        # p_c^gamma, with a finite gradient where the shift clamps p_c to 0.
        inside = shifted > 0
        weight = torch.where(inside, shifted,
                             torch.ones_like(shifted)).pow(gamma) * inside
    else:
        loss = -F.logsigmoid(-x)
        if not gamma:
            return loss
        weight = torch.exp(gamma * F.logsigmoid(x))
    return (weight.detach() if detach_focal_weight else weight) * loss


def soft_bce(x: Tensor, soft_target: Number) -> Tensor:
    r"""Binary cross-entropy against a soft target :math:`s`,
    :math:`-[s \log p + (1 - s) \log(1 - p)] = s\,\mathrm{softplus}(-x) +
    (1 - s)\,\mathrm{softplus}(x)`: exact for :math:`s \in \{0, 1\}` at
    any logit (PyTorch's fused form rounds a confident correct prediction's
    loss to 0), with the gradient :math:`p - s`."""
    return soft_target * F.softplus(-x) + (1 - soft_target) * F.softplus(x)


def entropy(x: Tensor) -> Tensor:
    r"""The entropy of a Bernoulli(:math:`p`) in nats, from the logit:
    :math:`H = -p \log p - (1 - p)\log(1 - p) = \mathrm{softplus}(x) - p x`.
    """
    return F.softplus(x) - torch.sigmoid(x) * x


def reduce_loss(loss: Tensor,
                weight: Optional[Tensor] = None,
                reduction: str = 'mean',
                avg_factor: Optional[Number] = None) -> Tensor:
    """Weight and reduce an element-wise ``(N, C)`` or per-sample ``(N,)``
    loss.

    Args:
        loss (Tensor): Element-wise loss.
        weight (Tensor, optional): Sample-wise ``(N,)`` or element-wise
            weights of the same shape as ``loss``, finite and >= 0 (see
            :func:`check_values`).
        reduction (str): ``'none'``, ``'mean'`` or ``'sum'``.
        avg_factor (float | Tensor, optional): With ``'mean'``, divide the
            sum by ``avg_factor`` instead of the number of elements
            (MMPretrain's heads pass the batch size: "sum over classes,
            mean over samples"). Ignored by ``'sum'``, so that the sum the
            official Hill/SPLC/ASL code uses works inside the stock head.
            Must be >= 0 with every reduction (a negative or NaN one is
            refused); the sum is divided by it as MMPretrain's
            ``weight_reduce_loss`` divides (no epsilon: 0 gives inf for a
            non-zero sum, NaN for a zero one), except for an empty batch
            (below).

    An empty batch (``N = 0``, e.g. a rank without samples) is legal: the
    sum is 0, and so is the mean over nothing (``avg_factor`` 0 or None),
    with a zero gradient, so that every rank of a distributed run takes
    part in the backward pass. (MMPretrain's losses return NaN there.)
    """
    check_reduction(reduction)
    check_avg_factor(avg_factor)
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
        bad = ~torch.isfinite(weight) | (weight < 0)
        message = ('weight must be finite and >= 0 (a NaN, inf or negative '
                   'sample weight would silently corrupt the loss)')
        check_values(
            bad.any(), message, lambda: f'{message}; found '
            f'{torch.unique(weight[bad])[:5].tolist()}')
        loss = loss * weight
    if reduction == 'none':
        return loss
    total = loss.sum()
    if reduction == 'sum':
        return total
    if avg_factor is None:
        return total / max(loss.numel(), 1)
    if not loss.numel():  # the empty batch: 0, whatever avg_factor
        return total
    if isinstance(avg_factor, Tensor):
        avg_factor = avg_factor.to(total)
    return total / avg_factor
