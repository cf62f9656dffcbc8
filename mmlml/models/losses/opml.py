"""OPML loss ("pushing one pair of labels apart each time") and ZLPR.

OPML: "Pushing One Pair of Labels Apart Each Time in Multi-Label Learning:
From Single Positive to Full Labels" (no public code). ZLPR: Su et al.,
"ZLPR: A Novel Loss for Multi-label Classification", 2022.
"""
import math
from typing import Dict, Optional

import torch
from torch import Tensor

from mmlml.registry import MODELS
from .base import PartialLabelLoss, check_hparam, partial_label_loss

__all__ = ['OPMLLoss', 'ZLPRLoss', 'opml_loss', 'zlpr_loss']


def _check_constant(name: str, value: float) -> float:
    return check_hparam(name, value, low=0, low_open=True)


def _log_sum_exp_with_constant(log_constant: float,
                               log_terms: Tensor) -> Tensor:
    """Per row, ``log(exp(log_constant) + sum_j exp(log_terms[:, j]))``.

    ``-inf`` entries (zero terms) contribute nothing, with zero gradient.
    """
    constant = log_terms.new_full((log_terms.size(0), 1), log_constant)
    return torch.logsumexp(torch.cat([constant, log_terms], dim=1), dim=1)


def _opml_elementwise(cls_score: Tensor,
                      target: Tensor,
                      a: float = 1.0,
                      b: float = 1.0,
                      element_weight: Optional[Tensor] = None) -> Tensor:
    """Per-sample OPML loss of checked inputs (see :func:`opml_loss`)."""
    log_a = math.log(_check_constant('a', a))
    log_b = math.log(_check_constant('b', b))
    # Observed negatives (-1) have target 0: entirely negative.
    pos_mass = target.clamp(min=0)
    neg_mass = 1 - pos_mass
    if element_weight is not None:
        element_weight = element_weight.to(cls_score)
        if bool((element_weight < 0).any()):
            raise ValueError('element-wise weights of OPML must be >= 0')
        pos_mass = pos_mass * element_weight
        neg_mass = neg_mass * element_weight
    # log(0) = -inf removes an entry from its sum.
    return (_log_sum_exp_with_constant(log_a,
                                       torch.log(pos_mass) - cls_score) +
            _log_sum_exp_with_constant(log_b,
                                       torch.log(neg_mass) + cls_score))


_opml_elementwise.soft_targets = True
_opml_per_sample = partial_label_loss(_opml_elementwise)


def opml_loss(cls_score: Tensor,
              target: Tensor,
              a: float = 1.0,
              b: float = 1.0,
              weight: Optional[Tensor] = None,
              reduction: str = 'mean',
              avg_factor: Optional[float] = None) -> Tensor:
    r"""OPML loss (functional form), one value per sample.

    .. math::
        L = \log\Big(a + \sum_i t_i e^{-s_i}\Big)
          + \log\Big(b + \sum_i (1 - t_i) e^{s_i}\Big),

    with logits :math:`s` and targets :math:`t_i = 1` for observed
    positives, 0 for unannotated labels and observed negatives, or a soft
    target in ``[0, 1]`` (observed negatives ``-1`` count as 0).

    Args:
        cls_score (Tensor): Logits ``(N, C)``.
        target (Tensor): ``(N, C)`` target in ``{-1} U [0, 1]`` (tri-state
            or soft) or ``(N,)`` class indices.
        a (float): Constant of the positive term, ``> 0``. Defaults to 1.0.
        b (float): Constant of the negative term, ``> 0``. Defaults to 1.0.
        weight (Tensor, optional): Sample-wise ``(N,)`` weights scale each
            sample's loss; element-wise ``(N, C)`` weights (``>= 0``) scale
            each label's exponential inside the two sums (0 drops the label
            from the loss).
        reduction (str): ``'none'`` (per-sample ``(N,)``), ``'mean'`` or
            ``'sum'``. Defaults to ``'mean'``.
        avg_factor (float, optional): Divisor for ``'mean'``.
    """
    element_weight = None
    if weight is not None and weight.dim() == 2:
        if weight.shape != cls_score.shape:
            raise ValueError('weight must have shape (N,) or '
                             f'{tuple(cls_score.shape)}, got '
                             f'{tuple(weight.shape)}')
        element_weight, weight = weight, None
    return _opml_per_sample(
        cls_score,
        target,
        a,
        b,
        element_weight=element_weight,
        weight=weight,
        reduction=reduction,
        avg_factor=avg_factor)


def zlpr_loss(cls_score: Tensor,
              target: Tensor,
              weight: Optional[Tensor] = None,
              reduction: str = 'mean',
              avg_factor: Optional[float] = None) -> Tensor:
    r"""ZLPR loss (functional form): :func:`opml_loss` with ``a = b = 1``,

    .. math::
        L = \log\Big(1 + \sum_{i \in P} e^{-s_i}\Big)
          + \log\Big(1 + \sum_{j \notin P} e^{s_j}\Big).
    """
    return opml_loss(
        cls_score,
        target,
        1.0,
        1.0,
        weight=weight,
        reduction=reduction,
        avg_factor=avg_factor)


