"""OPML-SP: the soft OPML loss with AP-based soft labels and label
correction ("Pushing One Pair of Labels Apart Each Time in Multi-Label
Learning: From Single Positive to Full Labels", Sec. III-E; no public
code). The per-class training AP and the corrections come from
:class:`~mmlml.hooks.ClassAPCorrectionHook` through the label store.
"""
from typing import Dict, Optional

import torch
from torch import Tensor

from mmlml.registry import MODELS
from mmlml.utils.hyperparameters import (Real, check_hyperparameters,
                                         check_settings)
from .base import functional_loss
from .opml_loss import OPMLLoss, opml_loss
from .utils import (check_reduction, check_values, prepare_inputs,
                    prepare_pseudo_labels)

__all__ = ['OPMLSPLoss', 'opml_sp_loss', 'opml_sp_targets']

RHO = Real(1.0, low=0, hint='the power of the AP in eps_c = AP_c ** rho')


def opml_sp_targets(cls_score: Tensor, target: Tensor, pseudo_labels: Tensor,
                    class_ap: Tensor, rho: float) -> Tensor:
    r"""The soft targets of OPML-SP (see :class:`OPMLSPLoss`).

    Args:
        cls_score (Tensor): Checked logits ``(N, C)``.
        target (Tensor): Checked dense tri-state target ``(N, C)``.
        pseudo_labels (Tensor): ``(N, C)`` corrections (their value, 1),
            NaN elsewhere.
        class_ap (Tensor): ``(C,)`` per-class training AP in ``[0, 1]``.
        rho (float): The power :math:`\rho \ge 0`.

    Returns:
        Tensor: ``(N, C)`` targets in ``[0, 1]``, without gradient.
    """
    corrected, corrections = prepare_pseudo_labels(pseudo_labels, cls_score)
    num_classes = cls_score.size(1)
    if not isinstance(class_ap, Tensor) or class_ap.shape != (num_classes, ):
        raise ValueError(f'class_ap must be a tensor of shape '
                         f'({num_classes},), got '
                         f'{getattr(class_ap, "shape", class_ap)!r}')
    class_ap = class_ap.to(cls_score)
    check_values(((class_ap < 0) | (class_ap > 1)).any(),
                 'class_ap must lie in [0, 1]')
    smoothed = torch.sigmoid(cls_score.detach()) * class_ap.pow(rho)
    soft = torch.where(corrected, corrections, smoothed)
    return torch.where(target == 0, soft, target.clamp(min=0))


def _opml_sp_compute(cls_score: Tensor,
                     target: Tensor,
                     weight: Optional[Tensor] = None,
                     reduction: str = 'mean',
                     avg_factor: Optional[float] = None,
                     *,
                     pseudo_labels: Tensor,
                     class_ap: Tensor,
                     rho: float = RHO.default,
                     **values) -> Tensor:
    """:func:`opml_sp_loss` with checked hyperparameters."""
    cls_score, target = prepare_inputs(cls_score, target)
    soft = opml_sp_targets(cls_score, target, pseudo_labels, class_ap, rho)
    return opml_loss.compute(cls_score, soft, weight, reduction, avg_factor,
                             **values)


@functional_loss(dict(**opml_loss.hyperparameters, rho=RHO), _opml_sp_compute)
def opml_sp_loss(cls_score: Tensor,
                 target: Tensor,
                 pseudo_labels: Tensor,
                 class_ap: Tensor,
                 a: float = 1.0,
                 b: float = 1.0,
                 rho: float = 1.0,
                 weight: Optional[Tensor] = None,
                 reduction: str = 'mean',
                 avg_factor: Optional[float] = None) -> Tensor:
    """OPML-SP loss, functional form, one value per sample: the formula
    and the arguments are :class:`OPMLSPLoss`'s.

    Args:
        cls_score (Tensor): Logits ``(N, C)``.
        target (Tensor): Tri-state target ``(N, C)`` (the observed labels)
            or ``(N,)`` class indices.
        pseudo_labels (Tensor): ``(N, C)`` corrections (value 1), NaN
            elsewhere.
        class_ap (Tensor): ``(C,)`` per-class training AP in ``[0, 1]``.
        a (float): Constant of the positive term, ``> 0``. Defaults to 1.0.
        b (float): Constant of the negative term, ``> 0``. Defaults to 1.0.
        rho (float): :math:`\\rho \\ge 0`. Defaults to 1.0.
        weight (Tensor, optional): See :func:`~.opml_loss.opml_loss`.
        reduction (str): ``'none'`` (per-sample ``(N,)``), ``'mean'`` or
            ``'sum'``. Defaults to ``'mean'``.
        avg_factor (float, optional): Divisor for ``'mean'``.
    """
    check_reduction(reduction)
    values = check_hyperparameters(opml_sp_loss.hyperparameters,
                                   dict(a=a, b=b, rho=rho), 'opml_sp_loss')
    return _opml_sp_compute(
        cls_score,
        target,
        weight,
        reduction,
        avg_factor,
        pseudo_labels=pseudo_labels,
        class_ap=class_ap,
        **values)


