"""Vision-language pseudo-labels (VLPL): entropy maximisation plus CLIP's
pseudo-labels.

Xing et al., "Vision-Language Pseudo-Labels for Single-Positive Multi-Label
Learning" (VLPL), CVPR 2024 Workshops, arXiv:2310.15985 (official code:
github.com/mvrl/VLPL, ``loss_EM_PL`` in losses.py).

State read from the label store: ``pseudo_labels``, the
:meth:`~mmlml.structures.LabelStore.lookup` of the batch. For each
(training sample, class) the store holds a float16 whose sign bit tells:
``+1`` a pseudo-positive (CLIP's score above the threshold, 0.3 in the
paper), ``+0.0`` a pseudo-negative (only where the pseudo-labeller is asked
for them), ``-p`` or NaN no pseudo-label. The pseudo-labeller
(``VLPseudoLabelHook``) applies the thresholds and writes hard 1/0: the
official loss reads only hard labels, never CLIP's scores. A soft value
``s`` in ``(0, 1)`` is accepted (see :class:`VLPLLoss`); a pseudo-label on
an observed entry (target 1 or -1) is ignored.
"""
import torch
from torch import Tensor

from mmlml.registry import MODELS
from mmlml.utils.hyperparameters import (Real, check_settings,
                                         hyperparameters_of)
from .base import partial_label_loss
from .em_loss import EMLoss, em_loss
from .utils import UNKNOWN, prepare_pseudo_labels, soft_bce

__all__ = ['VLPLLoss', 'vlpl_loss']


@partial_label_loss(
    alpha=em_loss.hyperparameters['alpha'],
    beta_pos=Real(0.7, low=0),
    beta_neg=Real(0.0, low=0),
    smoothing=Real(0.1, low=0, high=0.5))
def vlpl_loss(cls_score: Tensor, target: Tensor, alpha: float, beta_pos: float,
              beta_neg: float, smoothing: float,
              pseudo_labels: Tensor) -> Tensor:
    """VLPL loss, functional form: the formula and the arguments are
    :class:`VLPLLoss`'s, plus ``pseudo_labels`` (``(N, C)``: 1 for a
    pseudo-positive, 0 for a pseudo-negative, NaN where an entry has none),
    ``weight``, ``reduction`` and ``avg_factor`` as in MMPretrain's
    losses."""
    labelled, values = prepare_pseudo_labels(pseudo_labels, cls_score)
    soft_target = smoothing + (1 - 2 * smoothing) * values
    weight = beta_neg + (beta_pos - beta_neg) * values
    return torch.where(labelled & (target == UNKNOWN),
                       weight * soft_bce(cls_score, soft_target),
                       em_loss.elementwise(cls_score, target, alpha))


