"""Generalized Pseudo-label Robust Loss (GPR Loss) of AEVLP.

Tran et al., "More Reliable Pseudo-labels, Better Performance: A Generalized
Approach to Single Positive Multi-label Learning" (AEVLP), ICCV 2025,
arXiv:2508.20381 (official code: github.com/Fsoft-AIC/AEVLP, ``GPR_loss`` in
losses.py). It extends :class:`~.GRLoss` (same k(p), v(p) and epoch
schedules) with terms for pseudo-positives and pseudo-negatives and EPR's
expected-positive regulariser.

State read from the label store: ``pseudo_labels``, the
:meth:`~mmlml.structures.LabelStore.lookup` of the batch. For each
(training sample, class) the store holds a float16 whose sign bit tells:
``+1`` a pseudo-positive, ``+0.0`` a pseudo-negative, ``-p`` or NaN no
pseudo-label. The pseudo-labeller (``VLPseudoLabelHook`` with AEVLP's
settings: CLIP on the whole image and a grid of tiles, top-k, thresholds)
writes hard 1/0: the official loss reads only the hard labels
(``pseudo_labels == 1``, ``== -1``), never CLIP's scores; its weights come
from the model's own predictions. A soft value ``s`` in ``(0, 1)`` is
accepted (see :class:`GPRLoss`); a pseudo-label on an observed entry
(target 1 or -1) is ignored.
"""
from typing import Any, Dict, Sequence

import torch
from torch import Tensor

from mmlml.registry import MODELS
from mmlml.utils.hyperparameters import (REQUIRED, Real, RealTuple, Rule,
                                         check_settings, hyperparameters_of)
from .base import partial_label_loss
from .epr_loss import epr_loss, expected_positive_penalty
from .gr_loss import GRLoss, gr_loss, gr_loss_with_weights
from .utils import UNKNOWN, focal_negative, prepare_pseudo_labels, soft_bce

__all__ = ['GPRLoss', 'gpr_loss']

#: ``lam = (lam1, lam2)`` with ``0 <= lam2 <= lam1 <= 1`` (the weight
#: ``1 - v`` of a pseudo-positive is clipped to ``[lam2, lam1]``).
PSEUDO_POSITIVE_RANGE = Rule(
    lambda lam: 0 <= lam[1] <= lam[0] <= 1,
    'lam = (lam1, lam2) must satisfy 0 <= lam2 <= lam1 <= 1: the weight '
    '1 - v of a pseudo-positive is clipped to [lam2, lam1]; got {lam!r}')


@partial_label_loss(
    # a ** of declarations, taken for a possible soft_targets by mypy
    **gr_loss.hyperparameters,  # type: ignore[arg-type]
    rho=Real(0.9, low=0, high=1),
    lam=RealTuple((0.7, 0.5), names=('lam1', 'lam2')),
    reg=Real(0.001, low=0),
    expected_positives=epr_loss.hyperparameters['expected_positives'])
def gpr_loss(cls_score: Tensor, target: Tensor, w: float, b: float, mu: float,
             sigma: float, q1: float, q2: float, q3: float, rho: float,
             lam: Sequence[float], reg: float, expected_positives: float,
             pseudo_labels: Tensor) -> Tensor:
    r"""GPR Loss, functional form: the formula is :class:`GPRLoss`'s at
    the schedule values ``w, b, mu, sigma`` (see :func:`~.gr_loss.gr_loss`),
    plus ``pseudo_labels`` (``(N, C)``: 1 for a pseudo-positive, 0 for a
    pseudo-negative, NaN where an entry has none), ``weight``,
    ``reduction`` and ``avg_factor`` as in MMPretrain's losses.

    The regulariser, one number per batch, is added to each of the
    ``N x C`` entries (as in :func:`~.epr_loss.epr_loss`), so that the
    mean of the returned matrix is the official loss; ``weight`` scales
    these shares too (the batch mean inside the regulariser is
    unweighted).
    """
    PSEUDO_POSITIVE_RANGE.check('gpr_loss', dict(lam=tuple(lam)))
    num_samples, num_classes = cls_score.shape
    if expected_positives > num_classes:
        raise ValueError(f'expected_positives ({expected_positives}) '
                         f'exceeds the number of classes ({num_classes})')
    labelled, values = prepare_pseudo_labels(pseudo_labels, cls_score)
    prob = torch.sigmoid(cls_score.detach())
    k = torch.sigmoid(w * prob + b)
    v = torch.exp(-(prob - mu)**2 / (2 * sigma**2))
    base = gr_loss_with_weights.elementwise(cls_score, target, k, v, q1, q2,
                                            q3)
    lam1, lam2 = lam
    positive = (1 - v.clamp(1 - lam1, 1 - lam2)) * soft_bce(cls_score, rho)
    negative = v * focal_negative(cls_score)
    loss = torch.where(labelled & (target == UNKNOWN),
                       values * positive + (1 - values) * negative, base)
    if num_samples == 0:
        return loss
    return loss + reg * expected_positive_penalty(
        torch.sigmoid(cls_score), expected_positives)


