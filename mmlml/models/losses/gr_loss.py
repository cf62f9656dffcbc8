"""Generalized Robust Loss (GR Loss).

Chen et al., "Boosting Single Positive Multi-label Classification with
Generalized Robust Loss", IJCAI 2024 (official code: GRLoss).
"""
import functools
from typing import Callable, Dict, Optional, Tuple, Union

import torch
from torch import Tensor

from mmlml.registry import MODELS
from .base import (PartialLabelLoss, TrainingProgress, partial_label_loss,
                   with_gradient)
from .fused_kernel import FusedKernel, expm1_nonpositive, sigmoid_and_logs
from .hyperparameters import (Choice, Hyperparameter, Integer, Real, RealTuple,
                              hyperparameters_of)
from .terms import (Logits, Out, Term, ValueGrad, by_state,
                    by_state_value_grad, negative_value_grad, operand)

__all__ = ['GRLoss', 'gr_loss', 'gr_loss_with_weights', 'gce_term']

SCHEDULES = ('official', 'paper')
ROBUSTNESS = dict(
    q1=Real(0.0, low=0), q2=Real(0.01, low=0), q3=Real(1.0, low=0))


def gce_term(log_prob: Tensor, q: float) -> Tensor:
    r"""Generalized cross-entropy term :math:`(1 - P^q) / q` from
    :math:`\log P`.

    Computed as ``-expm1(q * log_prob) / q``, exact for small ``q`` and
    finite for any finite ``log_prob``; ``q = 0`` is its limit
    :math:`-\log P` (cross-entropy), ``q = 1`` is the MAE :math:`1 - P`.
    """
    if q == 0:
        return -log_prob
    return -torch.expm1(q * log_prob) / q


@partial_label_loss(k=Hyperparameter(), v=Hyperparameter(), **ROBUSTNESS)
def gr_loss_with_weights(cls_score: Tensor, target: Tensor,
                         k: Union[Tensor, float], v: Union[Tensor, float],
                         q1: float, q2: float, q3: float) -> Tensor:
    r"""GR Loss with the pseudo-label ``k`` and the weight ``v`` of
    unannotated labels given explicitly.

    .. math::
        \ell = \begin{cases}
        \mathcal{L}_{q_1}(p) & t = 1,\\
        v\,[k\,\mathcal{L}_{q_2}(p) + (1 - k)\,\mathcal{L}_{q_3}(1 - p)]
            & t = 0,\\
        -\log(1 - p) & t = -1,
        \end{cases}
        \qquad \mathcal{L}_q(P) = \frac{1 - P^q}{q}.

    With ``k = 0``, ``v = 1`` and ``q3 -> 0`` this is the assume-negative
    BCE. :func:`gr_loss` computes ``k`` and ``v`` from the predictions.

    Args:
        cls_score (Tensor): Logits ``(N, C)``.
        target (Tensor): Tri-state ``(N, C)`` target or ``(N,)`` indices.
        k (Tensor | float): Soft pseudo-label of the unannotated labels,
            broadcastable to ``(N, C)``. Pass a detached tensor: the paper
            stops its gradient.
        v (Tensor | float): Weight of the unannotated labels, broadcastable
            to ``(N, C)``; detached too. No gradient flows into ``k`` and
            ``v``.
        q1 (float): Robustness of the observed-positive term (``0`` is the
            cross-entropy limit, ``1`` the MAE). Defaults to 0.0.
        q2 (float): Robustness of the pseudo-positive term. Defaults to
            0.01.
        q3 (float): Robustness of the negative term. Defaults to 1.0.
        weight, reduction, avg_factor: See
            :func:`~.base.reduce_loss`.
    """
    k, v = (
        value.detach().to(cls_score.dtype)
        if isinstance(value, Tensor) else value for value in (k, v))
    return by_state(
        cls_score, target,
        _unannotated_term(
            lambda logits: (logits.part_of(k), logits.part_of(v)), q2, q3),
        *_observed_terms(q1))


