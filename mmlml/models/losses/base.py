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

Each loss is written once, as an element-wise function of checked tensors,
and exposed twice, MMPretrain style: a functional form
(``hill_loss(cls_score, target, ..., weight=None, reduction='mean',
avg_factor=None)``) made by decorating the element-wise function with
:func:`partial_label_loss`, which declares its hyperparameters (see
:mod:`.hyperparameters`), and a thin registered ``nn.Module`` built on
:class:`PartialLabelLoss`, which takes its hyperparameters from that
declaration.
"""
import functools
import inspect
import math
from typing import Any, Callable, Dict, Optional, Tuple

import torch
import torch.nn as nn
from mmengine.logging import MessageHub
from torch import Tensor

from .hyperparameters import (REQUIRED, Hyperparameter, check_hparam,
                              check_hyperparameters)

POSITIVE = 1
UNKNOWN = 0
NEGATIVE = -1

REDUCTIONS = ('none', 'mean', 'sum')


def check_reduction(reduction: str) -> str:
    """Return ``reduction`` if it is one of ``'none' | 'mean' | 'sum'``."""
    if reduction not in REDUCTIONS:
        raise ValueError(f'reduction must be one of {REDUCTIONS}, '
                         f'got {reduction!r}')
    return reduction


def check_use_sigmoid(owner: str, use_sigmoid: Any) -> None:
    """Accept MMPretrain's ``use_sigmoid=True``, which every stock
    multi-label loss config sets, so that replacing a stock loss's
    ``type`` with an mmlml loss keeps working; refuse anything else."""
    if use_sigmoid is not True:
        raise ValueError(
            f'{owner} scores each label with a sigmoid: use_sigmoid must be '
            f'True (or left out), got {use_sigmoid!r}; a softmax over '
            'classes cannot express partial labels')


def on_host_or_assert(bad: Tensor, message: str) -> bool:
    """Whether ``bad`` has a non-zero entry, for the caller to raise a
    detailed error; on the CPU only. On an accelerator, answering would
    synchronise with the host: the check is queued instead
    (``torch._assert_async``), False is returned, and a bad value stops
    the process at its next synchronisation with ``message``."""
    if bad.device.type == 'cpu':
        return bool(bad.any())
    torch._assert_async(~bad.any(), f'mmlml: {message}')
    return False


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
        precision is promoted because ``log``/``pow`` of probabilities
        underflow in float16 under AMP.

    Raises:
        TypeError: ``cls_score`` is not floating point, or ``target`` is
            neither floating point nor integer.
        ValueError: Wrong dimensions, mismatched shapes, index out of range,
            target values outside the encoding, or non-finite target values.
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
    compute_dtype = (
        torch.float64 if cls_score.dtype == torch.float64 else torch.float32)
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
        if target.numel() and on_host_or_assert(
            (target < 0) | (target >= num_classes),
                f'class indices must lie in [0, {num_classes - 1}]'):
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
    expected = '{-1} or [0, 1]' if soft else '{-1, 0, 1}'
    if _outside_encoding(
            target, soft,
            f'target values must be in {expected} (1 observed positive, 0 '
            'unannotated, -1 observed negative)'):
        if soft:
            # (clamp(t, 0, 1) - t) (t + 1): zero exactly for t = -1 and for
            # 0 <= t <= 1; NaN or not zero for any other value.
            deviation = target.clamp(0, 1).sub_(target)
            deviation.addcmul_(deviation, target)
        else:
            # t (|t| - 1): zero exactly for t in {-1, 0, 1}.
            deviation = target.abs().sub_(1).mul_(target)
        bad = deviation != 0
        values = torch.unique(target[bad])[:5].tolist()
        if not all(math.isfinite(v) for v in values):
            raise ValueError(
                'target holds non-finite values (NaN or inf), found '
                f'{values}: a corrupt label (e.g. a NaN read from an '
                'annotation file or a division by zero in a transform); '
                f'targets must be in {expected}')
        hint = ''
        if any(v != round(v) for v in values):
            hint = ('; fractional targets usually come from Mixup/CutMix '
                    'batch augments, which cannot blend partial labels '
                    '(an unknown is not half a negative): remove them')
        raise ValueError(f'target values must be in {expected} (1 observed '
                         'positive, 0 unannotated, -1 observed negative), '
                         f'found {values}{hint}')
    return cls_score, target


def _outside_encoding(target: Tensor, soft: bool, message: str) -> bool:
    """Whether some value of ``target`` is outside the encoding ({-1, 0,
    1}, or {-1} and [0, 1] with ``soft``), NaN and +-inf included, like
    :func:`on_host_or_assert` (False on accelerators, where a bad value
    stops the process with ``message``). From four reductions, without a
    boolean tensor of the target's size."""
    if target.numel() == 0:
        return False
    low, high = torch.aminmax(target)
    if soft:
        # c (1 + c) with c = clamp(t, -1, 0): non-zero for t in (-1, 0).
        inner = target.clamp(-1, 0)
        inner.addcmul_(inner, inner)
    else:
        # Non-zero for a fractional t.
        inner = torch.frac(target)
    inner_low, inner_high = torch.aminmax(inner)
    bounds = torch.stack((low, high, inner_low, inner_high))
    if bounds.device.type != 'cpu':
        return on_host_or_assert(
            ~(bounds.abs_() <= bounds.new_tensor([1, 1, 0, 0])).all(), message)
    # NaN fails every comparison.
    low, high, inner_low, inner_high = bounds.tolist()
    return not (-1 <= low and high <= 1 and inner_low == 0 and inner_high == 0)


