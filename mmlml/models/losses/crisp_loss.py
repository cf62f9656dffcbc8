"""CRISP: class-priors induced single-positive multi-label learning (Liu,
Xu, Wang and Geng, "Can Class-Priors Help Single-Positive Multi-Label
Learning?", arXiv:2309.13886; no public code).

The equations are the paper's Sec. 4.1 (Eq. 5 to 7, with the absolute loss
of its Appendix A.4); the class priors come from
:class:`~mmlml.hooks.ClassPriorHook` (Eq. 2, Algorithm 1) through the label
store, so the loss is a pure function of the logits, the target and three
per-class vectors.
"""
import torch
from torch import Tensor

from mmlml.registry import MODELS
from mmlml.utils.hyperparameters import (Choice, check_settings,
                                         hyperparameters_of)
from .base import PartialLabelLoss, partial_label_loss
from .utils import POSITIVE, check_values, soft_bce

__all__ = ['CRISPLoss', 'crisp_loss', 'CORRECTIONS']

#: How the second term of the risk is kept non-negative: ``'abs'`` the
#: absolute value of Eq. (6) and (7), ``'none'`` the plain rewritten risk of
#: Eq. (5).
CORRECTIONS = ('abs', 'none')


def check_class_vector(name: str, value: Tensor, cls_score: Tensor) -> Tensor:
    """A ``(C,)`` floating-point vector of values in ``[0, 1]``, in the
    logits' dtype and device, without gradient (checked on the device where
    reading it would synchronise, see :func:`~.utils.check_values`)."""
    num_classes = cls_score.size(1)
    if (not isinstance(value, Tensor) or not value.is_floating_point()
            or value.shape != (num_classes, )):
        raise ValueError(f'{name} must be a floating-point tensor of shape '
                         f'({num_classes},), got '
                         f'{getattr(value, "shape", type(value).__name__)}')
    value = value.to(cls_score).detach()
    check_values(~((value >= 0) & (value <= 1)).all(),
                 f'{name} must lie in [0, 1]')
    return value


@partial_label_loss(correction=Choice('abs', options=CORRECTIONS))
def crisp_loss(cls_score: Tensor, target: Tensor, correction: str,
               class_priors: Tensor, positive_rates: Tensor,
               prior_estimated: Tensor) -> Tensor:
    """CRISP loss, functional form: the formula and the arguments are
    :class:`CRISPLoss`'s, plus ``class_priors``, ``positive_rates`` and
    ``prior_estimated`` (``(C,)`` each, keyword arguments), ``weight``,
    ``reduction`` and ``avg_factor`` as in MMPretrain's losses."""
    priors = check_class_vector('class_priors', class_priors, cls_score)
    rates = check_class_vector('positive_rates', positive_rates, cls_score)
    active = check_class_vector('prior_estimated', prior_estimated, cls_score)
    positive = (target == POSITIVE).to(cls_score)
    prob = torch.sigmoid(cls_score)
    # Eq. (7), first term: 2 pi_j / n^p_j over the observed positives; in a
    # batch of N samples each one stands for n / n^p_j = 1 / rho_j samples
    # (0 for a class without observed positives: it has no such term).
    ratio = torch.where(rates > 0, 2 * priors / rates.clamp(min=1e-12),
                        torch.zeros_like(rates))
    labelled = ratio * positive * (1 - prob)
    # Eq. (7), second term: |mean_i f_j(x_i) - pi_j|, written per entry with
    # the sign of the batch's difference (no gradient), so that the mean
    # over the samples is the absolute value, with its gradient.
    aligned = prob - priors
    if correction == 'abs':
        aligned = torch.sign(aligned.detach().sum(0)) * aligned
    crisp = labelled + aligned
    # Warm-up (Appendix A.6): AN, BCE with unannotated labels negative, for
    # the classes whose prior is not estimated yet.
    warmup = soft_bce(cls_score, positive)
    return active * crisp + (1 - active) * warmup


