"""Leveraged asymmetric loss with disambiguation (LASD).

"Leveraged Asymmetric Loss with Disambiguation for Multi-Label Recognition
with One-Positive Annotations" (anonymous authors, paper under double-blind
review; eq. 6, Theorem 5.4). No code was published.
"""
from typing import Optional, Union

import torch
from torch import Tensor

from mmlml.registry import MODELS
from mmlml.utils.hyperparameters import (Real, Rule, check_settings,
                                         hyperparameters_of)
from .base import PartialLabelLoss, partial_label_loss
from .utils import POSITIVE, UNKNOWN, by_state, focal_negative, focal_positive

__all__ = ['lasd_lambda_neg', 'lasd_loss', 'LASDLoss']

LAMBDA_POS = Real(0.1, low=0)
#: The mean number of positives of an image, from which ``lambda_neg`` is
#: computed.
EXPECTED_POSITIVES = Real(None, low=1, optional=True)


def lasd_lambda_neg(lambda_pos: float, num_positives: Union[float, Tensor],
                    num_classes: int) -> Union[float, Tensor]:
    r"""The negative leverage of Theorem 5.4,
    :math:`\lambda_- = \frac{1 + \lambda_+ (|y| - 1)}{K - |y|}`.

    Args:
        lambda_pos (float): :math:`\lambda_+ \ge 0`.
        num_positives (float | Tensor): :math:`|y|`, the number of positives
            of an image: a number in ``[1, K)`` (e.g. the dataset's mean), or
            a tensor of per-sample counts, clamped to ``[1, K - 1]`` (a
            sample with no observed positive counts as one).
        num_classes (int): :math:`K`.

    Returns:
        float | Tensor: :math:`\lambda_-`, of the type of ``num_positives``.
    """
    LAMBDA_POS.validate('lambda_pos', lambda_pos)
    if isinstance(num_positives, Tensor):
        count = num_positives.clamp(min=1, max=max(num_classes - 1, 1))
        return (1 + lambda_pos *
                (count - 1)) / (num_classes - count).clamp(min=1)
    EXPECTED_POSITIVES.validate('expected_positives', num_positives)
    if num_positives >= num_classes:
        raise ValueError('expected_positives must be smaller than the '
                         f'number of classes {num_classes}, got '
                         f'{num_positives!r}')
    return (1 + lambda_pos * (num_positives - 1)) / (
        num_classes - num_positives)


#: ``lambda_neg`` is given or computed from ``expected_positives``.
LEVERAGE = Rule(
    lambda lambda_neg, expected_positives: lambda_neg is None or
    expected_positives is None,
    'give lambda_neg or expected_positives (from which lambda_neg is '
    'computed), not both; got lambda_neg={lambda_neg!r}, '
    'expected_positives={expected_positives!r}')


@partial_label_loss(
    lambda_pos=LAMBDA_POS,
    lambda_neg=Real(None, low=0, optional=True),
    expected_positives=EXPECTED_POSITIVES,
    tau=Real(0.9, low=0, high=1),
    gamma_pos=Real(0.0, low=0),
    gamma_neg=Real(4.0, low=0),
    observed_negative_weight=Real(None, low=0, optional=True))
