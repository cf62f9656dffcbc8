"""Numerically safe building blocks shared by the losses.

All functions work element-wise on logits ``x`` (``p = sigmoid(x)``). The
``*_value_grad`` functions return a term's value and its closed-form
derivative together (a :data:`ValueGrad`), computed without autograd;
:func:`by_state` assembles a loss from them, one term per label state,
and :func:`~.base.with_gradient` makes the result differentiable. Logs
are ``softplus`` of the logit (``-log p = softplus(-x)``) rather than
``log(p + eps)``, so terms stay finite with finite gradients for logits of
+-100 in float32. The official implementations' ``-log(p + 1e-5)`` differs
from ``-log p`` by ``log(1 + 1e-5 / p)``: about 1e-5 / p for p >> 1e-5
(1e-3 at p = 0.01), and it caps the loss of a confident mistake at
``-log(1e-5) = 11.5`` where the exact form keeps growing.
"""
import functools
from typing import Callable, Optional, Sequence, Tuple, Union

import torch
import torch.nn.functional as F
from torch import Tensor

from .base import wants_grad, with_gradient

#: A term's value and its derivative by the logit (None when no gradient
#: is wanted), both element-wise.
ValueGrad = Tuple[Tensor, Optional[Tensor]]


def power(base: Tensor, exponent: float) -> Tensor:
    """``base ** exponent`` as a fresh tensor; small integer exponents (the
    focal parameters 1 to 4) by multiplication, several times faster on
    the CPU than the general power."""
    if exponent == 1:
        return base.clone()
    if exponent in (2, 3, 4):
        square = base * base
        if exponent == 3:
            return square.mul_(base)
        return square.mul_(square) if exponent == 4 else square
    return base.pow(exponent)


def positive_value_grad(x: Tensor,
                        gamma: float = 0.0,
                        margin: float = 0.0,
                        detach_focal_weight: bool = False,
                        grad: bool = True) -> ValueGrad:
    r""":func:`positive_term` and its derivative, without autograd.

    With :math:`q = 1 - p_m = \sigma(m - x)` and
    :math:`\ell_0 = -\log p_m = \mathrm{softplus}(m - x)`:

    .. math::
        \ell^+ = q^{\gamma} \ell_0, \qquad
        \frac{d\ell^+}{dx} = -q^{\gamma}\,[\gamma (1 - q) \ell_0 + q],

    without the first term in the brackets when the focal weight is
    detached.
    """
    flipped = margin - x if margin else -x
    q = torch.sigmoid(flipped)
    nll = F.softplus(flipped)
    if gamma == 0:
        return nll, (q.neg_() if grad else None)
    weight = power(q, gamma)
    value = weight * nll
    if not grad:
        return value, None
    if detach_focal_weight:
        return value, weight.mul_(q).neg_()
    # -w [gamma (1 - q) l0 + q], in place on fresh tensors.
    slope = torch.rsub(q, 1).mul_(nll).mul_(gamma).add_(q)
    return value, slope.mul_(weight).neg_()


def negative_value_grad(x: Tensor,
                        gamma: float = 0.0,
                        clip: float = 0.0,
                        detach_focal_weight: bool = False,
                        grad: bool = True) -> ValueGrad:
    r""":func:`negative_term` and its derivative, without autograd.

    Without a clip, with :math:`\ell_0 = -\log(1 - p) =
    \mathrm{softplus}(x)`:

    .. math::
        \ell^- = p^{\gamma} \ell_0, \qquad
        \frac{d\ell^-}{dx} = p^{\gamma}\,[\gamma (1 - p) \ell_0 + p].

    With a clip :math:`c`, :math:`p_c = \max(p - c, 0)` and
    :math:`\ell^- = -p_c^{\gamma}\log(1 - p_c)`; its derivative is
    :math:`p (1 - p)\,[p_c^{\gamma} / (1 - p_c) - \gamma
    p_c^{\gamma - 1} \log(1 - p_c)]` where :math:`p > c` and 0 elsewhere.
    Detaching the focal weight drops the terms with :math:`\gamma`.
    """
    prob = torch.sigmoid(x)
    if not clip:
        nll = F.softplus(x)
        if gamma == 0:
            return nll, (prob if grad else None)
        weight = power(prob, gamma)
        value = weight * nll
        if not grad:
            return value, None
        if detach_focal_weight:
            return value, weight.mul_(prob)
        # w [gamma (1 - p) l0 + p], in place on fresh tensors.
        slope = torch.rsub(prob, 1).mul_(nll).mul_(gamma).add_(prob)
        return value, slope.mul_(weight)
    shifted = (prob - clip).clamp(min=0)
    # 1 - shifted >= clip > 0: the logarithm is safe without an epsilon.
    nll = -torch.log1p(-shifted)
    weight = power(shifted, gamma) if gamma else torch.ones_like(shifted)
    value = weight * nll
    if not grad:
        return value, None
    # d/dp_c, then times dp_c/dx = p (1 - p) where p > c (0 elsewhere).
    slope = weight / torch.rsub(shifted, 1)
    if gamma and not detach_focal_weight:
        if gamma >= 1:  # gamma p_c^(gamma - 1), finite at p_c = 0
            slope.addcmul_(power(shifted, gamma - 1), nll, value=gamma)
        else:
            safe = torch.where(shifted > 0, shifted, torch.ones_like(shifted))
            slope.addcmul_(weight.div(safe), nll, value=gamma)
    slope.mul_(torch.addcmul(prob, prob, prob, value=-1))
    if gamma == 0 or detach_focal_weight:
        # Only these keep a non-zero slope where the shift clamps p_c.
        slope.mul_(prob > clip)
    return value, slope