class _KnownGradient(torch.autograd.Function):
    """An element-wise function's value whose derivative was computed with
    it (see :func:`with_gradient`)."""

    @staticmethod
    def forward(ctx, cls_score: Tensor, value_and_grad: tuple) -> Tensor:
        # Passed in a tuple, not as tensor arguments: autograd would treat
        # an input returned as the output as not differentiable.
        value, grad = value_and_grad
        ctx.save_for_backward(grad)
        return value

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, upstream: Tensor) -> Tuple[Tensor, None]:
        grad, = ctx.saved_tensors
        # A per-sample value (N,) of (N, C) logits: broadcast over classes.
        upstream = upstream.reshape(upstream.shape + (1, ) *
                                    (grad.dim() - upstream.dim()))
        if _graph_freed() and upstream.dtype == grad.dtype and \
                upstream.dim() == grad.dim() and all(
                    size in (1, full)
                    for size, full in zip(upstream.shape, grad.shape)):
            # The saved derivative is ours alone (with_gradient's contract)
            # and is released after this call: scale it in place.
            return grad.mul_(upstream), None
        return upstream * grad, None


def _graph_freed() -> bool:
    """Whether the running backward pass frees the graph after use
    (``retain_graph=False``), so that saved tensors are read only once.
    False when PyTorch cannot tell."""
    keep_graph = getattr(torch._C._autograd,
                         '_get_current_graph_task_keep_graph', None)
    return keep_graph is not None and not keep_graph()


def wants_grad(cls_score: Tensor) -> bool:
    """Whether autograd will differentiate a function of ``cls_score``."""
    return torch.is_grad_enabled() and cls_score.requires_grad


def with_gradient(cls_score: Tensor, value: Tensor,
                  grad: Optional[Tensor]) -> Tensor:
    """``value``, an element-wise function of ``cls_score`` computed
    without autograd, made differentiable with its derivative ``grad``
    (``d value / d cls_score``, element by element; for a per-sample
    ``(N,)`` value of ``(N, C)`` logits, ``grad`` is ``(N, C)``: the
    derivative of each sample's value by each of its logits).

    A loss written this way computes its value and its gradient in one
    pass, from the same intermediate results, and saves one tensor for the
    backward pass instead of autograd's chain of intermediates: the
    backward pass is a single multiplication, in place on ``grad`` when
    the graph is not retained. ``grad`` must therefore be a tensor that
    nothing else holds (not ``value``, an input, or a view of either).
    ``grad=None`` (no gradient wanted, see :func:`wants_grad`) returns
    ``value`` as it is. Second derivatives are not available
    (``create_graph=True`` raises).
    """
    if grad is None:
        return value
    return _KnownGradient.apply(cls_score, (value, grad))


