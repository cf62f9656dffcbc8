r"""Numerically safe building blocks shared by the losses.

A loss is assembled by :func:`by_state` from *terms*, one per label state.
A term (a :data:`Term`) receives the logits as :class:`Logits` and returns
its value and its closed-form derivative by the logit together (a
:data:`ValueGrad`), element-wise and computed without autograd;
:func:`~.base.with_gradient` makes the result differentiable.
:class:`Logits` computes the functions of :math:`p = \sigma(x)` that
several terms need (:math:`p`, :math:`1 - p`, :math:`-\log p`,
:math:`-\log(1 - p)`) once, when a term first asks for one, so that the
terms of one loss share them: a loss costs about the transcendental
functions it needs, not one set per term.

Logs are ``softplus`` of the logit (``-log p = softplus(-x)``) rather than
``log(p + eps)``, so terms stay finite with finite gradients for logits of
+-100 in float32. The official implementations' ``-log(p + 1e-5)`` differs
from ``-log p`` by ``log(1 + 1e-5 / p)``: about 1e-5 / p for p >> 1e-5
(1e-3 at p = 0.01), and it caps the loss of a confident mistake at
``-log(1e-5) = 11.5`` where the exact form keeps growing.

On the CPU, :func:`by_state` evaluates the terms on blocks of rows of about
:data:`BLOCK_ELEMENTS` entries. Element-wise work on a large batch is bound
by memory traffic: the temporaries have the size of a block, not of the
batch, and stay in the processor's cache. The last operation of a term
writes into the loss's outputs when it can (see :data:`Term`), and Python
numbers enter operations as cached 0-dim tensors (:func:`operand`).
"""
import functools
from typing import Callable, Iterator, Optional, Sequence, Tuple, Union

import torch
import torch.nn.functional as F
from torch import Tensor

from .base import wants_grad, with_gradient

#: A term's value and its derivative by the logit (None when no gradient
#: is wanted), both element-wise.
ValueGrad = Tuple[Tensor, Optional[Tensor]]

#: About how many entries :func:`by_state` evaluates at a time on the CPU
#: (whole rows; at least one row).
BLOCK_ELEMENTS = 1 << 17


def operand(value: Union[float, Tensor], like: Tensor) -> Tensor:
    """A number as an operand of element-wise operations with ``like``: a
    0-dim tensor of its dtype and device (cached: never modify it). A
    Python number costs a conversion at every operation on the CPU, a few
    microseconds. A tensor is returned as it is."""
    if isinstance(value, Tensor):
        return value
    return _number(float(value), like.dtype, like.device)


@functools.lru_cache(maxsize=256)
def _number(value: float, dtype: torch.dtype, device: torch.device) -> Tensor:
    return torch.tensor(value, dtype=dtype, device=device)


#: Below this many entries the logs are computed with PyTorch's
#: ``softplus``, one operation each, rather than from
#: :attr:`Logits.log1p_exp` (four operations, then two each): the fixed cost
#: of an operation dominates small tensors.
SOFTPLUS_BELOW = 1 << 13


def softplus(z: Tensor,
             logits: 'Logits',
             sign: int = 1,
             out: Optional[Tensor] = None,
             fresh: bool = False) -> Tensor:
    """``softplus(sign * z)`` where ``|z| = |logits.x|``, into ``out`` when
    given (in place on ``z`` when it is a ``fresh`` temporary): from
    :attr:`Logits.log1p_exp` for large tensors, PyTorch's ``softplus`` for
    small ones (see :data:`SOFTPLUS_BELOW`). The choice depends on the size
    alone, so that the terms computing the same log of the same logits
    agree to the last bit."""
    if z.numel() < SOFTPLUS_BELOW:
        value = F.softplus(z if sign > 0 else z.neg())
    elif fresh:
        value = (z.clamp_(min=0) if sign > 0 else z.clamp_(max=0).neg_())
        value = value.add_(logits.log1p_exp)
    elif sign > 0:
        return torch.add(logits.log1p_exp, z.clamp(min=0), out=out)
    else:
        return torch.sub(logits.log1p_exp, z.clamp(max=0), out=out)
    return value if out is None else out.copy_(value)


