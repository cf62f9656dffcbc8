"""Class-prior estimation for CRISP (Liu et al., "Can Class-Priors Help
Single-Positive Multi-Label Learning?", arXiv:2309.13886, Sec. 4.1:
Theorem 4.1, Eq. 2 and Algorithm 1)."""
import math
from typing import List, Optional

import torch
from torch import Tensor

from mmlml.evaluation.tied_ranking import (check_scores_and_positives,
                                           rank_with_ties)
from mmlml.registry import HOOKS
from mmlml.utils.hyperparameters import Flag, Integer, Real, check_settings
from .epoch_scores_hook import (WARMUP_BEFORE_END, WARMUP_EPOCHS,
                                EpochScoresHook)

__all__ = ['ClassPriorHook', 'estimate_class_priors', 'format_priors']


def estimate_class_priors(scores: Tensor,
                          positives: Tensor,
                          delta: float = 0.01,
                          tau: float = 0.01) -> Tensor:
    r"""The class-prior estimate of CRISP for every class (column): the
    paper's Eq. (2) and Theorem 4.1, the top-bin estimator of PU learning
    (Garg et al., NeurIPS 2021) applied to each label.

    For label :math:`j`, with the :math:`n` scored samples, the
    :math:`n^p_j` scored observed positives :math:`S^L_j`, and a threshold
    :math:`z` on the score :math:`f_j(x)` (Algorithm 1, step 4),

    .. math::
        \hat q_j(z) = \frac{1}{n}\sum_{i=1}^n \mathbb{1}(f_j(x_i) \ge z),
        \qquad
        \hat q^p_j(z) = \frac{1}{n^p_j}\sum_{x \in S^L_j}
            \mathbb{1}(f_j(x) \ge z),

    the threshold minimises the upper confidence bound of Theorem 4.1
    (Eq. 2) and the prior is the ratio there (step 5):

    .. math::
        \hat z = \operatorname*{arg\,min}_{z}
            \frac{\hat q_j(z)}{\hat q^p_j(z)}
            + \frac{1 + \tau}{\hat q^p_j(z)}
              \left(\sqrt{\frac{\log(4/\delta)}{2n}}
              + \sqrt{\frac{\log(4/\delta)}{2n^p_j}}\right),
        \qquad
        \hat\pi_j = \frac{\hat q_j(\hat z)}{\hat q^p_j(\hat z)}.

    :math:`\hat q_j / \hat q^p_j` over-estimates :math:`\pi_j` by the
    negatives scored above :math:`z`; the second term, the sampling error
    (with probability :math:`1 - \delta`, :math:`\tau` a slack), keeps the
    threshold out of a top bin too small to trust. As in the paper
    (Appendix A.2) the search is exhaustive over the scores of the samples:
    the ratios only change there. Only thresholds with
    :math:`\hat q^p_j(z) > 0` are tried (elsewhere the objective is
    infinite); among equal objectives the highest threshold wins. The
    estimate is clipped to 1 (a threshold above which the positives are
    rarer than the samples would give more; the paper's guarantee is about
    the optimal threshold, where the ratio is at most 1). As
    :math:`S^L_j` is part of the samples, :math:`\hat\pi_j \ge n^p_j /
    n`.

    **Few positives.** The confidence term grows as
    :math:`1/\sqrt{n^p_j}` (about 0.55 for 10 positives and
    :math:`\delta = 0.01`) and then dominates the objective, which favours
    :math:`\hat q^p_j = 1`: the threshold falls to the lowest score of an
    observed positive, and :math:`\hat\pi_j` is the fraction of samples
    scored at least as high, an over-estimate when one observed positive
    scores low. Theorem 4.1 assumes :math:`n^p_j \ge 2\log(4/\delta) /
    q^p_j(z^\star)^2` (at least 12 for :math:`\delta = 0.01`).

    Args:
        scores (Tensor): ``(N, C)`` scores, NaN for samples not scored
            (left out).
        positives (Tensor): ``(N, C)`` bool, the observed positives.
        delta (float): :math:`\delta \in (0, 1)`. Defaults to 0.01 (the
            paper's value, Appendix A.6).
        tau (float): :math:`\tau \ge 0`. Defaults to 0.01 (the paper's).

    Returns:
        Tensor: ``(C,)`` float32 priors in ``(0, 1]``, NaN for a class
        without a scored positive (every class when there is no sample,
        ``N = 0``).
    """
    check_scores_and_positives(scores, positives)
    num_samples = scores.size(0)
    if num_samples == 0:  # no threshold to search: nothing is estimated
        return torch.full((scores.size(1), ),
                          float('nan'),
                          device=scores.device)
    scores = scores.double()
    values, hits, end_row = rank_with_ties(scores, positives)
    num_all = (~torch.isnan(scores)).sum(0).double()
    num_pos = hits.sum(0).double()
    # Counts at or above each row's score: those up to the last row of its
    # group of tied scores.
    above_all = (end_row + 1).double()
    above_pos = hits.cumsum(0).gather(0, end_row).double()
    q_all = above_all / num_all.clamp(min=1)
    q_pos = above_pos / num_pos.clamp(min=1)
    log_term = math.log(4 / delta) / 2
    bound = (1 + tau) * (
        torch.sqrt(log_term / num_pos.clamp(min=1)) +
        torch.sqrt(log_term / num_all.clamp(min=1)))
    valid = (values > -math.inf) & (above_pos > 0)
    objective = torch.where(valid, (q_all + bound) / q_pos.clamp(min=1e-300),
                            torch.full_like(q_all, math.inf))
    best = objective.argmin(0, keepdim=True)  # the first: highest score
    prior = (q_all.gather(0, best) / q_pos.gather(0, best)).squeeze(0)
    prior = prior.clamp(max=1).float()
    return prior.masked_fill(num_pos == 0, float('nan'))