def lasd_loss(cls_score: Tensor, target: Tensor, lambda_pos: float,
              lambda_neg: Optional[float], expected_positives: Optional[float],
              tau: float, gamma_pos: float, gamma_neg: float,
              observed_negative_weight: Optional[float]) -> Tensor:
    """LASD, functional form: the formula, the arguments and their defaults
    are :class:`LASDLoss`'s, plus ``weight``, ``reduction`` and
    ``avg_factor`` as in MMPretrain's losses."""
    LEVERAGE.check(
        'lasd_loss',
        dict(lambda_neg=lambda_neg, expected_positives=expected_positives))
    negative_weight: Union[float, Tensor]
    if lambda_neg is not None:
        negative_weight = lambda_neg
    else:
        num_positives: Union[float, Tensor]
        if expected_positives is not None:
            num_positives = expected_positives
        else:
            num_positives = (target == POSITIVE).sum(
                dim=1, keepdim=True).to(cls_score)
        negative_weight = lasd_lambda_neg(lambda_pos, num_positives,
                                          cls_score.size(1))
    observed_weight = negative_weight if observed_negative_weight is None \
        else observed_negative_weight
    positive = focal_positive(cls_score, gamma_pos)
    negative = focal_negative(cls_score, gamma_neg)
    # Disambiguation: a decision, constant for the backward pass.
    pseudo = (target == UNKNOWN) & (torch.sigmoid(cls_score.detach()) > tau)
    unannotated = torch.where(pseudo, lambda_pos * positive,
                              negative_weight * negative)
    return by_state(target, positive, unannotated, observed_weight * negative)