def check_state_tensor(name: str,
                       value: Tensor,
                       cls_score: Tensor,
                       meaning: str = '') -> Tensor:
    """Check a per-sample state tensor a head hands a stateful loss: a
    floating-point tensor of the logits' shape, returned in their dtype
    and device (keeping its gradient).

    Args:
        name (str): The keyword the loss receives it as.
        value (Tensor): The state.
        cls_score (Tensor): The checked logits (see
            :func:`prepare_inputs`).
        meaning (str): Appended to the type error (what the values are).

    Raises:
        TypeError: Not a floating-point tensor.
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
        cls_score (Tensor): The checked logits (see :func:`prepare_inputs`).

    Returns:
        tuple[Tensor, Tensor]: The pseudo-labels in the logits' dtype and
        device, and the same with 0 for NaN (finite everywhere, for the
        soft target of a term that only the pseudo-labelled entries take,
        see :func:`~.terms.has_value`).

    Raises:
        TypeError: Not a floating-point tensor.
        ValueError: Wrong shape, or a value outside ``[0, 1]`` and not NaN.
    """
    pseudo_labels = check_state_tensor(
        'pseudo_labels', pseudo_labels, cls_score,
        ' (NaN where an entry has no pseudo-label)')
    message = 'pseudo-labels must lie in [0, 1] (NaN: none)'
    # The range of the numbers (NaN read as 0, +-inf as the dtype's
    # extremes): one pass and a reduction, no boolean tensors.
    filled = pseudo_labels.nan_to_num(0.0)
    low, high = torch.aminmax(filled)
    if on_host_or_assert(torch.logical_or(low < 0, high > 1), message):
        raise ValueError(message)
    return pseudo_labels, filled


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
    # The mean as the sum divided by the count (what ATen's mean computes),
    # whose backward hands the loss an expanded view of one number instead
    # of a materialised tensor of the loss's size.
    return loss.sum() / (loss.numel() if avg_factor is None else avg_factor)


def partial_label_loss(soft_targets: bool = False,
                       **hyperparameters: Hyperparameter) -> Callable:
    """Declare a loss's hyperparameters and turn its element-wise function
    into a checked, reducible functional loss.

    The decorated function ``elementwise(cls_score, target, **values)``
    receives checked float tensors (see :func:`prepare_inputs`) and the
    checked hyperparameters, and returns the per-element ``(N, C)`` (or
    per-sample ``(N,)``) loss. The functional form takes the same
    hyperparameters (positionally in declaration order, or by name; the
    declared defaults fill the rest) plus ``weight``, ``reduction`` and
    ``avg_factor``, like MMPretrain's ``weighted_loss``. Arguments that are
    not declared (per-call tensors) go to the element-wise function as
    they are.

    The functional form carries ``hyperparameters`` (the declaration),
    ``elementwise`` (the undecorated function) and ``compute`` (checks the
    tensors but not the hyperparameters, and fills in the declared defaults
    of those not given: what a module that validated its hyperparameters
    when it was built calls).

    Args:
        soft_targets (bool): Also accept soft targets in ``[0, 1]``.
            Defaults to False.
        **hyperparameters (Hyperparameter): The declarations, in order.

    Example:
        >>> import torch
        >>> from mmlml.models.losses.hyperparameters import Real
        >>> @partial_label_loss(gamma=Real(2.0, low=0))
        ... def squared_loss(cls_score, target, gamma):
        ...     return gamma * (torch.sigmoid(cls_score) - target)**2
        >>> squared_loss(torch.zeros(1, 2), torch.tensor([[1., 0.]]),
        ...              reduction='none')
        tensor([[0.5000, 0.5000]])
        >>> squared_loss(torch.zeros(1, 2), torch.tensor([0]), gamma=-1)
        Traceback (most recent call last):
        ...
        ValueError: gamma must lie in [0, inf], got -1.0
    """

    def decorate(elementwise: Callable) -> Callable:
        names = tuple(hyperparameters)
        defaults = {
            name: spec.default
            for name, spec in hyperparameters.items()
            if spec.default is not REQUIRED
        }

        def compute(cls_score: Tensor,
                    target: Tensor,
                    weight: Optional[Tensor] = None,
                    reduction: str = 'mean',
                    avg_factor: Optional[float] = None,
                    **values: Any) -> Tensor:
            cls_score, target = prepare_inputs(
                cls_score, target, soft=soft_targets)
            loss = elementwise(cls_score, target, **{**defaults, **values})
            return reduce_loss(loss, weight, reduction, avg_factor)

        @functools.wraps(elementwise)
        def functional(cls_score: Tensor,
                       target: Tensor,
                       *args: Any,
                       weight: Optional[Tensor] = None,
                       reduction: str = 'mean',
                       avg_factor: Optional[float] = None,
                       **values: Any) -> Tensor:
            if len(args) > len(names):
                raise TypeError(f'{elementwise.__name__} takes at most '
                                f'{len(names)} positional hyperparameters '
                                f'({", ".join(names)}), got {len(args)}')
            for name, value in zip(names, args):
                if name in values:
                    raise TypeError(f'{elementwise.__name__} got two values '
                                    f'for {name}')
                values[name] = value
            check_reduction(reduction)
            values = check_hyperparameters(
                hyperparameters, values, elementwise.__name__, strict=False)
            return compute(cls_score, target, weight, reduction, avg_factor,
                           **values)

        functional.hyperparameters = dict(hyperparameters)
        functional.elementwise = elementwise
        functional.compute = compute
        return functional

    return decorate