def format_priors(priors: Tensor, num_logged: Optional[int] = None) -> str:
    """The priors as the log line prints them: ``[0.1234, nan, ...]``
    (the first ``num_logged``; all with ``None``)."""
    values: List[str] = [f'{p:.4f}' for p in priors.tolist()[:num_logged]]
    if num_logged is not None and priors.numel() > num_logged:
        values.append('...')
    return '[' + ', '.join(values) + ']'


@HOOKS.register_module()
class ClassPriorHook(EpochScoresHook):
    r"""Class priors for :class:`~mmlml.models.losses.CRISPLoss` (CRISP,
    Liu et al., arXiv:2309.13886, Algorithm 1 and Appendix A.6).

    **Warm-up.** The paper first trains with the AN loss. For the first
    ``warmup_epochs`` epochs the loss trains AN (``prior_estimated`` is 0
    for every class); the number of warm-up epochs is not given in the
    paper, the default 1 is the fewest.

    **Estimation.** After each epoch :math:`e \ge T_w` (1-based,
    ``warmup_epochs``) the hook estimates every class prior
    :math:`\hat\pi_j` from the model's scores of all training samples and
    the observed positives (:func:`estimate_class_priors`, Eq. 2 with
    :math:`\delta` and :math:`\tau`), and the next epoch trains Eq. (7)
    with it (Algorithm 1: estimate, then train, every epoch). The priors
    are stored as ``class_priors``, with ``prior_estimated`` (1 once a
    class has an estimate) and ``positive_rates`` :math:`\rho_j = n^p_j /
    n` (which the loss needs to weigh a batch's positives): per-class
    vectors of the label store, identical on every rank, saved in every
    checkpoint and restored on resume. The estimate after the last epoch
    trains nothing but is logged and saved.

    **Scores.** The paper re-estimates the priors "via the trained model"
    after each epoch; by default (``extra_pass=True``) the hook does that:
    a pass over the training dataloader at the end of the epoch with the
    model in eval mode (the training augmentation; one forward pass over
    the training set per epoch, gathered from every rank).
    ``extra_pass=False`` saves that pass and takes the scores of the
    epoch's training forward passes instead, recorded at every iteration
    (train mode and augmentation). Those come from a model that changes
    over the epoch; the
    iteration in which a sample is scored does not depend on its labels
    (the sampler shuffles), so they are the scores of one randomised
    classifier for every sample, and the inequality the estimator rests on
    (:math:`\hat q_j / \hat q^p_j \ge \pi_j` in expectation) holds for it.
    It is only as tight as that classifier's top bin is pure: right after
    a short warm-up, the first iterations of the epoch score with a barely
    trained head, the estimates come out high (near 1 for an
    uninformative score), and the risk then keeps such a class's scores
    uninformative. On the demo, one warm-up epoch with these scores left 11
    of 20 classes between 0.73 and 1, while 5 warm-up epochs with
    ``extra_pass=True`` estimated them all within 0.25 of the truth
    (configs/crisp/README.md): hence the default.

    **Few positives.** A class with fewer than ``min_positives`` scored
    observed positives is not estimated (it keeps training AN until it has
    them); the default 1 estimates every class with a positive, as the
    paper does. See :func:`estimate_class_priors` for how an estimate from
    few positives behaves.

    **Logging.** After each estimate the log prints the priors (all of
    them, or the first ``num_logged``; ``nan`` for a class not estimated),
    their mean and how many classes are estimated; MMEngine's message hub
    holds the same list as the info ``'class_priors'``, and the visualiser
    receives each estimated prior as the scalar ``'class_prior/{j}'`` (step:
    the 1-based epoch; ``{work_dir}/{timestamp}/vis_data/scalars.json``
    with the default ``LocalVisBackend``), from which
    ``tools/analysis/plot_class_priors.py`` plots them against the
    dataset's true priors.

    Needs ``model.head.type='PartialLabelLinearClsHead'`` (or another
    ``PartialLabel*Head``), ``model.head.loss.type='CRISPLoss'`` and an
    epoch-based training loop.

    Args:
        delta (float): :math:`\delta \in (0, 1)`, the confidence level of
            the bound. Defaults to 0.01 (the paper's value).
        tau (float): :math:`\tau \ge 0`, the slack of the bound. Defaults
            to 0.01 (the paper's value).
        warmup_epochs (int): :math:`T_w`, the (1-based) epoch after which
            the priors are first estimated; the epochs up to it train AN.
            Smaller than the number of epochs. Defaults to 1.
        extra_pass (bool): Score the training set with a separate
            eval-mode pass after each epoch (the paper's "trained model");
            False takes the scores of the training forward passes (no
            extra pass, less reliable after a short warm-up). Defaults to
            True.
        min_positives (int): The fewest scored observed positives a class
            needs to be estimated. Defaults to 1.
        num_logged (int, optional): How many classes' priors the log line
            prints; ``None`` prints them all. Defaults to None.

    Example:
        >>> model = dict(head=dict(type='PartialLabelLinearClsHead',
        ...     loss=dict(_delete_=True, type='CRISPLoss')))
        >>> custom_hooks = [dict(type='ClassPriorHook', delta=0.01,
        ...                      tau=0.01)]
    """

    provides = ('class_priors', 'positive_rates', 'prior_estimated')

    hyperparameters = dict(
        delta=Real(0.01, low=0, high=1, low_open=True, high_open=True),
        tau=Real(0.01, low=0),
        warmup_epochs=WARMUP_EPOCHS.with_default(1),
        extra_pass=Flag(True),
        min_positives=Integer(1, low=1),
        num_logged=Integer(None, low=0, optional=True))
    rules = (WARMUP_BEFORE_END, )
    warmup_purpose = 'trained with the estimated priors'

    def __init__(self,
                 *,
                 delta: float = 0.01,
                 tau: float = 0.01,
                 warmup_epochs: int = 1,
                 extra_pass: bool = True,
                 min_positives: int = 1,
                 num_logged: Optional[int] = None):
        super().__init__()
        self.delta = delta
        self.tau = tau
        self.warmup_epochs = warmup_epochs
        self.extra_pass = extra_pass
        self.min_positives = min_positives
        self.num_logged = num_logged
        check_settings(self)

    def before_train(self, runner) -> None:
        """Check the set-up, store the observed rates and start every class
        in the warm-up (unless a resumed checkpoint holds priors).

        Args:
            runner (Runner): The runner of the training process.
        """
        super().before_train(runner)
        self.init_state()

    def init_state(self) -> None:
        """Set ``positive_rates`` from the dataset's observed labels and,
        if the store holds no priors yet, ``class_priors`` to them (a
        placeholder: no class is estimated, ``prior_estimated`` is 0)."""
        observed = self.observed_labels()
        rates = (observed == 1).sum(0).double() / max(observed.size(0), 1)
        self.store.set_class_state('positive_rates', rates)
        if 'class_priors' not in self.store.class_state:
            self.store.set_class_state('class_priors', rates)
            self.store.set_class_state('prior_estimated',
                                       torch.zeros(self.store.num_classes))

    def _estimates_after(self, runner) -> bool:
        """Whether the priors are estimated after the current epoch."""
        return runner.epoch + 1 >= self.warmup_epochs

    def scores_used_after(self, runner) -> bool:
        return self._estimates_after(runner)

    def use_epoch_scores(self, runner) -> None:
        """Estimate the priors from the epoch's scores and log them."""
        priors = self.update_priors()
        estimated = self.store.class_state['prior_estimated'].cpu() > 0
        shown = priors.masked_fill(~estimated, float('nan'))
        mean = float(shown.nanmean()) if estimated.any() else float('nan')
        runner.logger.info(
            f'{self.name}: epoch {runner.epoch + 1}: class priors '
            f'{format_priors(shown, self.num_logged)} (mean {mean:.4f}; '
            f'{int(estimated.sum())} of {priors.numel()} classes '
            'estimated).')
        runner.message_hub.update_info(
            'class_priors', shown.tolist(), resumed=False)
        scalars = {
            f'class_prior/{j}': float(priors[j])
            for j in estimated.nonzero().flatten().tolist()
        }
        if scalars:
            runner.visualizer.add_scalars(scalars, step=runner.epoch + 1)

    def update_priors(self, chunk: int = 64) -> Tensor:
        """Set ``class_priors`` to the estimate from this epoch's recorded
        scores, and ``prior_estimated`` to 1 for the classes estimated (a
        class with fewer than ``min_positives`` scored positives keeps its
        values).

        Args:
            chunk (int): Classes estimated at a time (a float64 copy of
                ``N x chunk`` scores and one sort). Defaults to 64.

        Returns:
            Tensor: The ``(C,)`` priors.
        """
        if 'class_priors' not in self.store.class_state:
            self.init_state()
        observed = self.observed_labels()
        priors = self.store.class_state['class_priors'].cpu().clone()
        estimated = self.store.class_state['prior_estimated'].cpu().clone()
        for start in range(0, self.store.num_classes, chunk):
            block = slice(start, start + chunk)
            scores = self.store.scores(block).cpu()
            positives = observed[:, block] == 1
            estimate = estimate_class_priors(scores, positives, self.delta,
                                             self.tau)
            enough = (positives & ~torch.isnan(scores)).sum(0)
            fresh = ~torch.isnan(estimate) & (enough >= self.min_positives)
            priors[block] = torch.where(fresh, estimate, priors[block])
            estimated[block] = torch.where(fresh, 1.0, estimated[block])
        self.store.set_class_state('class_priors', priors)
        self.store.set_class_state('prior_estimated', estimated)
        return priors