@MODELS.register_module()
class CRISPLoss(PartialLabelLoss):
    r"""CRISP: the class-prior induced risk of single-positive multi-label
    learning (Liu et al., arXiv:2309.13886, Sec. 4.1), with the class
    priors :math:`\pi_j` that :class:`~mmlml.hooks.ClassPriorHook`
    estimates after each epoch (Eq. 2).

    **The risk.** With the absolute loss :math:`\ell(f_j(x), y_j) = |f_j(x)
    - y_j|` on the probabilities :math:`f_j = \sigma(g_j)` (:math:`g_j` the
    logit; Appendix A.4) and :math:`p(x) = \pi_j\,p(x \mid y_j = 1) + (1 -
    \pi_j)\,p(x \mid y_j = 0)`, the fully supervised risk rewrites as
    (Eq. 5; the positive and unlabelled parts are the paper's
    :math:`R^L_{sp}` and :math:`R^U_{sp}`, Lemma A.1)

    .. math::
        R(f) = \sum_{j=1}^c 2\pi_j\,
            \mathbb{E}_{x \sim p(x \mid y_j = 1)}[1 - f_j(x)]
            + \sum_{j=1}^c \big(\mathbb{E}_{x \sim p(x)}[f_j(x)]
            - \pi_j\big).

    The first term needs positives only, the second aligns the model's
    mean prediction with the prior. Its estimate can turn negative during
    training, so the second term takes an absolute value (Eq. 6), and the
    empirical risk is (Eq. 7)

    .. math::
        \hat R(f) = \sum_{j=1}^c \frac{2\pi_j}{n^p_j}
            \sum_{x \in S^L_j} \big(1 - f_j(x)\big)
            + \sum_{j=1}^c \Big|\frac{1}{n}\sum_{i=1}^n f_j(x_i)
            - \pi_j\Big|,

    :math:`S^L_j` the :math:`n^p_j` training samples observed positive for
    class :math:`j` among the :math:`n`. ``correction='none'`` drops the
    absolute value (the empirical form of Eq. 5).

    **In a batch** of :math:`N` samples (the head's ``avg_factor=N``), the
    element-wise loss is

    .. math::
        l_{ij} = \frac{2\pi_j}{\rho_j}\,[t_{ij} = 1]\,\big(1 - f_j(x_i)\big)
            + s_j\,\big(f_j(x_i) - \pi_j\big), \qquad
        s_j = \operatorname{sign}\Big(\sum_i f_j(x_i) - N\pi_j\Big),

    :math:`\rho_j = n^p_j / n` (``positive_rates``) and :math:`s_j` taken
    without gradient, so that :math:`\frac{1}{N}\sum_{i,j} l_{ij}` is Eq. (7)
    on the batch, value and gradient. The first term is a sum over samples,
    so its batch mean estimates it without bias whether or not the batch
    holds a positive of the class; the absolute value is that of the
    batch's mean (each rank's own batch under distributed training), as
    any mini-batch optimisation of Eq. (7) takes it. A sample or element
    weight multiplies :math:`l_{ij}` after :math:`s_j` is taken from the
    unweighted batch.

    **Warm-up.** The paper first trains the network with the AN loss
    (Appendix A.6). ``prior_estimated`` (``(C,)``, 1 or 0) selects per
    class: 1, Eq. (7) with the estimated prior; 0, AN (BCE with every
    unannotated label a negative). :class:`~mmlml.hooks.ClassPriorHook`
    keeps it at 0 until its first estimate, after the warm-up epochs.

    What the paper does not state and is chosen here: the batch form above
    (it writes the risk over the whole training set); observed negatives
    (``-1``, absent from single-positive data) count as samples of
    :math:`p(x)` like unannotated labels; and its Eq. (8), a modification
    of Eq. (7) with a hyperparameter :math:`\lambda` and the logits
    :math:`g_j(x)` against the bias of rare classes' decision boundaries,
    is not implemented: its formula could not be read.

    Sources: the copy of the paper read for this implementation lost the
    typeset equations; Eq. (5) and (7) above are written from the terms
    that Lemma A.1 and Theorem 4.2 spell out (:math:`2\pi_j l_j (1 -
    f_j(x))` and :math:`f_j(x) - \pi_j`), the absolute loss of Appendix
    A.4 and the text around Eq. (6) and (7); ``test_crisp_loss.py``
    checks the loss against that transcription. Compare with Sec. 4.1 of
    the paper when in doubt.

    Scale: Eq. (7) sums over classes, and the head averages over samples,
    so ``loss_weight=1`` is the paper's risk. During the warm-up the value
    is AN summed over classes (``loss_weight=1 / C`` would be the mean of
    Cole et al.'s code).

    Needs ``type='PartialLabelLinearClsHead'`` (or another
    ``PartialLabel*Head``) and ``custom_hooks=[dict(type='ClassPriorHook')]``;
    the head hands it ``class_priors``, ``positive_rates`` and
    ``prior_estimated`` at every call.

    Args:
        correction (str): ``'abs'`` (default, Eq. 7) or ``'none'`` (Eq. 5).
        **kwargs: :class:`~.base.PartialLabelLoss`'s ``reduction`` and
            ``loss_weight``, passed on to it.

    Example:
        >>> import torch
        >>> loss = CRISPLoss()
        >>> x, t = torch.zeros(2, 2), torch.tensor([[1., 0.], [0., 1.]])
        >>> half, done = torch.tensor([0.5, 0.5]), torch.ones(2)
        >>> # 2 * 0.5 / 0.5 * (1 - 0.5) / 2 per class, |0.5 - 0.5| = 0
        >>> loss(x, t, class_priors=half, positive_rates=half,
        ...      prior_estimated=done, avg_factor=2)
        tensor(1.)
    """

    loss_fn = crisp_loss
    hyperparameters = hyperparameters_of(crisp_loss)
    state_inputs = ('class_priors', 'positive_rates', 'prior_estimated')
    state_hook = 'ClassPriorHook'

    def __init__(self, *, correction: str = 'abs', **kwargs):
        super().__init__(**kwargs)
        self.correction = correction
        check_settings(self)