class PartialLabelLoss(nn.Module):
    """Base of mmlml's registered losses.

    A subclass sets ``loss_fn``, a functional loss made with
    :func:`partial_label_loss`, and ``hyperparameters``, the declarations
    of the keyword arguments it takes besides ``reduction`` and
    ``loss_weight`` (usually the functional form's, through
    :func:`~.hyperparameters.hyperparameters_of`). The constructor
    validates them once, stores each as an attribute of the same name and
    refuses unknown names; :meth:`loss_kwargs` passes them to ``loss_fn``
    (a subclass whose arguments differ from ``loss_fn``'s, or change with
    the training progress, overrides it) and ``repr`` prints them.

    The forward signature is MMPretrain's, so any mmlml loss drops into the
    stock ``MultiLabelLinearClsHead``, which calls
    ``loss(cls_score, target, avg_factor=N)``: with the default
    ``reduction='mean'`` that is the sum over classes averaged over samples,
    like MMPretrain's sigmoid ``CrossEntropyLoss``.

    Args:
        reduction (str): ``'none'``, ``'mean'`` or ``'sum'``. Defaults to
            ``'mean'``.
        loss_weight (float): Multiplier of the loss. Defaults to 1.0.
        use_sigmoid (bool): Must be True. Accepted so that replacing the
            ``type`` of a stock multi-label loss
            (``CrossEntropyLoss(use_sigmoid=True)``), e.g. with
            ``--cfg-options model.head.loss.type=HillLoss``, keeps working.
        **hyperparameters: The subclass's declared hyperparameters.

    Shape:
        - cls_score: ``(N, C)`` logits.
        - target: ``(N, C)`` in {-1, 0, 1} (soft targets in ``[0, 1]``
          where a loss says so), or ``(N,)`` class indices.
        - output: scalar, or with ``reduction='none'`` the ``(N, C)``
          element-wise losses (``(N,)`` for losses defined per sample).
    """

    loss_fn: Callable = None
    hyperparameters: Dict[str, Hyperparameter] = {}
    #: Per-sample state the loss reads: names of ``(N, C)`` (or ``(C,)``)
    #: keyword tensors that a ``PartialLabel*Head`` looks up by
    #: ``sample_idx`` and passes to every call. Stateless losses read none.
    state_inputs: Tuple[str, ...] = ()
    #: The hook that writes that state (named in the errors).
    state_hook: Optional[str] = None

    def __init_subclass__(cls, **kwargs):
        """Give the subclass a constructor whose signature lists its
        declared hyperparameters (for ``inspect``, ``help`` and docs)."""
        super().__init_subclass__(**kwargs)
        if '__init__' not in cls.__dict__:

            def __init__(self, **kwargs):
                super(cls, self).__init__(**kwargs)

            cls.__init__ = __init__
        elif list(inspect.signature(
                cls.__init__).parameters) != ['self', 'kwargs']:
            return  # a constructor with a signature of its own
        keyword = inspect.Parameter.KEYWORD_ONLY
        params = [inspect.Parameter('self', inspect.Parameter.POSITIONAL_ONLY)]
        params += [
            inspect.Parameter(
                name,
                keyword,
                default=(inspect.Parameter.empty
                         if spec.default is REQUIRED else spec.default))
            for name, spec in cls.hyperparameters.items()
        ]
        params += [
            inspect.Parameter('reduction', keyword, default='mean'),
            inspect.Parameter('loss_weight', keyword, default=1.0),
            inspect.Parameter('use_sigmoid', keyword, default=True)
        ]
        cls.__init__.__signature__ = inspect.Signature(params)

    def __init__(self,
                 *,
                 reduction: str = 'mean',
                 loss_weight: float = 1.0,
                 use_sigmoid: bool = True,
                 **hyperparameters: Any):
        super().__init__()
        check_use_sigmoid(type(self).__name__, use_sigmoid)
        self.reduction = check_reduction(reduction)
        self.loss_weight = check_hparam('loss_weight', loss_weight)
        values = check_hyperparameters(self.hyperparameters, hyperparameters,
                                       type(self).__name__)
        for name, value in values.items():
            setattr(self, name, value)

    def loss_kwargs(self) -> Dict[str, Any]:
        """Hyperparameters passed to ``loss_fn`` at this call."""
        return {name: getattr(self, name) for name in self.hyperparameters}

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
            **kwargs: The per-sample state of :attr:`state_inputs`, exactly
                those names.
        """
        reduction = check_reduction(reduction_override or self.reduction)
        self.check_state(kwargs)
        loss = type(self).loss_fn.compute(
            cls_score,
            target,
            weight=weight,
            reduction=reduction,
            avg_factor=avg_factor,
            **self.loss_kwargs(),
            **kwargs)
        return self.loss_weight * loss

    def check_state(self, state: Dict[str, Any]) -> None:
        """Refuse a call whose per-sample state is not :attr:`state_inputs`
        (a stateful loss without its head or hook, or an unknown keyword)."""
        given, wanted = set(state), set(self.state_inputs)
        if given - wanted:
            raise TypeError(f'{type(self).__name__} got unexpected keyword '
                            f'argument(s) {sorted(given - wanted)}')
        if wanted - given:
            raise RuntimeError(
                f'{type(self).__name__} keeps per-sample state and needs '
                f'{sorted(wanted - given)} at every call: use a head that '
                "hands it over (type='PartialLabelLinearClsHead' or "
                "'PartialLabelCSRAClsHead') and add "
                f"custom_hooks=[dict(type='{self.state_hook}', ...)].")

    def extra_repr(self) -> str:
        """The reduction, the weight and every declared hyperparameter (no
        training progress needed)."""
        values = dict(reduction=self.reduction, loss_weight=self.loss_weight)
        values.update(
            (name, getattr(self, name)) for name in self.hyperparameters)
        return ', '.join(f'{k}={v!r}' for k, v in values.items())


#: The MessageHub key of :class:`~mmlml.hooks.TrainingProgressHook`: the
#: iterations of one pass over the training data (per process) in an
#: iteration-based loop, None in an epoch-based one.
ITERS_PER_EPOCH = 'iters_per_epoch'


def epoch_progress(owner: str) -> Tuple[int, int]:
    """The running training's 0-based epoch and number of epochs, from
    MMEngine's ``MessageHub``.

    An epoch-based Runner's ``RuntimeInfoHook`` publishes ``epoch`` and
    ``max_epochs`` there. An ``IterBasedTrainLoop`` publishes ``epoch=0``
    and ``max_epochs=1`` for the whole run; with
    :class:`~mmlml.hooks.TrainingProgressHook`, which publishes the
    iterations of one pass over the data, an epoch is such a pass:
    ``epoch = iter // iters_per_epoch`` and ``max_epochs =
    ceil(max_iters / iters_per_epoch)``. In an epoch-based loop the hook
    publishes ``None`` and the Runner's epochs are kept.

    Args:
        owner (str): Who asks, for the errors.

    Returns:
        tuple[int, int]: ``(epoch, max_epochs)``.

    Raises:
        RuntimeError: No training is running (no Runner, or one that has
            finished: its ``RuntimeInfoHook`` removes ``loop_stage``), or
            the run reports a single epoch, which an epoch-dependent method
            cannot use: an ``IterBasedTrainLoop`` without
            ``TrainingProgressHook`` (its schedule would never move) or a
            one-epoch run.
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
            'always reports one: add '
            "custom_hooks=[dict(type='TrainingProgressHook')] to count an "
            'epoch as one pass over the training data. In an epoch-based '
            'run, train for more than one epoch (the same hook accepts a '
            'one-epoch run, e.g. for a smoke test).')
    return epoch, max_epochs


class TrainingProgress:
    """Mixin for losses whose behaviour depends on the epoch.

    The epoch and the number of epochs are read from MMEngine's
    ``MessageHub`` (see :func:`epoch_progress`), so the loss works in a
    stock epoch-based config with no extra hook, and in an iteration-based
    one with :class:`~mmlml.hooks.TrainingProgressHook`. Outside a Runner
    call :meth:`set_epoch`.
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
        if max_epochs is not None and max_epochs < 1:
            raise ValueError(f'max_epochs must be >= 1, got {max_epochs}')
        self._epoch_override = epoch
        self._max_epochs_override = max_epochs

    def current_epoch(self) -> int:
        """The 0-based training epoch."""
        if self._epoch_override is not None:
            return self._epoch_override
        return epoch_progress(type(self).__name__)[0]

    def total_epochs(self) -> int:
        """The number of training epochs (``max_epochs``)."""
        if self._max_epochs_override is not None:
            return self._max_epochs_override
        if self._epoch_override is not None:
            raise RuntimeError(
                f'{type(self).__name__} needs the number of training epochs: '
                'pass max_epochs to set_epoch() with the epoch')
        return epoch_progress(type(self).__name__)[1]