def positive_term(x: Tensor,
                  gamma: float = 0.0,
                  margin: float = 0.0,
                  detach_focal_weight: bool = False) -> Tensor:
    r"""Loss of a positive label, with focal weight and logit margin.

    .. math::
        \ell^+(x) = -(1 - p_m)^{\gamma} \log p_m, \qquad
        p_m = \sigma(x - m).

    ``gamma=0, margin=0`` is BCE's positive term; ``margin > 0`` is the focal
    margin of Zhang et al. (Hill / SPLC). Differentiable through
    :func:`positive_value_grad`'s closed-form derivative.
    """
    want = wants_grad(x)
    with torch.no_grad():
        value, grad = positive_value_grad(x, gamma, margin,
                                          detach_focal_weight, want)
    return with_gradient(x, value, grad)


def negative_term(x: Tensor,
                  gamma: float = 0.0,
                  clip: float = 0.0,
                  detach_focal_weight: bool = False) -> Tensor:
    r"""Loss of a negative label, with focal weight and probability shift.

    .. math::
        \ell^-(x) = -p_c^{\gamma} \log(1 - p_c), \qquad
        p_c = \max(p - c, 0).

    ``gamma=0, clip=0`` is BCE's negative term; ``clip > 0`` is ASL's
    probability shifting (Ben-Baruch et al., ICCV 2021). Differentiable
    through :func:`negative_value_grad`'s closed-form derivative.
    """
    want = wants_grad(x)
    with torch.no_grad():
        value, grad = negative_value_grad(x, gamma, clip, detach_focal_weight,
                                          want)
    return with_gradient(x, value, grad)


#: An element-wise term: ``term(x, grad=...)`` returns its value at the logits
#: ``x`` and, with ``grad=True``, its derivative (see :data:`ValueGrad`), as
#: fresh tensors that the caller may overwrite.
Term = Callable[[Tensor, bool], ValueGrad]


def focal_terms(gamma_pos: float = 0.0,
                gamma_neg: float = 0.0,
                margin: float = 0.0,
                clip: float = 0.0,
                detach_focal_weight: bool = False) -> Tuple[Term, Term]:
    """The positive and negative terms of the focal family (BCE, focal,
    ASL, focal margin) with these parameters, as :data:`Term` functions
    (see :func:`positive_value_grad` and :func:`negative_value_grad`)."""
    positive = functools.partial(
        positive_value_grad,
        gamma=gamma_pos,
        margin=margin,
        detach_focal_weight=detach_focal_weight)
    negative = functools.partial(
        negative_value_grad,
        gamma=gamma_neg,
        clip=clip,
        detach_focal_weight=detach_focal_weight)
    return positive, negative


def scaled(term: Term, factor: Union[float, Tensor]) -> Term:
    """``factor`` times ``term`` (a tensor factor must broadcast to the
    entries the term is computed on)."""
    if not isinstance(factor, Tensor) and factor == 1:
        return term

    def scaled_term(x: Tensor, grad: bool) -> ValueGrad:
        # Terms return fresh tensors: scale them in place.
        value, slope = term(x, grad=grad)
        return value.mul_(factor), (None
                                    if slope is None else slope.mul_(factor))

    return scaled_term


