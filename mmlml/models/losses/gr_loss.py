"""Generalized Robust Loss (GR Loss).

Chen et al., "Boosting Single Positive Multi-label Classification with
Generalized Robust Loss", IJCAI 2024 (official code: GRLoss).
"""
from typing import Dict, Optional, Sequence, Tuple, Union

import torch
import torch.nn.functional as F
from torch import Tensor

from mmlml.registry import MODELS
from mmlml.utils.hyperparameters import (Choice, Hyperparameter, Integer, Real,
                                         RealTuple, Rule, check_settings,
                                         hyperparameters_of)
from mmlml.utils.progress import TrainingProgress
from .base import PartialLabelLoss, partial_label_loss
from .utils import by_state, focal_negative

__all__ = ['GRLoss', 'gr_loss', 'gr_loss_with_weights', 'gce_term']

SCHEDULES = ('official', 'paper')
# mypy takes a ``**`` of declarations for a possible ``soft_targets`` of
# partial_label_loss (hence the ignores where they are passed on).
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


@partial_label_loss(
    k=Hyperparameter(), v=Hyperparameter(),
    **ROBUSTNESS)  # type: ignore[arg-type]  # (see ROBUSTNESS)
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
            :func:`~.utils.reduce_loss`.
    """
    k, v = (
        value.detach().to(cls_score.dtype)
        if isinstance(value, Tensor) else value for value in (k, v))
    log_prob = F.logsigmoid(cls_score)
    log_comp = F.logsigmoid(-cls_score)
    unannotated = v * (
        k * gce_term(log_prob, q2) + (1 - k) * gce_term(log_comp, q3))
    return by_state(target, gce_term(log_prob, q1), unannotated,
                    focal_negative(cls_score))


@partial_label_loss(
    w=Real(),
    b=Real(),
    mu=Real(),
    sigma=Real(low=0, low_open=True),
    **ROBUSTNESS)  # type: ignore[arg-type]  # (see ROBUSTNESS)
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
            :func:`~.utils.reduce_loss`.
    """

    prob = torch.sigmoid(cls_score.detach())
    k = torch.sigmoid(w * prob + b)
    v = torch.exp(-(prob - mu)**2 / (2 * sigma**2))
    return gr_loss_with_weights.elementwise(cls_score, target, k, v, q1, q2,
                                            q3)


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
        **kwargs: :class:`~.base.PartialLabelLoss`'s ``reduction`` and
            ``loss_weight``, passed on to it.

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
    rules: Tuple[Rule, ...] = (Rule(
        lambda alpha: alpha[1] > 0 and alpha[3] > 0,
        'the sigmas of alpha (its 2nd and 4th values) must be > 0, got '
        '{alpha!r}'), )

    def __init__(self,
                 *,
                 q2: float = 0.01,
                 q3: float = 1.0,
                 beta: Sequence[float] = (0, 2, -2, -2),
                 alpha: Sequence[float] = (0.5, 2, 0.8, 0.5),
                 linear_init: int = 0,
                 schedule: str = 'official',
                 max_epochs: Optional[int] = None,
                 q1: float = 0.0,
                 **kwargs):
        super().__init__(**kwargs)
        self.q2 = q2
        self.q3 = q3
        self.beta = beta
        self.alpha = alpha
        self.linear_init = linear_init
        self.schedule = schedule
        self.max_epochs = max_epochs
        self.q1 = q1
        check_settings(self)

    @property
    def min_epochs(self) -> int:
        """A run must have more epochs than ``linear_init``."""
        return self.linear_init

    def fixed_max_epochs(self) -> Optional[int]:
        """``T``: :meth:`set_epoch`'s ``max_epochs``, else the constructor's
        ``max_epochs``, else None (the Runner's)."""
        if self._max_epochs_override is None and self.max_epochs is not None:
            return int(self.max_epochs)
        return self._max_epochs_override

    def schedule_fractions(
        self,
        epoch: Optional[Union[int, Tensor]] = None,
        total: Optional[Union[int, Tensor]] = None
    ) -> Dict[str, Union[float, Tensor]]:
        """How far ``beta`` and ``alpha`` have moved, in ``[0, 1]``, at the
        0-based ``epoch`` of ``total`` (numbers or 0-dim tensors; the
        current epoch by default)."""
        if epoch is None:
            epoch = self.current_epoch()
        if total is None:
            total = self.total_epochs()
        start, span = self.linear_init, total - self.linear_init
        beta_frac = _fraction(epoch - start, span)
        alpha_frac = beta_frac if self.schedule == 'paper' else _fraction(
            epoch + 1 - start, span)
        return dict(beta=beta_frac, alpha=alpha_frac)

    def current_parameters(
        self,
        epoch: Optional[Union[int, Tensor]] = None,
        total: Optional[Union[int, Tensor]] = None
    ) -> Dict[str, Union[float, Tensor]]:
        """``w, b, mu, sigma`` at ``epoch`` of ``total`` (see
        :meth:`schedule_fractions`)."""
        frac = self.schedule_fractions(epoch, total)
        w0, w_t, b0, b_t = self.beta
        mu0, sigma0, mu_t, sigma_t = self.alpha
        return dict(
            w=w0 + (w_t - w0) * frac['beta'],
            b=b0 + (b_t - b0) * frac['beta'],
            mu=mu0 + (mu_t - mu0) * frac['alpha'],
            sigma=sigma0 + (sigma_t - sigma0) * frac['alpha'])

    def loss_kwargs(self, cls_score: Tensor) -> Dict:
        epoch, total = self.progress(cls_score, need_total=True)
        return dict(
            q1=self.q1,
            q2=self.q2,
            q3=self.q3,
            **self.current_parameters(epoch, total))


def _fraction(steps: Union[int, Tensor],
              span: Union[int, Tensor]) -> Union[float, Tensor]:
    """``steps / span`` clipped to ``[0, 1]``, of numbers or tensors."""
    ratio = steps / span
    if isinstance(ratio, Tensor):
        return ratio.clamp(0, 1)
    return min(max(ratio, 0.0), 1.0)