def _observed_terms(q1: float) -> Tuple[Term, Term]:
    """GR's terms of the observed positives and negatives."""
    return (functools.partial(gce_value_grad, q=q1,
                              positive=True), negative_value_grad)


def _unannotated_term(weights: Callable[[Logits], Tuple[Union[Tensor, float],
                                                        Union[Tensor, float]]],
                      q2: float, q3: float) -> Term:
    """GR's term of the unannotated labels, whose ``k, v = weights(logits)``
    are computed from the probabilities the terms share (without
    gradient)."""

    def unannotated(logits: Logits, grad: bool, out: Out = None) -> ValueGrad:
        k, v = weights(logits)
        value_out, grad_out = (None, None) if out is None else out
        pseudo, pseudo_slope = gce_value_grad(logits, q2, True, grad)
        negative, negative_slope = gce_value_grad(logits, q3, False, grad)
        # v [k a + (1 - k) b] = v lerp(b, a, k).
        value = torch.lerp(negative, pseudo, k, out=value_out).mul_(v)
        if not grad:
            return value, None
        return value, torch.lerp(
            negative_slope, pseudo_slope, k, out=grad_out).mul_(v)

    return unannotated


def gce_value_grad(logits: Logits,
                   q: float = 0.0,
                   positive: bool = True,
                   grad: bool = True) -> ValueGrad:
    r""":math:`\mathcal{L}_q(P)` (:func:`gce_term`) of :math:`P = p`
    (``positive``) or :math:`P = 1 - p`, and its derivative by the logit,
    :math:`\mp P^q (1 - P)`, as a :data:`~.terms.Term`.

    ``q = 1`` (MAE, :math:`1 - P`) needs no logarithm.
    """
    prob = logits.prob
    if q == 1:
        value = logits.comp if positive else prob
        if not grad:
            return value, None
        slope = prob * logits.comp
        return value, (slope.neg_() if positive else slope)
    # log P = -softplus(-x) for P = p, -softplus(x) for P = 1 - p.
    nll = logits.nll_positive if positive else logits.nll_negative
    if q == 0:
        value, excess = nll, None
    else:
        # P^q - 1 = expm1(q log P), and the value -(P^q - 1) / q.
        excess = torch.mul(nll, operand(-q, nll)).expm1_()
        value = torch.mul(excess, operand(-1 / q, excess))
    if not grad:
        return value, None
    # d/dx = P^q s with s = p - 1 for P = p and s = p for P = 1 - p:
    # s + (P^q - 1) s, in one pass.
    slope = torch.sub(prob, operand(1, prob)) if positive else prob
    if excess is None:
        return value, slope
    return value, torch.addcmul(slope, excess, slope, out=excess)


@partial_label_loss(
    w=Real(),
    b=Real(),
    mu=Real(),
    sigma=Real(low=0, low_open=True),
    **ROBUSTNESS)