@MODELS.register_module()
class OPMLSPLoss(OPMLLoss):
    r"""OPML-SP: the soft OPML loss with AP-based adaptive soft labels and
    AP-based label correction (OPML paper, Sec. III-E, Eq. 11).

    The paper's equations were lost in the available text; this is the
    reconstruction consistent with every sentence of it. Per sample, with
    logits :math:`s` and probabilities :math:`p = \sigma(s)`,

    .. math::
        L = \log\Big(a + \sum_i t_i e^{-s_i}\Big)
          + \log\Big(b + \sum_i (1 - t_i) e^{s_i}\Big),
        \qquad
        t_i = \begin{cases}
        1 & \text{observed positive, or corrected},\\
        \varepsilon_c\,\mathrm{sg}(p_i),\ \
            \varepsilon_c = \mathrm{AP}_c^{\rho}
            & \text{unobserved (not corrected)},\\
        0 & \text{observed negative},
        \end{cases}

    :math:`c` the class of label :math:`i`, :math:`\mathrm{sg}` stop
    gradient (the target is a label, not a path for the gradient). The
    adaptive smoothing trusts a prediction as much as its class ranks the
    observed labels well: :math:`\mathrm{AP}_c` is the class's AP on the
    training set against the observed labels, measured each epoch by
    :class:`~mmlml.hooks.ClassAPCorrectionHook`, which also turns the
    highest-scoring unobserved entries into positives after the warm-up
    (the corrections, handed over as ``pseudo_labels``; the AP as
    ``class_ap``). Before the first AP is measured the hook sets
    :math:`\mathrm{AP}_c = 0`, so the first epoch trains plain OPML (every
    unobserved label negative). It is :class:`OPMLLoss` with these targets:
    ``a``, ``b``, the margins, weights and the per-sample scale are its.

    The paper adds the high-rank regulariser (OPML-SP is soft OPML + label
    correction + high-rank regularisation); combine them with
    :class:`LossSum`::

        model = dict(head=dict(type='PartialLabelLinearClsHead',
            loss=dict(_delete_=True, type='LossSum', losses=[
                dict(type='OPMLSPLoss', rho=1.0),
                dict(type='HighRankRegularizer', loss_weight=1e-3)])))
        custom_hooks = [dict(type='ClassAPCorrectionHook',
                             warmup_epochs=5, delta=0.1)]

    The paper's values of :math:`\rho` (and of the correction ratio and
    warm-up) were lost with its equations; the default :math:`\rho = 1`
    (:math:`\varepsilon_c = \mathrm{AP}_c`) is a starting point to tune on
    validation data.

    Args:
        rho (float): :math:`\rho \ge 0`, the power of the AP. Defaults to
            1.0.
        **kwargs: :class:`OPMLLoss`'s ``a``, ``b``, ``pos_margin``,
            ``neg_margin`` (with its defaults), ``reduction`` and
            ``loss_weight``, passed on to it.
    """

    loss_fn = opml_sp_loss
    hyperparameters = dict(**OPMLLoss.hyperparameters, rho=RHO)
    state_inputs = ('pseudo_labels', 'class_ap')
    state_hook = 'ClassAPCorrectionHook'

    def __init__(self, *, rho: float = 1.0, **kwargs):
        super().__init__(**kwargs)
        self.rho = rho
        check_settings(self)

    def loss_kwargs(self, cls_score: Tensor) -> Dict:
        return dict(super().loss_kwargs(cls_score), rho=self.rho)
