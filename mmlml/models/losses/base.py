"""The shape every mmlml loss shares, MMPretrain style: a functional form
made by :func:`partial_label_loss` from an element-wise function (checked
inputs, declared hyperparameters, weight and reduction), and a thin
registered ``nn.Module`` built on :class:`PartialLabelLoss`, which takes its
hyperparameters from that declaration.
"""
import functools
from typing import Any, Callable, Dict, Optional, Protocol, Tuple, cast

import torch.nn as nn
from torch import Tensor

from mmlml.utils.hyperparameters import (REQUIRED, Hyperparameter, Real,
                                         check_hyperparameters)
from .utils import check_reduction, prepare_inputs, reduce_loss

__all__ = [
    'LOSS_WEIGHT', 'check_use_sigmoid', 'partial_label_loss',
    'PartialLabelLoss'
]

#: The multiplier of a loss module.
LOSS_WEIGHT = Real(1.0, low=0)


def check_use_sigmoid(owner: str, use_sigmoid: Any) -> None:
    """Accept MMPretrain's ``use_sigmoid=True``, which every stock
    multi-label loss config sets, so that replacing a stock loss's
    ``type`` with an mmlml loss keeps working; refuse anything else."""
    if use_sigmoid is not True:
        raise ValueError(
            f'{owner} scores each label with a sigmoid: use_sigmoid must be '
            f'True (or left out), got {use_sigmoid!r}; a softmax over '
            'classes cannot express partial labels')


class FunctionalLoss(Protocol):
    """A functional loss made by :func:`partial_label_loss`, with what it
    carries."""

    hyperparameters: Dict[str, Hyperparameter]
    elementwise: Callable[..., Tensor]
    compute: Callable[..., Tensor]

    def __call__(self, cls_score: Tensor, target: Tensor, *args: Any,
                 **kwargs: Any) -> Tensor:
        ...


def functional_loss(
    hyperparameters: Dict[str, Hyperparameter], compute: Callable[..., Tensor]
) -> Callable[[Callable[..., Tensor]], FunctionalLoss]:
    """Give a hand-written functional loss what :func:`partial_label_loss`'s
    carry: its ``hyperparameters`` declaration and ``compute``."""

    def attach(functional: Callable[..., Tensor]) -> FunctionalLoss:
        loss = cast(FunctionalLoss, functional)
        loss.hyperparameters = hyperparameters
        loss.compute = compute
        return loss

    return attach


def partial_label_loss(
    soft_targets: bool = False,
    **hyperparameters: Hyperparameter
) -> Callable[[Callable[..., Tensor]], FunctionalLoss]:
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
        >>> from mmlml.utils.hyperparameters import Real
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

    def decorate(elementwise: Callable[..., Tensor]) -> FunctionalLoss:
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

        loss = cast(FunctionalLoss, functional)
        loss.hyperparameters = dict(hyperparameters)
        loss.elementwise = elementwise
        loss.compute = compute
        return loss

    return decorate


class PartialLabelLoss(nn.Module):
    """Base of mmlml's registered losses.

    A subclass sets ``loss_fn``, a functional loss made with
    :func:`partial_label_loss`, and ``hyperparameters``, the declarations
    of the keyword arguments it takes besides ``reduction``,
    ``loss_weight`` and ``use_sigmoid`` (usually the functional form's,
    through :func:`~.hyperparameters.hyperparameters_of`). Its constructor
    lists its own with their declared defaults, passes the rest on to its
    parent through ``**kwargs`` (so that each default is written once:
    this class's three, or an mmlml parent loss's settings too), stores
    each of its own as an attribute of the same name and ends with
    :func:`~mmlml.utils.hyperparameters.check_settings`, which validates
    them in place (``float`` for a ``Real``...), e.g.::

        def __init__(self, *, gamma=2.0, **kwargs):
            super().__init__(**kwargs)
            self.gamma = gamma
            check_settings(self)

    A loss without hyperparameters writes no constructor. A test compares
    every registered loss's signature, read along its mmlml parents
    (:func:`~mmlml.utils.signatures.constructor_parameters`), with its
    declaration.
    :meth:`loss_kwargs` passes the hyperparameters to ``loss_fn`` (a
    subclass whose arguments differ from ``loss_fn``'s, or change with
    the training progress, overrides it) and ``repr`` prints them.

    The forward signature is MMPretrain's, so any mmlml loss drops into the
    stock ``MultiLabelLinearClsHead``, which calls
    ``loss(cls_score, target, avg_factor=N)``: with the default
    ``reduction='mean'`` that is the sum over classes averaged over samples,
    like MMPretrain's sigmoid ``CrossEntropyLoss``.

    Args:
        reduction (str): ``'none'``, ``'mean'`` or ``'sum'``. Defaults to
            ``'mean'``.
        loss_weight (float): Multiplier of the loss, ``>= 0``. Defaults to
            1.0.
        use_sigmoid (bool): Must be True. Accepted so that replacing the
            ``type`` of a stock multi-label loss
            (``CrossEntropyLoss(use_sigmoid=True)``), e.g. with
            ``--cfg-options model.head.loss.type=HillLoss``, keeps working.

    Shape:
        - cls_score: ``(N, C)`` logits.
        - target: ``(N, C)`` in {-1, 0, 1} (soft targets in ``[0, 1]``
          where a loss says so), or ``(N,)`` class indices.
        - output: scalar, or with ``reduction='none'`` the ``(N, C)``
          element-wise losses (``(N,)`` for losses defined per sample).
    """

    loss_fn: FunctionalLoss
    hyperparameters: Dict[str, Hyperparameter] = {}
    #: Per-sample state the loss reads: names of ``(N, C)`` (or ``(C,)``)
    #: keyword tensors that a ``PartialLabel*Head`` looks up by
    #: ``sample_idx`` and passes to every call. Stateless losses read none.
    state_inputs: Tuple[str, ...] = ()
    #: The hook that writes that state (named in the errors).
    state_hook: Optional[str] = None

    def __init__(self,
                 *,
                 reduction: str = 'mean',
                 loss_weight: float = 1.0,
                 use_sigmoid: bool = True):
        super().__init__()
        check_use_sigmoid(type(self).__name__, use_sigmoid)
        self.reduction = check_reduction(reduction)
        self.loss_weight = LOSS_WEIGHT.validate('loss_weight', loss_weight)

    def loss_kwargs(self, cls_score: Tensor) -> Dict[str, Any]:
        """Hyperparameters passed to ``loss_fn`` at this call (tensors of
        ``cls_score``'s device where they change during training)."""
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
            **self.loss_kwargs(cls_score),
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