def by_state(
    x: Tensor,
    target: Tensor,
    unannotated: Term,
    positive: Term,
    negative: Optional[Term] = None,
    overrides: Sequence[Tuple[Tensor, Term]] = ()
) -> Tensor:
    """The loss of each label by its state, differentiable in ``x``.

    ``positive`` where ``target == 1``, ``negative`` where ``target == -1``
    (``unannotated``'s term when None) and ``unannotated`` elsewhere; then
    each ``(mask, term)`` of ``overrides`` where its mask is true (e.g.
    SPLC's pseudo-positives). The unannotated term, which applies to most
    entries, is computed on every entry; on the CPU the others only on the
    entries they apply to when these are few (one positive in hundreds of
    labels), and each term computes its derivative with its value
    (:func:`~.base.with_gradient`).

    Args:
        x (Tensor): Logits ``(N, C)``.
        target (Tensor): Checked tri-state target of the same shape.
        unannotated, positive, negative (Term): The terms.
        overrides (Sequence[tuple[Tensor, Term]]): Boolean ``(N, C)``
            masks and their terms, applied in order.
    """
    want = wants_grad(x)
    with torch.no_grad():
        value, grad = unannotated(x, grad=want)
        states = [(target > 0, positive)]
        if negative is not None:
            states.append((target < 0, negative))
        for mask, term in [*states, *overrides]:
            if _few(mask):
                where = mask.nonzero(as_tuple=True)
                part, slope = term(x[where], grad=want)
                value[where] = part
                if want:
                    grad[where] = slope
            else:
                part, slope = term(x, grad=want)
                value = torch.where(mask, part, value)
                if want:
                    grad = torch.where(mask, slope, grad)
    return with_gradient(x, value, grad)


def _few(mask: Tensor) -> bool:
    """Whether a term is cheaper on the entries of ``mask`` only: on the CPU
    when they are at most an eighth of all. On accelerators every term is
    computed on every entry: selecting entries would synchronise with the
    host, and element-wise work is cheap there."""
    if mask.device.type != 'cpu':
        return False
    return int(torch.count_nonzero(mask)) * 8 <= mask.numel()


def soft_bce_value_grad(x: Tensor, soft_target: float,
                        grad: bool) -> ValueGrad:
    r"""Binary cross-entropy against a constant soft target :math:`s`,
    :math:`-[s \log p + (1 - s) \log(1 - p)]`, and its derivative
    :math:`p - s`.

    The value is :math:`\mathrm{softplus}(x) - s x` for :math:`s \le 1/2`
    and :math:`\mathrm{softplus}(-x) + (1 - s) x` otherwise, the forms
    without cancellation.
    """
    if soft_target <= 0.5:
        value = F.softplus(x)
        if soft_target:
            value.add_(x, alpha=-soft_target)
    else:
        value = F.softplus(-x)
        if soft_target != 1:
            value.add_(x, alpha=1 - soft_target)
    if not grad:
        return value, None
    return value, torch.sigmoid(x).sub_(soft_target)


def hill_negative_value_grad(x: Tensor, lamb: float, grad: bool) -> ValueGrad:
    r"""Hill's negative term :math:`(\lambda - p) p^2` and its derivative
    :math:`(2\lambda - 3p)\, p^2 (1 - p)`."""
    prob = torch.sigmoid(x)
    square = prob * prob
    value = torch.rsub(prob, lamb).mul_(square)
    if not grad:
        return value, None
    # In place on fresh tensors: each step is one pass, no allocation.
    slope = torch.addcmul(square, square, prob, value=-1)  # p^2 (1 - p)
    return value, slope.mul_(prob.mul_(-3).add_(2 * lamb))


def squared_probability_value_grad(x: Tensor, grad: bool) -> ValueGrad:
    r"""The squared error of a negative, :math:`p^2`, and its derivative
    :math:`2 p^2 (1 - p)`."""
    prob = torch.sigmoid(x)
    value = prob * prob
    if not grad:
        return value, None
    return value, torch.addcmul(value, value, prob, value=-1).mul_(2)


def entropy_value_grad(x: Tensor, grad: bool) -> ValueGrad:
    r"""The entropy of a Bernoulli(p) in nats from the logit,
    :math:`H = \mathrm{softplus}(x) - p x`, and its derivative
    :math:`-x p (1 - p)`."""
    prob = torch.sigmoid(x)
    value = torch.addcmul(F.softplus(x), prob, x, value=-1)
    if not grad:
        return value, None
    # -x p (1 - p), in place on a fresh tensor.
    return value, torch.addcmul(prob, prob, prob, value=-1).mul_(x).neg_()


def soft_bce(x: Tensor,
             soft_target: Tensor,
             weight: Optional[Tensor] = None) -> Tensor:
    r"""Binary cross-entropy against a soft target ``s``:
    :math:`-[s\log p + (1-s)\log(1-p)]`, optionally weighted."""
    loss = F.binary_cross_entropy_with_logits(
        x, soft_target.to(x), reduction='none')
    return loss if weight is None else loss * weight