class Logits:
    r"""Logits and the functions of :math:`p = \sigma(x)` that terms share,
    each computed once, when first asked for.

    * :attr:`prob`: :math:`p = \sigma(x)`;
    * :attr:`comp`: :math:`1 - p`, computed from :math:`p` (0 where
      :math:`p` rounds to 1, as in the official implementations and in the
      gradient of PyTorch's fused binary cross-entropy);
    * :attr:`nll_positive`: :math:`-\log p = \mathrm{softplus}(-x) =
      \log(1 + e^{-|x|}) - \min(x, 0)`;
    * :attr:`nll_negative`: :math:`-\log(1 - p) = \mathrm{softplus}(x) =
      \log(1 + e^{-|x|}) + \max(x, 0)`.

    The two logs share one exponential and one logarithm,
    :attr:`log1p_exp` (PyTorch's ``softplus`` computes each of a small
    tensor, see :func:`softplus`), and are exact for any finite logit.
    Terms read these tensors and must not modify them in place. :meth:`get`
    computes one into a given tensor (a term's output).

    Args:
        x (Tensor): Logits, any shape.
        part (Callable, optional): Maps a tensor that broadcasts to the
            whole ``(N, C)`` logits to its entries at ``x`` (see
            :meth:`part_of`), where ``x`` is a block of rows or a selection
            of entries of them. None: ``x`` is the whole.
        labels (Tensor, optional): The tri-state target at ``x``, for
            predicates that must not select observed labels (see
            :func:`probability_above`); None when no label is an observed
            negative (observed positives take their own term anyway).
    """

    def __init__(self,
                 x: Tensor,
                 part: Optional[Callable[[Tensor], Tensor]] = None,
                 labels: Optional[Tensor] = None):
        self.x = x
        self.labels = labels
        self._part = part
        self._values = {}

    def part_of(self, value: Union[float, Tensor]) -> Union[float, Tensor]:
        """The entries of ``value`` (a number, or a tensor that broadcasts
        to the whole logits, e.g. a per-sample ``(N, 1)`` weight) at these
        logits."""
        if self._part is None or not isinstance(value, Tensor):
            return value
        return self._part(value)

    def shifted(self, margin: float) -> 'Logits':
        """The logits ``x - margin`` (a new set of shared values)."""
        return Logits(self.x - margin, self._part, self.labels)

    def get(self, name: str, out: Optional[Tensor] = None) -> Tensor:
        """The shared value ``name`` (``'prob'``, ``'comp'``,
        ``'nll_positive'`` or ``'nll_negative'``), written into ``out``
        when given. Not computed yet, it is computed there and shared from
        there on: give as ``out`` only a tensor that keeps the value while
        other terms may read it."""
        value = self._values.get(name)
        if value is None:
            value = self._values[name] = getattr(self, '_' + name)(out)
            return value
        return value if out is None or out is value else out.copy_(value)

    prob = property(lambda self: self.get('prob'))
    comp = property(lambda self: self.get('comp'))
    nll_positive = property(lambda self: self.get('nll_positive'))
    nll_negative = property(lambda self: self.get('nll_negative'))

    def _prob(self, out: Optional[Tensor]) -> Tensor:
        return torch.sigmoid(self.x, out=out)

    def _comp(self, out: Optional[Tensor]) -> Tensor:
        prob = self.prob
        return torch.sub(operand(1, prob), prob, out=out)

    def _nll_positive(self, out: Optional[Tensor]) -> Tensor:
        return softplus(self.x, self, -1, out)

    def _nll_negative(self, out: Optional[Tensor]) -> Tensor:
        return softplus(self.x, self, 1, out)

    @functools.cached_property
    def log1p_exp(self) -> Tensor:
        r""":math:`\log(1 + e^{-|x|})`, in :math:`(0, \log 2]`: what the
        two logs share."""
        return self.x.abs().neg_().exp_().log1p_()


#: Where a term may write its value and derivative (see :data:`Term`).
Out = Optional[Tuple[Optional[Tensor], Optional[Tensor]]]

