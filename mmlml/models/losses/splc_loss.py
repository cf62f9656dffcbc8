"""Self-paced loss correction (SPLC).

Zhang, Y., Cheng, Y., Huang, X., Wen, F., Feng, R., Li, Y. and Guo, Y.
"Simple and Robust Loss Design for Multi-Label Learning with Missing
Labels" (eq. 10). Official code:
https://github.com/xinyu1205/robust-loss-mlml.
"""
from typing import Dict, Optional, Union

import torch
from torch import Tensor

from mmlml.registry import MODELS
from mmlml.utils.hyperparameters import (Flag, Integer, Real, check_settings,
                                         hyperparameters_of)
from mmlml.utils.progress import TrainingProgress
from .base import PartialLabelLoss, partial_label_loss
from .utils import POSITIVE, UNKNOWN, focal_negative, focal_positive

__all__ = [
    'SPLC_BASES', 'splc_corrected_target', 'splc_loss',
    'splc_pseudo_positives', 'SPLCLoss'
]

#: :class:`SPLCLoss` arguments of the base losses SPLC is combined with in
#: the paper's Table VII, e.g. ``SPLCLoss(**SPLC_BASES['asl'])`` or, in a
#: config, ``dict(type='SPLCLoss', margin=0, gamma_pos=0, gamma_neg=4,
#: clip=0.05)``.
SPLC_BASES: Dict[str, Dict[str, float]] = {
    'focal_margin': dict(margin=1.0, gamma_pos=2.0, gamma_neg=2.0, clip=0.0),
    'bce': dict(margin=0.0, gamma_pos=0.0, gamma_neg=0.0, clip=0.0),
    'focal': dict(margin=0.0, gamma_pos=2.0, gamma_neg=2.0, clip=0.0),
    'asl': dict(margin=0.0, gamma_pos=0.0, gamma_neg=4.0, clip=0.05),
}

TAU = Real(0.6, low=0, high=1)


def splc_pseudo_positives(cls_score: Tensor,
                          target: Tensor,
                          tau: float = 0.6) -> Tensor:
    """SPLC's decision (also LASD's disambiguation): the unannotated labels
    (0) whose probability ``sigmoid(cls_score)`` exceeds ``tau`` (strictly),
    as a bool ``(N, C)`` mask. Observed labels are never selected.

    The decision is made without gradient. ``cls_score`` and ``target`` are
    dense ``(N, C)`` tensors (after :func:`~.utils.prepare_inputs`); ``tau``
    is a checked threshold in ``[0, 1]``.
    """
    return (target == UNKNOWN) & (torch.sigmoid(cls_score.detach()) > tau)


def splc_corrected_target(cls_score: Tensor,
                          target: Tensor,
                          tau: float = 0.6) -> Tensor:
    """The target after SPLC's correction: the
    :func:`splc_pseudo_positives` become positives (1); everything else is
    unchanged."""
    tau = TAU.validate('tau', tau)
    pseudo = splc_pseudo_positives(cls_score, target, tau)
    return torch.where(pseudo, torch.ones_like(target), target)


@partial_label_loss(
    tau=TAU,
    margin=Real(1.0, low=0),
    gamma_pos=Real(2.0, low=0),
    gamma_neg=Real(2.0, low=0),
    clip=Real(0.0, low=0, high=1, high_open=True),
    correct=Flag(True),
    pseudo_margin=Flag(False),
    detach_focal_weight=Flag(False))
def splc_loss(cls_score: Tensor, target: Tensor, tau: float, margin: float,
              gamma_pos: float, gamma_neg: float, clip: float,
              correct: Union[bool, Tensor], pseudo_margin: bool,
              detach_focal_weight: bool) -> Tensor:
    """SPLC, functional form (see :class:`SPLCLoss` for the formula). The
    defaults are the official Focal margin + SPLC with the correction on;
    ``correct=False`` is the base loss (before the start epoch; a 0-dim
    boolean tensor in training), and ``weight``, ``reduction``,
    ``avg_factor`` are as in MMPretrain's losses. The other arguments are
    :class:`SPLCLoss`'s."""

    pseudo = splc_pseudo_positives(cls_score, target, tau) & correct
    pseudo_positive = focal_positive(cls_score, gamma_pos,
                                     margin if pseudo_margin else 0.0,
                                     detach_focal_weight)
    return torch.where(
        target == POSITIVE,
        focal_positive(cls_score, gamma_pos, margin, detach_focal_weight),
        torch.where(
            pseudo, pseudo_positive,
            focal_negative(cls_score, gamma_neg, clip, detach_focal_weight)))