@MODELS.register_module()
class LASDLoss(PartialLabelLoss):
    r"""Leveraged asymmetric loss with disambiguation (LASD), from
    "Leveraged Asymmetric Loss with Disambiguation for Multi-Label
    Recognition with One-Positive Annotations" (eq. 6).

    Observed positives take the asymmetric positive term; an unannotated
    label is a pseudo-positive, leveraged by :math:`\lambda_+`, when its
    probability exceeds :math:`\tau`, and a pseudo-negative, leveraged by
    :math:`\lambda_-`, otherwise:

    .. math::
        \mathcal{L} = \sum_{k=1}^{K} \Big[ \mathbf{1}_{[t_k = 1]}
            L_{\gamma_+}(p_k)
            + \lambda_+ \mathbf{1}_{[t_k = 0]} \mathbf{1}_{[p_k > \tau]}
            L_{\gamma_+}(p_k)
            + \lambda_- \mathbf{1}_{[t_k \ne 1]}
            \mathbf{1}_{[p_k \le \tau \,\vee\, t_k = -1]}
            L_{\gamma_-}(p_k) \Big],

    with :math:`L_{\gamma_+}(p) = -(1 - p)^{\gamma_+} \log p` and
    :math:`L_{\gamma_-}(p) = -p^{\gamma_-} \log(1 - p)`. The threshold
    decision is a constant for the backward pass. Stateless.

    :math:`\lambda_-` defaults to the value for which Theorem 5.4 proves
    LASD consistent with the cost-sensitive Hamming loss,
    :math:`1 + \lambda_+(|y| - 1) = \lambda_- (K - |y|)`, with :math:`K`
    the number of classes (from ``cls_score``) and :math:`|y|` the number
    of positives of an image, replaced by ``expected_positives`` (the paper
    uses the dataset's mean: VOC 1.5, COCO 2.9, NUS 1.9, CUB 31.4). Without
    ``expected_positives``, :math:`|y|` is each sample's number of observed
    positives (at least 1): with one positive per image that is
    :math:`\lambda_- = 1/(K - 1)`, WAN's weight, whatever :math:`\lambda_+`.

    Special cases: :math:`\lambda_+ = \lambda_- = 1` is SPLC without margin
    on the ASL base without probability shift
    (``SPLCLoss(margin=0, gamma_pos=0, gamma_neg=4, clip=0)`` after its
    start epoch); with also
    :math:`\tau = 1` it is ASL without probability shift; :math:`\tau = 1,
    \gamma_\pm = 0` is WAN with negative weight :math:`\lambda_-` (and BCE,
    AN, for :math:`\lambda_- = 1`).

    Note:
        The paper treats single-positive data, without observed negatives.
        Here an observed negative (-1) is a known negative: it is never a
        pseudo-positive and always takes :math:`\lambda_- L_{\gamma_-}`.
        Weighting it by :math:`\lambda_-` like the pseudo-negatives keeps
        the cost-sensitive balance of Theorem 5.3, where every true
        negative is weighted by :math:`\lambda_-`;
        ``observed_negative_weight`` sets another weight (e.g. 1.0).

    Note:
        The paper's full objective adds a consistency regularisation
        :math:`\alpha \Phi(x)`, the squared distances between the
        predictions for an image and two random augmentations of it
        (eq. 7-8). It needs several views of each image and so is not part
        of this loss: the model
        :class:`~mmlml.models.classifiers.ConsistencyClassifier` adds it
        (``consistency_weight`` :math:`\alpha`), with this loss in its head
        on the original view; see ``configs/demo/lasd_cr.py``.

    Note:
        Scale: eq. 6 sums over the classes of an image; there is no official
        code. The default ``'mean'`` with MMPretrain's ``avg_factor=N`` is
        eq. 6 averaged over the batch. (The paper's baselines are written
        with a :math:`1/K` factor, i.e. a mean over classes.)

    Defaults: :math:`\gamma_+ = 0, \gamma_- = 4` are fixed in the paper.
    :math:`\lambda_+` and :math:`\tau` were tuned per dataset (Table 4:
    VOC 0.10/0.90, COCO 0.03/0.90, NUS 0.015/0.95, CUB 0.005/0.93). The
    defaults are VOC's: :math:`\tau = 0.9` is also COCO's and lies in the
    middle of the searched range (0.85, 1); :math:`\lambda_+ = 0.1` is the
    optimum of the paper's parameter study (its Fig. 1, on VOC), whose
    20 classes match the demo data set. Larger label spaces call for a
    smaller :math:`\lambda_+` (about 0.03 for 80 classes, 0.005 for 312).

    Args:
        lambda_pos (float): Leverage :math:`\lambda_+ \ge 0` of the
            pseudo-positives. Defaults to 0.1.
        lambda_neg (float, optional): Leverage :math:`\lambda_- \ge 0` of
            the pseudo-negatives. Defaults to None (Theorem 5.4).
        expected_positives (float, optional): Mean number of positives per
            image, in ``[1, K)``, for Theorem 5.4; not together with
            ``lambda_neg``. Defaults to None (per-sample observed count).
        tau (float): Disambiguation threshold :math:`\tau \in [0, 1]`.
            Defaults to 0.9.
        gamma_pos (float): Focusing parameter :math:`\gamma_+ \ge 0`.
            Defaults to 0.0.
        gamma_neg (float): Focusing parameter :math:`\gamma_- \ge 0`.
            Defaults to 4.0.
        observed_negative_weight (float, optional): Weight of the observed
            negatives' term. Defaults to None (:math:`\lambda_-`).
        **kwargs: :class:`~.base.PartialLabelLoss`'s ``reduction`` and
            ``loss_weight``, passed on to it.

    Example:
        >>> import torch
        >>> from mmlml.models.losses import LASDLoss
        >>> loss = LASDLoss(expected_positives=2, reduction='none')
        >>> # lambda_neg = (1 + 0.1 * (2 - 1)) / (3 - 2) = 1.1
        >>> loss(torch.tensor([[0., 3., 0.]]), torch.tensor([[1., 0., 0.]]))
        tensor([[0.6931, 0.0049, 0.0477]])
    """

    loss_fn = lasd_loss
    hyperparameters = hyperparameters_of(lasd_loss)
    rules = (LEVERAGE, )

    def __init__(self,
                 *,
                 lambda_pos: float = 0.1,
                 lambda_neg: Optional[float] = None,
                 expected_positives: Optional[float] = None,
                 tau: float = 0.9,
                 gamma_pos: float = 0.0,
                 gamma_neg: float = 4.0,
                 observed_negative_weight: Optional[float] = None,
                 **kwargs):
        super().__init__(**kwargs)
        self.lambda_pos = lambda_pos
        self.lambda_neg = lambda_neg
        self.expected_positives = expected_positives
        self.tau = tau
        self.gamma_pos = gamma_pos
        self.gamma_neg = gamma_neg
        self.observed_negative_weight = observed_negative_weight
        check_settings(self)