#: An element-wise term: ``term(logits, grad=..., out=None)`` returns its
#: value at the :class:`Logits` and, with ``grad=True``, its derivative (see
#: :data:`ValueGrad`): two distinct tensors computed from the logits (never
#: the logits themselves), which may be shared with ``logits`` or other
#: terms: read them, do not modify them in place. Given ``out``, a pair of
#: tensors of the logits' shape, a term may write its results there (and
#: return them) instead of allocating.
Term = Callable[..., ValueGrad]

#: Selects labels by their logits: returns a 0/1 mask in the logits'
#: dtype (see :func:`probability_above`).
Predicate = Callable[[Logits], Tensor]


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


def _is_one(factor: Union[float, Tensor]) -> bool:
    return not isinstance(factor, Tensor) and factor == 1


def _times(tensor: Tensor, factor: Union[float, Tensor],
           out: Optional[Tensor]) -> Tensor:
    """``tensor * factor``, into ``out`` when given; ``tensor`` itself for
    a factor of 1 and no ``out``."""
    if _is_one(factor):
        return tensor if out is None or out is tensor else out.copy_(tensor)
    return torch.mul(tensor, operand(factor, tensor), out=out)


def _shared_times(logits: Logits, name: str, factor: Union[float, Tensor],
                  out: Optional[Tensor]) -> Tensor:
    """The shared value ``name`` of ``logits`` (see :meth:`Logits.get`)
    times ``factor``, into ``out`` when given."""
    if _is_one(factor):
        return logits.get(name, out)
    return _times(logits.get(name), factor, out)


def _product(first: Tensor, second: Tensor, factor: Union[float, Tensor],
             out: Optional[Tensor]) -> Tensor:
    """``first * second * factor``, into ``out`` when given (which may be
    ``first``), in one pass for a number ``factor``."""
    if isinstance(factor, Tensor):
        return torch.mul(first, second, out=out).mul_(factor)
    if factor == 1:
        return torch.mul(first, second, out=out)
    return torch.addcmul(
        operand(0, first), first, second, value=factor, out=out)


def _outputs(out: Out) -> Tuple[Optional[Tensor], Optional[Tensor]]:
    return (None, None) if out is None else out


def positive_value_grad(logits: Logits,
                        gamma: float = 0.0,
                        margin: float = 0.0,
                        detach_focal_weight: bool = False,
                        scale: Union[float, Tensor] = 1.0,
                        grad: bool = True,
                        out: Out = None) -> ValueGrad:
    r"""The loss of a positive label with focal weight and logit margin
    (``gamma=0, margin=0`` is BCE's positive term, ``margin > 0`` the focal
    margin of Zhang et al.) and its derivative, without autograd, times
    ``scale`` (a number, or a tensor that broadcasts to the whole logits).

    With :math:`p_m = \sigma(x - m)`, :math:`q = 1 - p_m` and
    :math:`\ell_0 = -\log p_m = \mathrm{softplus}(m - x)`:

    .. math::
        \ell^+ = q^{\gamma} \ell_0, \qquad
        \frac{d\ell^+}{dx} = -q^{\gamma}\,[\gamma p_m \ell_0 + q],

    without the first term in the brackets when the focal weight is
    detached.
    """
    if margin:
        logits = logits.shifted(margin)
    scale = logits.part_of(scale)
    value_out, grad_out = _outputs(out)
    if gamma == 0:
        value = _shared_times(logits, 'nll_positive', scale, value_out)
        return value, (
            _shared_times(logits, 'comp', -scale, grad_out) if grad else None)
    q = logits.comp
    nll = logits.nll_positive
    weight = power(q, gamma)
    value = _product(weight, nll, scale, value_out)
    if not grad:
        return value, None
    if detach_focal_weight:
        return value, _product(q, weight, -scale, grad_out)
    # -w [gamma p_m l0 + q]
    slope = torch.addcmul(q, logits.prob, nll, value=gamma)
    return value, _product(slope, weight, -scale,
                           slope if grad_out is None else grad_out)


