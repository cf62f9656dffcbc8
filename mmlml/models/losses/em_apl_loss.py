"""Entropy maximisation with asymmetric pseudo-labelling (EM + APL).

Zhou et al., "Acknowledging the Unknown for Multi-label Learning with Single
Positive Labels", ECCV 2022 (official code: SPML-AckTheUnknown). The
pseudo-labels come from :class:`~mmlml.hooks.APLHook` through the label
store; the loss of entries without one is :class:`~.EMLoss`'s.
"""
import torch
from torch import Tensor

from mmlml.registry import MODELS
from mmlml.utils.hyperparameters import (Real, check_settings,
                                         hyperparameters_of)
from .base import partial_label_loss
from .em_loss import EMLoss, em_loss
from .utils import UNKNOWN, prepare_pseudo_labels, soft_bce

__all__ = ['EMAPLLoss', 'em_apl_loss']


@partial_label_loss(
    alpha=em_loss.hyperparameters['alpha'], beta=Real(0.9, low=0))
def em_apl_loss(cls_score: Tensor, target: Tensor, alpha: float, beta: float,
                pseudo_labels: Tensor) -> Tensor:
    """EM + APL loss, functional form: the formula and the arguments are
    :class:`EMAPLLoss`'s, plus ``pseudo_labels`` (``(N, C)``, the soft
    value of each pseudo-labelled entry, NaN elsewhere), ``weight``,
    ``reduction`` and ``avg_factor`` as in MMPretrain's losses."""
    labelled, soft_targets = prepare_pseudo_labels(pseudo_labels, cls_score)
    return torch.where(labelled & (target == UNKNOWN),
                       beta * soft_bce(cls_score, soft_targets),
                       em_loss.elementwise(cls_score, target, alpha))


@MODELS.register_module()
class EMAPLLoss(EMLoss):
    r"""Entropy maximisation with asymmetric pseudo-labelling (EM + APL) of
    Zhou et al. (ECCV 2022, Eq. 3 and 8).

    :class:`~mmlml.hooks.APLHook` gives, after each epoch from the warm-up
    on, the lowest-scoring unannotated entries of every class a *soft
    negative* pseudo-label: the probability :math:`s` the model gave them
    then (stored in the label store, never updated). Those entries take a
    weighted cross-entropy against :math:`s`; every other entry takes
    :class:`~.EMLoss`'s term:

    .. math::
        \ell = \begin{cases}
        -\log p & t = 1,\\
        -\beta\,[s\log p + (1 - s)\log(1 - p)]
            & t = 0 \text{ with a pseudo-label } s,\\
        -\alpha\,H(p) & t = 0 \text{ otherwise},\\
        -\log(1 - p) & t = -1.
        \end{cases}

    It equals the official ``loss_EM_APL`` for the same pseudo-labels (the
    official code stores them as ``-s`` in its observed label matrix), up
    to the :math:`10^{-5}` inside the official logs (see
    :class:`~.EMLoss`). An observed negative of the data (``-1``) keeps
    the plain :math:`-\log(1-p)`; the official code has none.

    Scale: the official code averages over the ``N x C`` elements; with the
    stock head (``avg_factor=N``) ``loss_weight = 1 / C`` reproduces it.
    Paper values (Table 6, ``(alpha, beta)``): VOC (0.2, 0.02), COCO
    (0.1, 0.9), NUS-WIDE (0.1, 0.2), CUB (0.01, 0.4).

    Needs ``type='PartialLabelLinearClsHead'`` (or another
    ``PartialLabel*Head``) and ``custom_hooks=[dict(type='APLHook')]``; the
    head hands it ``pseudo_labels`` at every call.

    Args:
        beta (float): Weight of the pseudo-labelled entries, ``>= 0``.
            Defaults to 0.9 (COCO).
        **kwargs: :class:`~.EMLoss`'s ``alpha`` (the strength of the
            entropy maximisation, ``>= 0``, default 0.1),
            ``reduction`` and ``loss_weight``, passed on to it.
    """

    loss_fn = em_apl_loss
    hyperparameters = hyperparameters_of(em_apl_loss)
    state_inputs = ('pseudo_labels', )
    state_hook = 'APLHook'

    def __init__(self, *, beta: float = 0.9, **kwargs):
        super().__init__(**kwargs)
        self.beta = beta
        check_settings(self)
