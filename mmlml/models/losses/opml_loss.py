"""OPML loss ("pushing one pair of labels apart each time").

"Pushing One Pair of Labels Apart Each Time in Multi-Label Learning: From
Single Positive to Full Labels" (no public code). Its special case ZLPR is
in :mod:`.zlpr_loss`.
"""
import math
from typing import Dict, Optional

import torch
from torch import Tensor

from mmlml.registry import MODELS
from mmlml.utils.hyperparameters import (Real, Rule, check_hyperparameters,
                                         check_settings, hyperparameters_of)
from .base import PartialLabelLoss, functional_loss, partial_label_loss
from .utils import check_reduction, check_values

__all__ = ['OPMLLoss', 'opml_loss']

CONSTANT = Real(1.0, low=0, low_open=True)
#: The margins are another spelling of the constants: one of each pair.
POS_MARGIN_RULE = Rule(
    lambda a, pos_margin: pos_margin is None or a == 1.0,
    'give either a or pos_margin, got a={a!r} and pos_margin={pos_margin!r}')
NEG_MARGIN_RULE = Rule(
    lambda b, neg_margin: neg_margin is None or b == 1.0,
    'give either b or neg_margin, got b={b!r} and neg_margin={neg_margin!r}')


def _log_sum_exp(log_constant: float, mass: Tensor,
                 exponent: Tensor) -> Tensor:
    """Per row, ``log(exp(log_constant) + sum_j mass_j exp(exponent_j))``,
    stable for any finite exponent: ``logsumexp`` over
    ``[log_constant, log(mass_j) + exponent_j]``, where a zero mass is
    ``-inf`` (it contributes nothing, with a zero gradient)."""
    present = mass > 0
    log_mass = torch.where(present, mass, 1.0).log()
    terms = torch.where(present, exponent + log_mass, -math.inf)
    constant = terms.new_full((terms.size(0), 1), log_constant)
    return torch.logsumexp(torch.cat((constant, terms), dim=1), dim=1)


@partial_label_loss(soft_targets=True, a=CONSTANT, b=CONSTANT)
def _opml_per_sample(cls_score: Tensor,
                     target: Tensor,
                     a: float,
                     b: float,
                     element_weight: Optional[Tensor] = None) -> Tensor:
    """Per-sample OPML loss of checked inputs (see :func:`opml_loss`)."""
    positive_mass = target.clamp(min=0)
    negative_mass = 1 - positive_mass
    if element_weight is not None:
        element_weight = element_weight.to(cls_score)
        check_values((element_weight < 0).any(),
                     'element-wise weights of OPML must be >= 0')
        positive_mass = positive_mass * element_weight
        negative_mass = negative_mass * element_weight
    return (_log_sum_exp(math.log(a), positive_mass, -cls_score) +
            _log_sum_exp(math.log(b), negative_mass, cls_score))


def _opml_compute(cls_score: Tensor,
                  target: Tensor,
                  weight: Optional[Tensor] = None,
                  reduction: str = 'mean',
                  avg_factor: Optional[float] = None,
                  **values) -> Tensor:
    """:func:`opml_loss` with checked hyperparameters: element-wise weights
    go inside the sums, sample-wise ones to the reduction."""
    element_weight = None
    if weight is not None and weight.dim() == 2:
        if weight.shape != cls_score.shape:
            raise ValueError('weight must have shape (N,) or '
                             f'{tuple(cls_score.shape)}, got '
                             f'{tuple(weight.shape)}')
        element_weight, weight = weight, None
    return _opml_per_sample.compute(
        cls_score,
        target,
        weight,
        reduction,
        avg_factor,
        element_weight=element_weight,
        **values)


@functional_loss(_opml_per_sample.hyperparameters, _opml_compute)
def opml_loss(cls_score: Tensor,
              target: Tensor,
              a: float = 1.0,
              b: float = 1.0,
              weight: Optional[Tensor] = None,
              reduction: str = 'mean',
              avg_factor: Optional[float] = None) -> Tensor:
    """OPML loss, functional form, one value per sample: the formula
    (tri-state or soft targets) and the constants are :class:`OPMLLoss`'s.

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
    check_reduction(reduction)
    values = check_hyperparameters(opml_loss.hyperparameters, dict(a=a, b=b),
                                   'opml_loss')
    return _opml_compute(cls_score, target, weight, reduction, avg_factor,
                         **values)


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
        **kwargs: :class:`~.base.PartialLabelLoss`'s ``reduction`` and
            ``loss_weight``, passed on to it.

    Example:
        >>> loss = OPMLLoss(pos_margin=1.0, neg_margin=-1.0)
        >>> value = loss(torch.randn(2, 5), torch.tensor([1, 3]))
    """

    loss_fn = opml_loss
    hyperparameters = dict(
        **hyperparameters_of(opml_loss),
        pos_margin=Real(None, optional=True),
        neg_margin=Real(None, optional=True))
    rules = (POS_MARGIN_RULE, NEG_MARGIN_RULE)

    def __init__(self,
                 *,
                 a: float = 1.0,
                 b: float = 1.0,
                 pos_margin: Optional[float] = None,
                 neg_margin: Optional[float] = None,
                 **kwargs):
        super().__init__(**kwargs)
        self.a = a
        self.b = b
        self.pos_margin = pos_margin
        self.neg_margin = neg_margin
        check_settings(self)
        # The margins are another spelling of the constants.
        if self.pos_margin is not None:
            self.a = CONSTANT.validate('a', math.exp(-self.pos_margin))
        if self.neg_margin is not None:
            self.b = CONSTANT.validate('b', math.exp(self.neg_margin))

    def loss_kwargs(self, cls_score: Tensor) -> Dict:
        return dict(a=self.a, b=self.b)