def negative_value_grad(logits: Logits,
                        gamma: float = 0.0,
                        clip: float = 0.0,
                        detach_focal_weight: bool = False,
                        scale: Union[float, Tensor] = 1.0,
                        grad: bool = True,
                        out: Out = None) -> ValueGrad:
    r"""The loss of a negative label with focal weight and probability
    shift (``gamma=0, clip=0`` is BCE's negative term, ``clip > 0`` ASL's
    probability shifting, Ben-Baruch et al., ICCV 2021) and its derivative,
    without autograd, times ``scale`` (a number, or a tensor that
    broadcasts to the whole logits).

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
    scale = logits.part_of(scale)
    value_out, grad_out = _outputs(out)
    if not clip:
        if gamma == 0:
            value = _shared_times(logits, 'nll_negative', scale, value_out)
            return value, (
                _shared_times(logits, 'prob', scale, grad_out)
                if grad else None)
        prob = logits.prob
        nll = logits.nll_negative
        weight = power(prob, gamma)
        value = _product(weight, nll, scale, value_out)
        if not grad:
            return value, None
        if detach_focal_weight:
            return value, _product(prob, weight, scale, grad_out)
        # w [gamma (1 - p) l0 + p]
        slope = torch.addcmul(prob, logits.comp, nll, value=gamma)
        return value, _product(slope, weight, scale,
                               slope if grad_out is None else grad_out)
    prob = logits.prob
    shifted = torch.sub(prob, operand(clip, prob)).clamp_(min=0)
    # 1 - shifted >= clip > 0: the logarithm is safe without an epsilon.
    nll = shifted.neg().log1p_().neg_()
    if gamma:
        weight = power(shifted, gamma)
        if not _is_one(scale):
            weight.mul_(operand(scale, weight))
        value = torch.mul(weight, nll, out=value_out)
    else:
        weight = scale
        value = _times(nll, scale, value_out)
    if not grad:
        return value, None
    # d/dp_c, then times dp_c/dx = p (1 - p) where p > c (0 elsewhere).
    slope = torch.sub(operand(1, shifted), shifted)
    if isinstance(weight, Tensor):
        slope = torch.div(weight, slope)
    else:
        slope = _times(slope.reciprocal_(), weight, slope)
    if gamma and not detach_focal_weight:
        if gamma >= 1:  # gamma p_c^(gamma - 1), finite at p_c = 0
            focal = power(shifted, gamma - 1)
        else:
            focal = torch.where(shifted > 0, shifted, torch.ones_like(shifted))
            focal = weight.div(focal)
        if not _is_one(scale) and gamma >= 1:
            focal.mul_(operand(scale, focal))
        slope.addcmul_(focal, nll, value=gamma)
    if not gamma:
        # Only a plain weight leaves a slope where the shift clamps p_c
        # (p_c^gamma and its derivative vanish there).
        slope.mul_(
            torch.gt(prob, operand(clip, prob), out=torch.empty_like(prob)))
    # p (1 - p) = p - p^2
    return value, torch.mul(
        slope, torch.addcmul(prob, prob, prob, value=-1), out=grad_out)


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


def mirrored_focal_value_grad(logits: Logits,
                              positive: Predicate,
                              gamma: float = 0.0,
                              detach_focal_weight: bool = False,
                              grad: bool = True,
                              out: Out = None) -> ValueGrad:
    r"""The negative focal term (:func:`negative_value_grad` without a
    clip) where the predicate ``positive`` is 0, and the positive one
    (:func:`positive_value_grad` without a margin) where it is 1, with the
    same :math:`\gamma`, evaluated together.

    The positive term of :math:`x` is the negative term of :math:`-x`,
    with the opposite derivative. With the mask :math:`m`, the signed
    logit :math:`z = (1 - 2m)\,x`, :math:`a = \sigma(z)` (:math:`p` or
    :math:`1 - p`), :math:`b = 1 - a` and :math:`\ell_0 =
    \mathrm{softplus}(z) = \log(1 + e^{-|x|}) + \max(z, 0)`:

    .. math::
        \ell = a^{\gamma} \ell_0, \qquad
        \frac{d\ell}{dx} = (1 - 2m)\, a^{\gamma}\,
            [\gamma b \ell_0 + a],

    the values of the two terms selected entry by entry, to the last bit,
    with about a third fewer passes over the entries.
    """
    value_out, grad_out = _outputs(out)
    x = logits.x
    prob, comp = logits.prob, logits.comp
    mask = positive(logits)
    base = torch.lerp(prob, comp, mask)  # a
    # softplus(z), into the value when it is the value (gamma = 0).
    nll = softplus(
        torch.addcmul(x, mask, x, value=-2, out=None if gamma else value_out),
        logits,
        fresh=True)
    if gamma:
        weight = power(base, gamma)
        value = torch.mul(weight, nll, out=value_out)
    else:
        value = nll
    if not grad:
        return value, None
    if not gamma:
        slope = base
    elif detach_focal_weight:
        slope = weight.mul_(base)
    else:
        other = torch.lerp(comp, prob, mask)  # b
        slope = torch.addcmul(base, other, nll, value=gamma).mul_(weight)
    return value, torch.addcmul(slope, slope, mask, value=-2, out=grad_out)


def scaled(term: Term, factor: Union[float, Tensor]) -> Term:
    """``factor`` times ``term``; a tensor factor broadcasts to the whole
    ``(N, C)`` logits (e.g. a per-sample ``(N, 1)`` weight). The terms of
    this module take the factor as their ``scale``, which costs them less
    than a multiplication of their results."""
    if _is_one(factor):
        return term
    if isinstance(term, functools.partial) and term.func in _SCALABLE:
        scale = term.keywords.get('scale', 1.0)
        return functools.partial(
            term, scale=factor if _is_one(scale) else scale * factor)

    def scaled_term(logits: Logits, grad: bool, out: Out = None) -> ValueGrad:
        value, slope = term(logits, grad=grad)
        weight = logits.part_of(factor)
        value_out, grad_out = _outputs(out)
        return (_times(value, weight, value_out),
                None if slope is None else _times(slope, weight, grad_out))

    return scaled_term


def summed(first: Term, second: Term) -> Term:
    """The sum of two terms, as a term (e.g. ROLE's fit to the other half's
    estimates plus an observed label's log-loss)."""

    def summed_term(logits: Logits, grad: bool, out: Out = None) -> ValueGrad:
        value_out, grad_out = _outputs(out)
        value, slope = first(logits, grad=grad)
        other_value, other_slope = second(logits, grad=grad)
        value = torch.add(value, other_value, out=value_out)
        if not grad:
            return value, None
        return value, torch.add(slope, other_slope, out=grad_out)

    return summed_term


def probability_above(threshold: float) -> Predicate:
    """The unannotated labels whose probability :math:`\\sigma(x)` exceeds
    ``threshold`` (strictly), as a :data:`Predicate`: a threshold in
    ``[0, 1]`` never selects an observed negative of
    :attr:`Logits.labels` (its probability is compared less 2)."""

    def predicate(logits: Logits) -> Tensor:
        prob = logits.prob
        if logits.labels is not None:
            # p - 2 t^2: p itself for t = 0, at most -1 otherwise.
            labels = logits.labels
            prob = torch.addcmul(prob, labels, labels, value=-2)
        return torch.gt(
            prob, operand(threshold, prob), out=torch.empty_like(prob))

    return predicate


def given_mask(mask: Tensor) -> Predicate:
    """The labels where ``mask`` (a 0/1 tensor in the logits' dtype that
    broadcasts to the whole logits, decided beforehand, e.g. Large Loss's
    selection) is 1, as a :data:`Predicate`. The caller keeps observed
    negatives out of it."""
    return lambda logits: logits.part_of(mask)


def has_value(values: Tensor) -> Predicate:
    """The unannotated labels where ``values`` (a tensor that broadcasts to
    the whole logits, e.g. pseudo-labels with NaN where there is none) is
    not NaN, as a :data:`Predicate` (never an observed negative of
    :attr:`Logits.labels`)."""

    def predicate(logits: Logits) -> Tensor:
        part = logits.part_of(values)
        # x == x is false exactly for NaN.
        mask = torch.eq(part, part, out=torch.empty_like(logits.x))
        if logits.labels is not None:
            # times 1 - t^2: 0 at observed labels.
            labels = logits.labels
            mask.addcmul_(mask, labels * labels, value=-1)
        return mask

    return predicate


def by_state(
    x: Tensor,
    target: Tensor,
    unannotated: Term,
    positive: Term,
    negative: Optional[Term] = None,
    overrides: Sequence[Tuple[Predicate, Term]] = ()
) -> Tensor:
    """The loss of each label by its state, differentiable in ``x``.

    ``unannotated`` where ``target == 0``, except where a predicate of
    ``overrides`` selects the label (the last one that does wins; e.g.
    SPLC's pseudo-positives); ``positive`` where ``target == 1``;
    ``negative`` where ``target == -1`` (``unannotated``'s term when None;
    predicates must not select these labels, see :attr:`Logits.labels`).
    Every term computes its derivative with its value
    (:func:`~.base.with_gradient`) from the values of :class:`Logits` that
    they share.

    The unannotated and overriding terms, which apply to most labels, are
    computed on every entry and selected entry by entry, by blocks of rows
    (:func:`row_blocks`); so are the observed states' terms on
    accelerators. On the CPU an observed state's term is computed only on
    its entries when these are few (one positive in hundreds of labels),
    and a state without any entry is skipped.

    Args:
        x (Tensor): Logits ``(N, C)``.
        target (Tensor): Checked tri-state target of the same shape.
        unannotated, positive, negative (Term): The terms.
        overrides (Sequence[tuple[Predicate, Term]]): Predicates that
            select unannotated labels, and the terms of those labels.
    """
    return with_gradient(
        x,
        *by_state_value_grad(x, target, unannotated, positive, negative,
                             overrides))


def by_state_value_grad(
    x: Tensor,
    target: Tensor,
    unannotated: Term,
    positive: Term,
    negative: Optional[Term] = None,
    overrides: Sequence[Tuple[Predicate, Term]] = ()
) -> ValueGrad:
    """:func:`by_state`'s loss of each label and its derivative by the
    logit, computed without autograd (the derivative None when ``x`` wants
    no gradient, see :func:`~.base.wants_grad`)."""
    want = wants_grad(x)
    with torch.no_grad():
        dense, sparse = [], []
        present = _observed_states(target)
        for state, term, here, other in zip((1, -1), (positive, negative),
                                            present, present[::-1]):
            if term is None or not here:
                continue
            if x.device.type == 'cpu':
                # Non-zero exactly where target == state (the target is in
                # {-1, 0, 1}; itself when the other state is absent).
                mask = target
                if other:
                    mask = (
                        target.clamp(min=0) if state > 0 else target.clamp(
                            max=0))
                if _few(mask):
                    sparse.append((_nonzero(mask), term))
                    continue
            dense.append((state, term))
        blocks = list(row_blocks(x))
        value = grad = None
        if len(blocks) > 1:
            value = torch.empty_like(x)
            grad = torch.empty_like(x) if want else None
        for rows in blocks:
            block = Logits(x[rows], functools.partial(_rows_of, rows=rows),
                           target[rows] if present[1] else None)
            selections = [(predicate(block), term)
                          for predicate, term in overrides]
            selections += [(_state_mask(target[rows], state), term)
                           for state, term in dense]
            if value is None:  # one block: the terms' tensors are the result
                value, grad = _select(block, unannotated, selections, want)
            else:
                _select(block, unannotated, selections, want, value[rows],
                        grad[rows] if want else None)
        for where, term in sparse:
            part, slope = term(
                Logits(
                    x[where],
                    functools.partial(_entries_of, shape=x.shape,
                                      where=where)),
                grad=want)
            value[where] = part
            if want:
                grad[where] = slope
    return value, grad


def _select(block: Logits,
            unannotated: Term,
            selections: Sequence[Tuple[Tensor, Term]],
            want: bool,
            value: Optional[Tensor] = None,
            grad: Optional[Tensor] = None) -> ValueGrad:
    """The unannotated term of ``block``, replaced by each selection's term
    where its 0/1 mask is 1, in order: written into ``value`` and ``grad``
    when given, else into the unannotated term's own tensors (which nothing
    else may hold afterwards). ``torch.lerp`` with a weight of exactly 0 or
    1 returns one of its operands exactly (for finite operands)."""
    outputs = (value, grad)
    written = unannotated(
        block, grad=want, out=None if value is None else outputs)
    if value is None:
        outputs = written
    for out, new in zip(outputs, written):
        if out is not None and new is not out:
            out.copy_(new)
    # The terms may read shared values written into the outputs: every
    # term before the first selection changes them.
    chosen = [term(block, grad=want) for _, term in selections]
    for (mask, _), values in zip(selections, chosen):
        for out, new in zip(outputs, values):
            if out is not None:
                out.lerp_(new, mask)
    return outputs


def _rows_of(value: Tensor, rows: slice) -> Tensor:
    """The block ``rows`` of a tensor broadcasting to ``(N, C)``."""
    if value.dim() == 2 and value.size(0) != 1:
        return value[rows]
    return value


def _entries_of(value: Tensor, shape: torch.Size, where: tuple) -> Tensor:
    """The entries ``where`` of a tensor broadcasting to ``shape``."""
    return value.expand(shape)[where]


def _state_mask(target: Tensor, state: int) -> Tensor:
    """1 where ``target == state``, else 0, in the target's dtype."""
    return torch.eq(
        target, operand(state, target), out=torch.empty_like(target))


def row_blocks(x: Tensor) -> Iterator[slice]:
    """Slices of the rows of ``x`` to evaluate at a time: blocks of about
    :data:`BLOCK_ELEMENTS` entries on the CPU, all rows elsewhere."""
    num = x.size(0)
    if x.device.type != 'cpu':
        yield slice(0, num)
        return
    step = max(1, BLOCK_ELEMENTS // max(x.size(1), 1))
    for start in range(0, num, step):
        yield slice(start, start + step)


def _observed_states(target: Tensor) -> Tuple[bool, bool]:
    """Whether some label is an observed positive, and whether some label
    is an observed negative: asked on the CPU only (elsewhere the answer
    would synchronise with the host, and both are assumed)."""
    if target.numel() == 0:
        return False, False
    if target.device.type != 'cpu':
        return True, True
    low, high = torch.aminmax(target)
    return float(high) > 0, float(low) < 0


def _few(mask: Tensor) -> bool:
    """Whether a term is cheaper on the entries of ``mask`` only: when they
    are at most an eighth of all. ``mask`` is a CPU tensor whose non-zero
    entries are all 1 or all -1."""
    return abs(float(mask.sum())) * 8 <= mask.numel()


def _nonzero(mask: Tensor) -> Tuple[Tensor, Tensor]:
    """``mask.nonzero(as_tuple=True)`` of a 2-D CPU tensor with few
    non-zero entries. From :data:`BLOCK_ELEMENTS` entries on, about three
    times faster: the entries are scanned as booleans eight at a time (as
    64-bit words), then the few words with a non-zero byte are unpacked
    (smaller masks take fewer operations directly)."""
    size = mask.numel()
    if size < BLOCK_ELEMENTS:
        return mask.nonzero(as_tuple=True)
    flat = mask.reshape(-1)
    packed = torch.empty(-(-size // 8) * 8, dtype=torch.bool)
    packed[size:] = False
    packed[:size] = flat
    words = packed.view(torch.int64).nonzero().squeeze(1)
    local = packed.view(-1, 8)[words].nonzero()
    index = words[local[:, 0]].mul_(8).add_(local[:, 1])
    columns = mask.size(1)
    return (torch.div(index, columns,
                      rounding_mode='floor'), index.remainder_(columns))


def soft_bce_value_grad(logits: Logits,
                        soft_target: Union[float, Tensor],
                        scale: Union[float, Tensor] = 1.0,
                        grad: bool = True,
                        out: Out = None) -> ValueGrad:
    r"""Binary cross-entropy against a soft target :math:`s`,
    :math:`-[s \log p + (1 - s) \log(1 - p)]`, and its derivative
    :math:`p - s`, times ``scale``. ``soft_target`` is a number or a tensor
    that broadcasts to the whole logits, with finite values.

    The value is :math:`\mathrm{softplus}(x) - s x` for a number
    :math:`s \le 1/2` and :math:`\mathrm{softplus}(-x) + (1 - s) x` for a
    larger one, the forms without cancellation; a tensor ``s`` takes
    :math:`\max(x, 0) - s x + \log(1 + e^{-|x|})`, exact for
    :math:`s \in \{0, 1\}`.
    """
    scale = logits.part_of(scale)
    value_out, grad_out = _outputs(out)
    if isinstance(soft_target, Tensor):
        soft_target = logits.part_of(soft_target)
        # max(x, 0) - s x + log(1 + exp(-|x|)), in this order: exact
        # for s = 0 and s = 1 at any logit.
        value = torch.addcmul(
            logits.x.clamp(min=0),
            soft_target,
            logits.x,
            value=-1,
            out=value_out).add_(logits.log1p_exp)
        value = _times(value, scale, value)
    else:
        if soft_target <= 0.5:
            name, shift = 'nll_negative', -soft_target
        else:
            name, shift = 'nll_positive', 1 - soft_target
        if shift:
            value = torch.add(
                logits.get(name), logits.x, alpha=shift, out=value_out)
            value = _times(value, scale, value)
        else:
            value = _shared_times(logits, name, scale, value_out)
    if not grad:
        return value, None
    if isinstance(soft_target, Tensor) or soft_target:
        prob = logits.prob
        slope = torch.sub(prob, operand(soft_target, prob), out=grad_out)
        return value, _times(slope, scale, slope)
    return value, _shared_times(logits, 'prob', scale, grad_out)


def zero_value_grad(logits: Logits,
                    grad: bool = True,
                    out: Out = None) -> ValueGrad:
    """No loss: value and derivative 0 (e.g. a rejected label)."""
    value_out, grad_out = _outputs(out)
    value = (
        torch.zeros_like(logits.x) if value_out is None else value_out.zero_())
    if not grad:
        return value, None
    return value, (
        torch.zeros_like(logits.x) if grad_out is None else grad_out.zero_())


def hill_negative_value_grad(logits: Logits,
                             lamb: float,
                             grad: bool = True,
                             out: Out = None) -> ValueGrad:
    r"""Hill's negative term :math:`(\lambda - p) p^2` and its derivative
    :math:`(2\lambda - 3p)\, p^2 (1 - p)`."""
    value_out, grad_out = _outputs(out)
    prob = logits.prob
    square = prob * prob
    value = torch.mul(
        torch.sub(operand(lamb, prob), prob), square, out=value_out)
    if not grad:
        return value, None
    slope = torch.addcmul(square, square, prob, value=-1)  # p^2 (1 - p)
    return value, torch.mul(
        slope,
        torch.add(operand(2 * lamb, prob), prob, alpha=-3),
        out=grad_out)


def squared_probability_value_grad(logits: Logits,
                                   grad: bool = True,
                                   out: Out = None) -> ValueGrad:
    r"""The squared error of a negative, :math:`p^2`, and its derivative
    :math:`2 p^2 (1 - p)`."""
    value_out, grad_out = _outputs(out)
    prob = logits.prob
    value = torch.mul(prob, prob, out=value_out)
    if not grad:
        return value, None
    return value, torch.addcmul(
        value, value, prob, value=-1, out=grad_out).mul_(2)


def entropy_value_grad(logits: Logits,
                       scale: Union[float, Tensor] = 1.0,
                       grad: bool = True,
                       out: Out = None) -> ValueGrad:
    r"""The entropy of a Bernoulli(p) in nats from the logit,
    :math:`H = \mathrm{softplus}(x) - p x`, and its derivative
    :math:`-x p (1 - p)`, times ``scale``."""
    scale = logits.part_of(scale)
    value_out, grad_out = _outputs(out)
    prob = logits.prob
    value = torch.addcmul(
        logits.nll_negative, prob, logits.x, value=-1, out=value_out)
    if not _is_one(scale):
        value.mul_(operand(scale, value))
    if not grad:
        return value, None
    slope = torch.addcmul(prob, prob, prob, value=-1)  # p (1 - p)
    slope = torch.mul(slope, logits.x, out=grad_out)
    return value, slope.mul_(operand(-scale, slope))


#: The terms that take a ``scale`` (see :func:`scaled`).
_SCALABLE = (positive_value_grad, negative_value_grad, soft_bce_value_grad,
             entropy_value_grad)