@MODELS.register_module()
class VLPLLoss(EMLoss):
    r"""VLPL loss of Xing et al. (CVPRW 2024): :class:`~.EMLoss` on the
    unannotated labels that CLIP leaves unlabelled, and a weighted,
    label-smoothed cross-entropy on its pseudo-labels.

    A frozen CLIP model scores every training image against the class
    names; the pseudo-labeller (``VLPseudoLabelHook``) writes a
    pseudo-positive :math:`s = 1` where the score passes the threshold
    (optionally a pseudo-negative :math:`s = 0` where it is lowest) into
    the label store. With :math:`p = \sigma(x)`:

    .. math::
        \ell = \begin{cases}
        -\log p & t = 1,\\
        -\beta(s)\,[\tilde s\log p + (1 - \tilde s)\log(1 - p)]
            & t = 0 \text{ with a pseudo-label } s,\\
        -\alpha\,H(p) & t = 0 \text{ otherwise},\\
        -\log(1 - p) & t = -1,
        \end{cases}

    .. math::
        \tilde s = \epsilon + (1 - 2\epsilon)\,s, \qquad
        \beta(s) = \beta_- + (\beta_+ - \beta_-)\,s,

    :math:`H(p) = -p\log p - (1 - p)\log(1 - p)`, :math:`\epsilon` the
    ``smoothing``. A pseudo-positive thus takes
    :math:`-\beta_+[0.9\log p + 0.1\log(1 - p)]`, a pseudo-negative
    :math:`-\beta_-[0.1\log p + 0.9\log(1 - p)]`; a soft :math:`s`
    (none of the official pseudo-labels) moves the target and the weight
    linearly between the two. Without pseudo-labels this is
    :class:`~.EMLoss`.

    It equals the official ``loss_EM_PL`` (losses.py, commit ``ed09b59``)
    for the same pseudo-labels, up to the :math:`10^{-5}` the code adds
    inside its logs (see :class:`~.EMLoss`). The formulas follow the code:
    of the paper, only the abstract and the results could be read. What
    the code does, and where this loss departs from it:

    * The 0.9 / 0.1 targets of the pseudo-labels are the code's
      (``smoothing=0.1``); ``smoothing=0`` is a plain cross-entropy.
    * Pseudo-negatives: the official pseudo-labeller makes them only with
      the CLIP-ViT backbone (the fraction ``partial`` of each image's
      classes with the lowest CLIP score), and ``loss_EM_PL`` leaves them
      at zero loss (its negative term is commented out; ``beta_neg`` is 0
      in every dataset's setting): ``beta_neg=0``, the default, does the
      same. With the ResNet-50 of the published numbers there are none.
    * Warm-up: the code has one (EM until ``warmup_epoch``) but sets it to
      0 for every dataset, so the pseudo-labels train from the first
      iteration. A warm-up is the pseudo-labeller's choice here (no
      pseudo-labels: EM).
    * Observed negatives (``-1``) are not in the code's single-positive
      data; they take :math:`-\log(1 - p)` and ignore any pseudo-label.
    * Scale: the code averages over the ``N x C`` elements; with the stock
      head (``avg_factor=N``) ``loss_weight = 1 / C`` reproduces it.

    Official values (main_clip.py): ``alpha`` 0.2 (VOC), 0.1 (COCO), 0.1
    (NUS-WIDE), 0.01 (CUB); ``beta_pos`` 0.7 and ``beta_neg`` 0 on all
    four.

    Needs ``type='PartialLabelLinearClsHead'`` (or another
    ``PartialLabel*Head``) and the pseudo-labeller in ``custom_hooks``; the
    head hands it ``pseudo_labels`` at every call.

    Args:
        beta_pos (float): Weight :math:`\beta_+` of the pseudo-positives,
            ``>= 0``. Defaults to 0.7.
        beta_neg (float): Weight :math:`\beta_-` of the pseudo-negatives,
            ``>= 0``. Defaults to 0.0 (official).
        smoothing (float): :math:`\epsilon`, the label smoothing of the
            pseudo-labels, in ``[0, 0.5]``. Defaults to 0.1 (official).
        **kwargs: :class:`~.EMLoss`'s ``alpha`` (the strength of the
            entropy maximisation, ``>= 0``, default 0.1),
            ``reduction`` and ``loss_weight``, passed on to it.

    Example:
        >>> import torch
        >>> from mmlml.models.losses import VLPLLoss
        >>> loss = VLPLLoss(alpha=0.2)
        >>> pseudo = torch.full((2, 5), float('nan'))
        >>> pseudo[0, 2] = 1.0  # a pseudo-positive of sample 0, class 2
        >>> value = loss(torch.randn(2, 5), torch.tensor([1, 3]),
        ...              pseudo_labels=pseudo)
    """

    loss_fn = vlpl_loss
    hyperparameters = hyperparameters_of(vlpl_loss)
    state_inputs = ('pseudo_labels', )
    state_hook = 'VLPseudoLabelHook'

    def __init__(self,
                 *,
                 beta_pos: float = 0.7,
                 beta_neg: float = 0.0,
                 smoothing: float = 0.1,
                 **kwargs):
        super().__init__(**kwargs)
        self.beta_pos = beta_pos
        self.beta_neg = beta_neg
        self.smoothing = smoothing
        check_settings(self)