@MODELS.register_module()
class OPMLLoss(PartialLabelLoss):
    r"""OPML loss: push one pair of labels apart each time.

    The paper's equations were lost in the available text; this is the
    reconstruction consistent with every sentence of it. A smooth maximum
    of "highest negative score minus lowest positive score", made bounded
    by two positive constants ``a`` and ``b``, gives per sample (Eq. 6)

    .. math::
        L = \log\Big(a + \sum_{i \in P} e^{-s_i}\Big)
          + \log\Big(b + \sum_{j \in N \cup U} e^{s_j}\Big),

    with logits :math:`s`, :math:`P` the observed positives and the
    negative set everything else: unannotated labels (assumed negative, as
    in the paper's single-positive Eq. 3) and observed negatives. With a
    single positive this is
    :math:`\log(a + e^{-s_p}) + \log(b + \sum_{j \ne p} e^{s_j})`.
    ``a = b = 1`` is ZLPR (:class:`ZLPRLoss`). The paper reparametrises
    :math:`a = e^{-m^+}`, :math:`b = e^{m^-}` (``pos_margin``,
    ``neg_margin``): the constants act as score thresholds that positives
    should exceed and negatives stay under.

    Soft variant (paper Eq. 11): a target in ``[0, 1]`` puts a label
    partly in each sum,

    .. math::
        L = \log\Big(a + \sum_i t_i e^{-s_i}\Big)
          + \log\Big(b + \sum_i (1 - t_i) e^{s_i}\Big);

    pass soft targets as ``target`` (observed negatives stay ``-1``, i.e.
    :math:`t = 0`). The paper smooths unannotated labels to
    :math:`t = \mathrm{AP}_c^{\rho}\,p` with :math:`\mathrm{AP}_c` the
    class's training AP; computing those targets is the caller's job.

    Both sums are evaluated with ``logsumexp`` over
    :math:`[\log a, \log t_i - s_i]` (a zero target is :math:`-\infty`,
    with zero gradient), finite for logits of +-100. ``reduction='none'``
    returns the per-sample ``(N,)`` losses; the stock head's
    ``avg_factor=N`` makes ``'mean'`` the mean over samples (no public code
    fixes another scale).

    Args:
        a (float): Constant of the positive term, ``> 0``. Defaults to 1.0.
        b (float): Constant of the negative term, ``> 0``. Defaults to 1.0.
        pos_margin (float, optional): :math:`m^+`, sets
            ``a = exp(-pos_margin)`` (then leave ``a`` at 1). Defaults to
            None.
        neg_margin (float, optional): :math:`m^-`, sets
            ``b = exp(neg_margin)`` (then leave ``b`` at 1). Defaults to
            None.
        reduction (str): ``'none'``, ``'mean'`` or ``'sum'``. Defaults to
            ``'mean'``.
        loss_weight (float): Multiplier of the loss. Defaults to 1.0.

    Example:
        >>> loss = OPMLLoss(pos_margin=1.0, neg_margin=-1.0)
        >>> value = loss(torch.randn(2, 5), torch.tensor([1, 3]))
    """

    loss_fn = opml_loss

    def __init__(self,
                 a: float = 1.0,
                 b: float = 1.0,
                 pos_margin: Optional[float] = None,
                 neg_margin: Optional[float] = None,
                 reduction: str = 'mean',
                 loss_weight: float = 1.0):
        super().__init__(reduction=reduction, loss_weight=loss_weight)
        self.a = self._constant('a', a, 'pos_margin', pos_margin, -1)
        self.b = self._constant('b', b, 'neg_margin', neg_margin, 1)

    @staticmethod
    def _constant(name: str, value: float, margin_name: str,
                  margin: Optional[float], sign: int) -> float:
        if margin is None:
            return _check_constant(name, value)
        if value != 1.0:
            raise ValueError(f'give either {name} or {margin_name}, got '
                             f'{name}={value!r} and '
                             f'{margin_name}={margin!r}')
        if not (isinstance(margin, (int, float)) and math.isfinite(margin)):
            raise ValueError(f'{margin_name} must be a finite number, got '
                             f'{margin!r}')
        return _check_constant(name, math.exp(sign * margin))

    def loss_kwargs(self) -> Dict:
        return dict(a=self.a, b=self.b)


@MODELS.register_module()
class ZLPRLoss(OPMLLoss):
    r"""ZLPR loss of Su et al. (2022): :class:`OPMLLoss` with
    ``a = b = 1``,

    .. math::
        L = \log\Big(1 + \sum_{i \in P} e^{-s_i}\Big)
          + \log\Big(1 + \sum_{j \notin P} e^{s_j}\Big),

    per sample, with the same handling of unannotated labels, observed
    negatives, soft targets and weights.

    Args:
        reduction (str): ``'none'``, ``'mean'`` or ``'sum'``. Defaults to
            ``'mean'``.
        loss_weight (float): Multiplier of the loss. Defaults to 1.0.
    """

    def __init__(self, reduction: str = 'mean', loss_weight: float = 1.0):
        super().__init__(
            a=1.0, b=1.0, reduction=reduction, loss_weight=loss_weight)