def gr_loss(cls_score: Tensor, target: Tensor, w: float, b: float, mu: float,
            sigma: float, q1: float, q2: float, q3: float) -> Tensor:
    r"""Generalized Robust Loss (functional form).

    :func:`gr_loss_with_weights` with
    :math:`k = \sigma(w\,\bar p + b)` and
    :math:`v = \exp(-(\bar p - \mu)^2 / 2\sigma^2)`, where
    :math:`\bar p = \sigma(x)` with its gradient stopped.

    Args:
        cls_score (Tensor): Logits ``(N, C)``.
        target (Tensor): Tri-state ``(N, C)`` target or ``(N,)`` indices.
        w (float): Slope of the pseudo-label ``k``.
        b (float): Bias of the pseudo-label ``k``.
        mu (float): Centre of the weight ``v``.
        sigma (float): Width of the weight ``v``, ``> 0``.
        q1 (float): See :func:`gr_loss_with_weights`. Defaults to 0.0.
        q2 (float): See :func:`gr_loss_with_weights`. Defaults to 0.01.
        q3 (float): See :func:`gr_loss_with_weights`. Defaults to 1.0.
        weight, reduction, avg_factor: See
            :func:`~.base.reduce_loss`.
    """

    def weights(logits: Logits) -> Tuple[Tensor, Tensor]:
        prob = logits.prob
        k = torch.add(operand(b, prob), prob, alpha=w).sigmoid_()
        v = torch.sub(prob, operand(mu, prob))
        v = torch.addcmul(
            operand(0, v), v, v, value=-0.5 / sigma**2, out=v).exp_()
        return k, v

    def eager() -> ValueGrad:
        return by_state_value_grad(cls_score, target,
                                   _unannotated_term(weights, q2, q3),
                                   *_observed_terms(q1))

    # The kernel's numbers as 0-dim tensors: the schedule moves w, b, mu
    # and sigma every epoch without compiling again.
    numbers = [
        operand(value, cls_score)
        for value in (w, b, mu, -0.5 / sigma**2, q1, q2, q3)
    ]
    return with_gradient(
        cls_score,
        *GR_KERNEL(
            cls_score,
            target,
            *numbers,
            tuple(_robustness_kind(q) for q in (q1, q2, q3)),
            eager=eager))


def _robustness_kind(q: float) -> str:
    r"""Which form :math:`\mathcal{L}_q` takes: ``'log'`` (``q = 0``),
    ``'mae'`` (``q = 1``) or ``'power'``."""
    return 'log' if q == 0 else 'mae' if q == 1 else 'power'


def _fused_gce(q: Tensor, kind: str, log_prob: Tensor, prob: Tensor,
               rest: Tensor, slope: Tensor) -> Tuple[Tensor, Tensor]:
    r""":func:`gce_value_grad` in the fused kernel: :math:`\mathcal{L}_q(P)`
    and its derivative :math:`P^q s` from :math:`\log P`, :math:`P`,
    :math:`1 - P` (``rest``) and :math:`s`, the derivative of
    :math:`-\log P`."""
    if kind == 'log':
        return -log_prob, slope
    if kind == 'mae':
        return rest, prob * slope
    excess = expm1_nonpositive(q * log_prob)  # P^q - 1
    return excess * (-1 / q), slope + excess * slope


def _fused_gr_loss(x: Tensor, target: Tensor, w: Tensor, b: Tensor, mu: Tensor,
                   scale: Tensor, q1: Tensor, q2: Tensor, q3: Tensor,
                   kinds: Tuple[str, str, str], value_out: Tensor,
                   grad_out: Optional[Tensor]) -> None:
    r""":func:`gr_loss` of each label, written into ``value_out``, and its
    derivative, into ``grad_out`` (unless None), as one loop over the
    entries (:data:`GR_KERNEL`): the formulas of :func:`_observed_terms`,
    :func:`_unannotated_term` and :func:`gce_value_grad`, with ``scale``
    :math:`= -1/2\sigma^2` and ``kinds`` those of ``q1, q2, q3``
    (:func:`_robustness_kind`)."""
    prob, comp, log_prob, log_comp = sigmoid_and_logs(x)
    positive, positive_slope = _fused_gce(q1, kinds[0], log_prob, prob, comp,
                                          prob - 1)
    pseudo, pseudo_slope = _fused_gce(q2, kinds[1], log_prob, prob, comp,
                                      prob - 1)
    negative, negative_slope = _fused_gce(q3, kinds[2], log_comp, comp, prob,
                                          prob)
    k = torch.sigmoid(w * prob + b)
    v = torch.exp(scale * (prob - mu)**2)
    unannotated = v * (negative + k * (pseudo - negative))
    value_out.copy_(
        torch.where(target > 0, positive,
                    torch.where(target < 0, -log_comp, unannotated)))
    if grad_out is not None:
        unannotated_slope = v * (
            negative_slope + k * (pseudo_slope - negative_slope))
        grad_out.copy_(
            torch.where(target > 0, positive_slope,
                        torch.where(target < 0, prob, unannotated_slope)))