@MODELS.register_module()
class GPRLoss(GRLoss):
    r"""GPR Loss of AEVLP (Tran et al., ICCV 2025): :class:`~.GRLoss` on the
    unannotated labels that CLIP leaves unlabelled, weighted cross-entropy
    on its pseudo-labels, and the expected-positive regulariser.

    With :math:`p = \sigma(x)`, :math:`\bar p` the same prediction with its
    gradient stopped, and :math:`k = \sigma(w\bar p + b)`,
    :math:`v = \exp(-(\bar p - \mu)^2 / 2\sigma^2)` as in
    :class:`~.GRLoss` (same parameters and epoch schedules), each element
    takes

    .. math::
        \ell = \begin{cases}
        -\log p & t = 1,\\
        s\,w_+\,[-\rho\log p - (1 - \rho)\log(1 - p)]
            + (1 - s)\,v\,[-\log(1 - p)]
            & t = 0 \text{ with a pseudo-label } s,\\
        v\Big[k\,\frac{1 - p^{q_2}}{q_2}
            + (1 - k)\,\frac{1 - (1 - p)^{q_3}}{q_3}\Big]
            & t = 0 \text{ otherwise},\\
        -\log(1 - p) & t = -1,
        \end{cases}

    with :math:`w_+ = 1 - \operatorname{clip}(v, 1 - \lambda_1,
    1 - \lambda_2)` (so :math:`w_+ \in [\lambda_2, \lambda_1]`), and the
    batch adds :math:`\frac{\gamma}{C^2}\big(\frac1N\sum_{n,c} p_{nc} -
    \kappa\big)^2` (EPR's regulariser, gradient through :math:`p`). A
    pseudo-positive (:math:`s = 1`) takes the first part, a
    pseudo-negative (:math:`s = 0`) the second; a soft :math:`s` (none
    of the official pseudo-labels) interpolates linearly. Without
    pseudo-labels and with ``reg=0`` this is :class:`~.GRLoss`.

    ``reduction='mean'`` without ``avg_factor`` gives the official value,
    the mean over the ``N x C`` elements plus the regulariser (spread over
    the elements, see :func:`gpr_loss`); with the stock head
    (``avg_factor=N``) ``loss_weight = 1 / C`` reproduces it.

    It equals the official ``GPR_loss`` (losses.py, commit ``0bad82a``)
    for the same pseudo-labels, up to the :math:`10^{-7}` the code adds
    inside its logs and the generalized cross-entropies computed from
    log-sigmoids (see :class:`~.GRLoss`). The formulas follow the code:
    of the paper, only the abstract, the overview figure (the code's
    ``assets/method.png``: the same four terms, each with a weight whose
    gradient is stopped) and the results could be read. Code vs this
    loss:

    * Pseudo-negatives: the term is the code's. The official
      pseudo-labeller means to make the ``negative_ratio`` of each image's
      classes with the lowest CLIP score negative, but writes 0 there,
      i.e. no pseudo-label (``get_pseudo_labels`` in utils.py), so the
      published runs had no pseudo-negatives. The pseudo-labeller decides.
    * Observed negatives (``-1``, absent in single-positive data): the code
      gives them :math:`v\,[-\log(1 - p)]`; here the plain
      :math:`-\log(1 - p)` of :class:`~.GRLoss`.
    * The code recomputes the pseudo-labels of each batch at every
      iteration (CLIP on randomly flipped crops); how often the store is
      rewritten is the pseudo-labeller's choice.
    * Schedules: the code's (train.py) are GR's official ones, the default
      ``schedule='official'``.

    Official values (configs/*.json), all with ``rho=0.9``, ``q2=0.01``
    and ``alpha=(0.5, 2, 0.8, 0.5)``:

    ======== ================= ==== ============ ===== ====================
    dataset  beta              q3   lam          reg   expected_positives
    ======== ================= ==== ============ ===== ====================
    VOC      (0, 2, -2, -2)    1    (0.7, 0.4)   0.05  1.5
    COCO     (0, 10, -2, -8)   1    (0.7, 0.5)   0.001 2.9
    NUS-WIDE (0, 10, -2, -8)   1    (0.7, 0.5)   0.001 1.9
    CUB      (0, 10, -2, -8)   1.5  (0.8, 0.2)   0.01  31.4
    ======== ================= ==== ============ ===== ====================

    Needs ``type='PartialLabelLinearClsHead'`` (or another
    ``PartialLabel*Head``) and the pseudo-labeller in ``custom_hooks``; the
    head hands it ``pseudo_labels`` at every call. Epochs as
    :class:`~.GRLoss`.

    Args:
        rho (float): :math:`\rho`, the target of a pseudo-positive, in
            ``[0, 1]``. Defaults to 0.9.
        lam (Sequence[float]): :math:`(\lambda_1, \lambda_2)`, the range
            ``[lam2, lam1]`` of a pseudo-positive's weight,
            ``0 <= lam2 <= lam1 <= 1``. Defaults to ``(0.7, 0.5)`` (COCO,
            NUS-WIDE: :math:`v` clipped to ``[0.3, 0.5]``).
        reg (float): :math:`\gamma`, the weight of the regulariser,
            ``>= 0``. Defaults to 0.001 (COCO, NUS-WIDE).
        expected_positives (float): :math:`\kappa`, the mean number of
            positives per image, in ``(0, C]``. Required.
        **kwargs: :class:`~.GRLoss`'s settings (``q2``, ``q3``, ``beta``,
            ``alpha``, ``linear_init``, ``schedule``, ``max_epochs``,
            ``q1``, with its defaults), ``reduction`` and
            ``loss_weight``, passed on to it.

    Example:
        >>> import torch
        >>> from mmlml.models.losses import GPRLoss
        >>> loss = GPRLoss(expected_positives=2.9, max_epochs=8)
        >>> loss.set_epoch(0)
        >>> pseudo = torch.full((2, 5), float('nan'))
        >>> pseudo[0, 2] = 1.0  # a pseudo-positive of sample 0, class 2
        >>> value = loss(torch.randn(2, 5), torch.tensor([1, 3]),
        ...              pseudo_labels=pseudo)
    """

    loss_fn = gpr_loss
    hyperparameters = dict(
        **GRLoss.hyperparameters,
        **hyperparameters_of(gpr_loss, 'rho', 'lam', 'reg',
                             'expected_positives'))
    rules = (*GRLoss.rules, PSEUDO_POSITIVE_RANGE)
    state_inputs = ('pseudo_labels', )
    state_hook = 'VLPseudoLabelHook'

    def __init__(self,
                 *,
                 rho: float = 0.9,
                 lam: Sequence[float] = (0.7, 0.5),
                 reg: float = 0.001,
                 expected_positives: float = REQUIRED,
                 **kwargs):
        super().__init__(**kwargs)
        self.rho = rho
        self.lam = lam
        self.reg = reg
        self.expected_positives = expected_positives
        check_settings(self)

    def loss_kwargs(self, cls_score: Tensor) -> Dict[str, Any]:
        return dict(
            super().loss_kwargs(cls_score),
            rho=self.rho,
            lam=self.lam,
            reg=self.reg,
            expected_positives=self.expected_positives)