@MODELS.register_module()
class SPLCLoss(TrainingProgress, PartialLabelLoss):
    r"""Self-paced loss correction (SPLC) of Zhang et al., "Simple and
    Robust Loss Design for Multi-Label Learning with Missing Labels"
    (eq. 10).

    From the epoch ``change_epoch`` on, an unannotated label whose predicted
    probability exceeds :math:`\tau` is treated as a positive for the
    current batch (nothing is remembered across batches):

    .. math::
        \ell(x, t) =
        \begin{cases}
            \ell^+(x - m) & t = 1, \\
            \ell^+(x) & t = 0,\ \sigma(x) > \tau,\
                e \ge e_0 \quad \text{(pseudo-positive)}, \\
            \ell^-(x) & \text{otherwise (incl. every } t = -1),
        \end{cases}

    with :math:`e` the 0-based epoch, :math:`e_0` = ``change_epoch``,
    :math:`\ell^+(z) = -(1 - \sigma(z))^{\gamma_+} \log \sigma(z)` and
    :math:`\ell^-(x) = -p_c^{\gamma_-} \log(1 - p_c)`,
    :math:`p_c = \max(\sigma(x) - c, 0)`. Observed negatives (-1) are never
    corrected.

    The base loss is pluggable through its parameters, as in the paper's
    Table VII (:data:`SPLC_BASES` holds these sets):

    ==================  ======  =========  =========  ====
    base loss           margin  gamma_pos  gamma_neg  clip
    ==================  ======  =========  =========  ====
    ``'focal_margin'``  1.0     2.0        2.0        0
    ``'bce'``           0       0          0          0
    ``'focal'``         0       2.0        2.0        0
    ``'asl'``           0       0          4.0        0.05
    ==================  ======  =========  =========  ====

    The default, Focal margin + SPLC, is the paper's method: ``SPLCLoss()``
    equals the official ``SPLC(tau=0.6, change_epoch=1, margin=1.0,
    gamma=2.0)``.

    Paper versus official code (this class follows the code by default):

    * Pseudo-positives: the paper's eq. 10 gives them :math:`loss^+`, the
      focal margin loss with its margin; the official code subtracts the
      margin from observed positives only, so pseudo-positives take the
      focal loss of the unshifted logit. ``pseudo_margin=True`` gives the
      paper's form.
    * Threshold: both compare :math:`p = \sigma(x)` of the unshifted logit
      with :math:`\tau` (the code thresholds the margin-shifted logits, but
      only observed positives are shifted and they are positives anyway).
      The decision is a constant for the backward pass.
    * Start: the paper corrects "after the first epoch"; the code's
      ``epoch >= change_epoch`` with a 0-based epoch and ``change_epoch=1``
      does the same. The epoch is MMEngine's 0-based ``epoch`` from the
      ``MessageHub``; outside a Runner call :meth:`set_epoch`.
    * Scale: the official code sums over the N x C matrix; the default
      ``'mean'`` with MMPretrain's ``avg_factor=N`` divides that sum by the
      batch size (``reduction='sum'`` gives the official value). The focal
      weights are not detached in the official code (the default here).

    Args:
        tau (float): Threshold :math:`\tau \in [0, 1]` (0.65 in the paper
            for COCO with 75% of the labels). Defaults to 0.6.
        change_epoch (int): First (0-based) epoch with correction.
            Defaults to 1.
        margin (float): Logit margin :math:`m \ge 0` of observed positives.
            Defaults to 1.0.
        gamma (float): Focusing parameter of both terms. Defaults to 2.0.
        gamma_pos (float, optional): Focusing parameter of the positive
            term, overrides ``gamma``. Defaults to None.
        gamma_neg (float, optional): Focusing parameter of the negative
            term, overrides ``gamma``. Defaults to None.
        clip (float): ASL probability shift :math:`c \in [0, 1)` of the
            negative term. Defaults to 0.0.
        pseudo_margin (bool): Apply the margin to pseudo-positives too (the
            paper's eq. 10). Defaults to False (the official code).
        detach_focal_weight (bool): Treat the focal weights as constants in
            the backward pass (as ASL's official configuration does).
            Defaults to False.
        **kwargs: :class:`~.base.PartialLabelLoss`'s ``reduction`` and
            ``loss_weight``, passed on to it.

    Example:
        >>> import torch
        >>> from mmlml.models.losses import SPLCLoss
        >>> loss = SPLCLoss(reduction='none')
        >>> loss.set_epoch(1)
        >>> loss(torch.tensor([[1., 1., 0.]]), torch.tensor([[1., 0., 0.]]))
        tensor([[0.1733, 0.0227, 0.1733]])
    """

    loss_fn = splc_loss
    hyperparameters = dict(
        tau=TAU,
        change_epoch=Integer(1, low=0),
        margin=splc_loss.hyperparameters['margin'],
        gamma=Real(2.0, low=0),
        gamma_pos=Real(None, low=0, optional=True),
        gamma_neg=Real(None, low=0, optional=True),
        **hyperparameters_of(splc_loss, 'clip', 'pseudo_margin',
                             'detach_focal_weight'))

    def __init__(self,
                 *,
                 tau: float = 0.6,
                 change_epoch: int = 1,
                 margin: float = 1.0,
                 gamma: float = 2.0,
                 gamma_pos: Optional[float] = None,
                 gamma_neg: Optional[float] = None,
                 clip: float = 0.0,
                 pseudo_margin: bool = False,
                 detach_focal_weight: bool = False,
                 **kwargs):
        super().__init__(**kwargs)
        self.tau = tau
        self.change_epoch = change_epoch
        self.margin = margin
        self.gamma = gamma
        # ``gamma`` is the default of both focusing parameters.
        self.gamma_pos = gamma if gamma_pos is None else gamma_pos
        self.gamma_neg = gamma if gamma_neg is None else gamma_neg
        self.clip = clip
        self.pseudo_margin = pseudo_margin
        self.detach_focal_weight = detach_focal_weight
        check_settings(self)

    def correcting(self, cls_score: Tensor) -> Union[bool, Tensor]:
        """Whether the correction is on at the current epoch (a 0-dim
        boolean tensor of ``cls_score``'s device in training)."""
        if self.change_epoch == 0:
            return True
        return self.progress(cls_score)[0] >= self.change_epoch

    def loss_kwargs(self, cls_score: Tensor) -> Dict:
        return dict(
            tau=self.tau,
            margin=self.margin,
            gamma_pos=self.gamma_pos,
            gamma_neg=self.gamma_neg,
            clip=self.clip,
            correct=self.correcting(cls_score),
            pseudo_margin=self.pseudo_margin,
            detach_focal_weight=self.detach_focal_weight)