#: :func:`_fused_gr_loss` as one compiled CPU kernel.
GR_KERNEL = FusedKernel(_fused_gr_loss, name='GR Loss')


@MODELS.register_module()
class GRLoss(TrainingProgress, PartialLabelLoss):
    r"""Generalized Robust Loss of Chen et al. (IJCAI 2024).

    Per element, with :math:`p = \sigma(x)` and :math:`\bar p` the same
    prediction with its gradient stopped:

    .. math::
        \ell = \begin{cases}
        -\log p & t = 1 \text{ (observed positive)},\\
        v\Big[k\,\frac{1 - p^{q_2}}{q_2}
            + (1 - k)\,\frac{1 - (1 - p)^{q_3}}{q_3}\Big]
            & t = 0 \text{ (unannotated)},\\
        -\log(1 - p) & t = -1 \text{ (observed negative)},
        \end{cases}

    .. math::
        k = \sigma(w\,\bar p + b), \qquad
        v = \exp\Big(-\frac{(\bar p - \mu)^2}{2\sigma^2}\Big).

    ``k`` is a soft pseudo-label (the estimated probability that an
    unannotated label is a false negative) and ``v`` reweights unannotated
    labels. :math:`w, b, \mu, \sigma` move linearly from their initial to
    their final values over training. With the 1-based epoch ``e``, ``T``
    epochs and ``n = linear_init``:

    .. math::
        w(e) = w_0 + (w_T - w_0)\,\frac{\max(e - n - 1, 0)}{T - n},\qquad
        \mu(e) = \mu_0 + (\mu_T - \mu_0)\,\frac{\max(e - n, 0)}{T - n},

    ``b`` like ``w`` and ``sigma`` like ``mu`` (``schedule='official'``, the
    default). This is the official code, including its off-by-one: ``w`` and
    ``b`` never reach their final values, ``mu`` and ``sigma`` reach them at
    the last epoch. The paper (Eq. 9-13) moves all four by ``t / T`` with
    ``t = 0, 1, ...`` the current epoch; ``schedule='paper'`` does that
    (``t = max(e - n - 1, 0)``, so ``w, b`` are the official ones and
    ``mu, sigma`` lag them by one epoch). The fractions are capped at 1.

    Paper vs official code:

    * Observed positives: the paper's Eq. 14 uses
      :math:`(1 - p^{q_1})/q_1` with :math:`q_1 = 0.01`; the official code
      uses :math:`-\log p` (the :math:`q_1 \to 0` limit), our default
      ``q1=0``.
    * Observed negatives (``-1``) do not occur in single-positive data and
      the official code has no such state; they get the plain negative term
      :math:`-\log(1 - p)`, no pseudo-label and no weight.
    * Scale: the official code averages over the ``N x C`` elements; the
      stock head divides the sum by ``N`` (``avg_factor=N``), so
      ``loss_weight = 1 / C`` reproduces the official magnitudes (and the
      paper's learning rates).
    * :math:`p^{q}` and :math:`(1 - p)^{q}` are computed as
      ``exp(q * logsigmoid(+-x))`` (finite for any logit) instead of from
      the probabilities.

    The epoch and the number of epochs come from MMEngine's ``MessageHub``
    (any epoch-based Runner), from :meth:`set_epoch`, or, for ``T`` only,
    from ``max_epochs``.

    On CPU logits of at least 1024 entries the loss and its derivative are
    one compiled kernel (:data:`GR_KERNEL`, see
    :mod:`~mmlml.models.losses.fused_kernel`; ``MMLML_COMPILE=0`` runs the
    eager implementation), equal to the eager one to about 1e-6 relative.

    Args:
        q2 (float): Robustness of the pseudo-positive term (``0`` is
            cross-entropy, ``1`` MAE). Defaults to 0.01.
        q3 (float): Robustness of the negative term. Defaults to 1.0 (paper:
            1 on VOC, COCO and NUS, 1.5 on CUB).
        beta (Sequence[float]): ``(w0, wT, b0, bT)``. Defaults to
            ``(0, 2, -2, -2)`` (VOC; the paper uses ``wT, bT = 10, -8`` on
            COCO, NUS and CUB).
        alpha (Sequence[float]): ``(mu0, sigma0, muT, sigmaT)``, sigmas
            ``> 0``. Defaults to ``(0.5, 2, 0.8, 0.5)``.
        linear_init (int): Epochs ``n`` the schedules wait before moving.
            Defaults to 0.
        schedule (str): ``'official'`` or ``'paper'``, see above. Defaults
            to ``'official'``.
        max_epochs (int, optional): Number of epochs ``T`` of the schedules;
            None reads the Runner's ``max_epochs``. Defaults to None.
        q1 (float): Robustness of the observed-positive term; ``0`` is
            :math:`-\log p` (official code), the paper writes 0.01.
            Defaults to 0.0.
        reduction (str), loss_weight (float): See
            :class:`~.base.PartialLabelLoss`.

    Example:
        >>> loss = GRLoss(max_epochs=8)
        >>> loss.set_epoch(0)
        >>> value = loss(torch.randn(2, 5), torch.tensor([1, 3]))
    """

    loss_fn = gr_loss
    hyperparameters = dict(
        **hyperparameters_of(gr_loss, 'q2', 'q3'),
        beta=RealTuple((0, 2, -2, -2), names=('w0', 'wT', 'b0', 'bT')),
        alpha=RealTuple((0.5, 2, 0.8, 0.5),
                        names=('mu0', 'sigma0', 'muT', 'sigmaT')),
        linear_init=Integer(0, low=0),
        schedule=Choice('official', options=SCHEDULES),
        max_epochs=Integer(None, low=1, optional=True),
        q1=ROBUSTNESS['q1'])

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        if not (self.alpha[1] > 0 and self.alpha[3] > 0):
            raise ValueError('the sigmas of alpha (its 2nd and 4th values) '
                             f'must be > 0, got {self.alpha!r}')

    def total_epochs(self) -> int:
        """``T``: :meth:`set_epoch`'s ``max_epochs``, else the constructor's
        ``max_epochs``, else the Runner's."""
        if self._max_epochs_override is None and self.max_epochs is not None:
            return int(self.max_epochs)
        return super().total_epochs()

    def schedule_fractions(self) -> Dict[str, float]:
        """How far ``beta`` and ``alpha`` have moved, in ``[0, 1]``, at the
        current epoch."""
        epoch = self.current_epoch() + 1  # 1-based, as in the official code
        total = self.total_epochs()
        start = self.linear_init
        if total <= start:
            raise ValueError(f'linear_init ({start}) must be smaller than '
                             f'the number of epochs ({total})')
        beta_frac = min(max(epoch - start - 1, 0) / (total - start), 1.0)
        if self.schedule == 'paper':
            alpha_frac = beta_frac
        else:
            alpha_frac = min(max(epoch - start, 0) / (total - start), 1.0)
        return dict(beta=beta_frac, alpha=alpha_frac)

    def current_parameters(self) -> Dict[str, float]:
        """``w, b, mu, sigma`` at the current epoch."""
        frac = self.schedule_fractions()
        w0, w_t, b0, b_t = self.beta
        mu0, sigma0, mu_t, sigma_t = self.alpha
        return dict(
            w=w0 + (w_t - w0) * frac['beta'],
            b=b0 + (b_t - b0) * frac['beta'],
            mu=mu0 + (mu_t - mu0) * frac['alpha'],
            sigma=sigma0 + (sigma_t - sigma0) * frac['alpha'])

    def loss_kwargs(self) -> Dict:
        return dict(
            q1=self.q1, q2=self.q2, q3=self.q3, **self.current_parameters())
