"""Per-class training AP and AP-based label correction for OPML-SP (the
OPML paper, Sec. III-E)."""
import math
from typing import Optional, Tuple

import torch
from torch import Tensor

from mmlml.evaluation.tied_ranking import (check_scores_and_positives,
                                           rank_with_ties)
from mmlml.registry import HOOKS
from mmlml.utils.hyperparameters import Real, check_settings
from .epoch_scores_hook import (WARMUP_BEFORE_END, WARMUP_EPOCHS,
                                EpochScoresHook)
from .utils import found_before_train

__all__ = [
    'ClassAPCorrectionHook', 'average_precision_per_class', 'highest_per_class'
]


def average_precision_per_class(scores: Tensor, positives: Tensor) -> Tensor:
    r"""Average precision of every class (column), over the scored entries.

    .. math::
        \mathrm{AP}_c = \frac{1}{|P_c|} \sum_{i \in P_c}
            \frac{|\{j \in P_c : s_j \ge s_i\}|}{|\{j : s_j \ge s_i\}|},

    :math:`P_c` the scored positives of class :math:`c` and :math:`j`
    running over the scored entries of the class: an entry's precision
    counts every entry tied with it (scikit-learn's
    ``average_precision_score``; the label store keeps float16 scores, so
    ties happen). Without ties it equals MMPretrain's ``AveragePrecision``
    (as a fraction, not a percentage). One sort of the block, all classes
    at once.

    Args:
        scores (Tensor): ``(N, C)`` scores, NaN for entries not scored
            (left out).
        positives (Tensor): ``(N, C)`` bool, the positive entries.

    Returns:
        Tensor: ``(C,)`` float32 APs in ``[0, 1]``, NaN for a class without
        a scored positive.
    """
    check_scores_and_positives(scores, positives)
    _, hits, end_row = rank_with_ties(scores.float(), positives)
    true_pos = hits.cumsum(0)
    precision = true_pos.gather(0, end_row).double() / (end_row + 1)
    return ((precision * hits).sum(0) / hits.sum(0)).float()  # 0 / 0: NaN


def highest_per_class(scores: Tensor, candidates: Tensor,
                      k: Tensor) -> Tuple[Tensor, Tensor]:
    """The ``k[c]`` highest-scoring candidates of every class ``c``.

    Ties are broken by the lower row (a stable sort), so the choice is the
    same on every rank for the same scores. A class with fewer candidates
    gives them all. One sort of the block, all classes at once.

    Args:
        scores (Tensor): ``(N, C)`` scores; NaN entries are never chosen.
        candidates (Tensor): ``(N, C)`` bool, the entries that may be
            chosen.
        k (Tensor): ``(C,)`` integers ``>= 0``.

    Returns:
        tuple[Tensor, Tensor]: The rows and the classes of the chosen
        entries, int64.
    """
    num_samples, num_classes = scores.shape
    if candidates.shape != scores.shape or k.shape != (num_classes, ):
        raise ValueError(f'candidates must have shape {tuple(scores.shape)} '
                         f'and k ({num_classes},), got '
                         f'{tuple(candidates.shape)} and {tuple(k.shape)}')
    scores = scores.float()
    key = scores.masked_fill(~candidates | torch.isnan(scores), -math.inf)
    values, order = torch.sort(key, dim=0, descending=True, stable=True)
    ranks = torch.arange(num_samples, device=scores.device)[:, None]
    take = (ranks < k.to(ranks)[None]) & (values > -math.inf)
    rank, classes = take.nonzero(as_tuple=True)
    return order[rank, classes], classes


@HOOKS.register_module()
class ClassAPCorrectionHook(EpochScoresHook):
    r"""Per-class training AP and AP-based label correction for
    :class:`~mmlml.models.losses.OPMLSPLoss` (OPML-SP, the OPML paper,
    Sec. III-E; its equations were lost, this is the reconstruction of its
    text).

    **Training AP.** At every iteration the hook records the batch's
    probabilities from the training forward pass in the label store (train
    mode and augmentation, no extra pass; gathered from every rank). At the
    end of each epoch it computes every class's AP against the *observed*
    labels (:func:`average_precision_per_class`): the observed positives
    against the scored entries still assumed negative (unannotated, and
    observed negatives). Corrected entries are left out: they are no longer
    assumed negative, and the store keeps no score for them. The AP is
    stored as ``class_ap`` (a per-class vector of the store, saved with the
    checkpoints) and smooths the unobserved targets of the next epoch
    (:math:`\varepsilon_c = \mathrm{AP}_c^\rho`). Before the first epoch
    ends it is 0 (the first epoch trains plain OPML); a class without a
    scored positive keeps its previous value. The epoch-end work reads the
    scores a chunk of classes at a time (one float32 ``N x 64`` block and
    one sort per chunk), so it scales with the training set.

    **Label correction.** After each epoch :math:`e \ge T_w` (1-based,
    ``warmup_epochs``), for every class :math:`c`,

    .. math::
        k_c = \big\lfloor \delta\, (1 - \mathrm{AP}_c)\, N_c \big\rfloor

    entries with the highest recorded score among those still unobserved
    (observed label 0, not corrected yet) become positives (value 1) for
    good, with :math:`N_c` the number of observed positives of :math:`c`
    and :math:`\mathrm{AP}_c` the AP just measured; corrections accumulate
    over epochs. A class the model ranks well is corrected less. Every rank
    holds the same scores and picks the same entries.

    The hook needs an epoch-based training loop. Needs
    ``model.head.type='PartialLabelLinearClsHead'`` (or another
    ``PartialLabel*Head``) and an ``OPMLSPLoss`` (alone or in a
    ``LossSum``, e.g. with ``HighRankRegularizer``).

    The paper's values of :math:`\delta` and of the warm-up were lost with
    its equations; the defaults are a starting point to tune on validation
    data (``delta=0`` turns the correction off, leaving the soft labels).

    Args:
        warmup_epochs (int): :math:`T_w`, the first (1-based) epoch after
            which labels are corrected. Defaults to 5.
        delta (float): :math:`\delta \ge 0`, the correction ratio.
            Defaults to 0.1.

    Example:
        >>> model = dict(head=dict(type='PartialLabelLinearClsHead',
        ...     loss=dict(_delete_=True, type='LossSum', losses=[
        ...         dict(type='OPMLSPLoss', rho=1.0),
        ...         dict(type='HighRankRegularizer', loss_weight=1e-3)])))
        >>> custom_hooks = [dict(type='ClassAPCorrectionHook',
        ...                      warmup_epochs=5, delta=0.1)]
    """

    provides = ('pseudo_labels', 'class_ap')

    hyperparameters = dict(
        warmup_epochs=WARMUP_EPOCHS.with_default(5), delta=Real(0.1, low=0))
    rules = (WARMUP_BEFORE_END, )
    warmup_purpose = 'trained on corrected labels'

    def __init__(self, *, warmup_epochs: int = 5, delta: float = 0.1):
        super().__init__()
        self.warmup_epochs = warmup_epochs
        self.delta = delta
        check_settings(self)
        self.num_positives: Optional[Tensor] = None

    def before_train(self, runner) -> None:
        """Check the set-up, count the observed positives and start the
        AP at 0 (unless a resumed checkpoint holds one).

        Args:
            runner (Runner): The runner of the training process.
        """
        super().before_train(runner)
        self.num_positives = (self.observed_labels() == 1).sum(0)
        if 'class_ap' not in self.store.class_state:
            self.store.set_class_state('class_ap',
                                       torch.zeros(self.store.num_classes))

    def use_epoch_scores(self, runner) -> None:
        """Measure the AP, then correct labels after the warm-up."""
        correct = runner.epoch + 1 >= self.warmup_epochs
        added = self.update_labels(correct)
        message = (f'{self.name}: epoch {runner.epoch + 1}: mean training '
                   'AP '
                   f'{float(self.store.class_state["class_ap"].mean()):.4f}')
        if correct:
            message += (f', {added} new corrections, '
                        f'{self.store.num_pseudo_labels} in all')
        runner.logger.info(message + '.')

    def update_labels(self, correct: bool = True, chunk: int = 64) -> int:
        """Set ``class_ap`` to the AP of this epoch's recorded scores
        against the observed labels (a class without a scored positive
        keeps its value), then, with ``correct``, turn the ``k_c``
        highest-scoring unobserved entries of every class into positives.

        Args:
            correct (bool): Correct labels too. Defaults to True.
            chunk (int): Classes scored at a time (a float32 copy of
                ``N x chunk`` scores). Defaults to 64.

        Returns:
            int: The number of entries corrected.
        """
        observed = self.observed_labels()
        class_ap = self.store.class_state['class_ap'].cpu().clone()
        positives = found_before_train(self.num_positives, self.name,
                                       'positive counts')
        rows, classes = [], []
        for start in range(0, self.store.num_classes, chunk):
            block = slice(start, start + chunk)
            scores = self.store.scores(block).cpu()  # NaN: corrected, unscored
            measured = average_precision_per_class(scores,
                                                   observed[:, block] == 1)
            class_ap[block] = torch.where(
                torch.isnan(measured), class_ap[block], measured)
            if not correct:
                continue
            k = (self.delta * (1 - class_ap[block].double()) *
                 positives[block].double()).floor().long()
            row, column = highest_per_class(scores, observed[:, block] == 0, k)
            rows.append(row)
            classes.append(column + start)
        self.store.set_class_state('class_ap', class_ap)
        if not rows:
            return 0
        # Every rank holds the same scores and picks the same entries.
        return self.store.assign(
            torch.cat(rows), torch.cat(classes), 1.0, gather=False)
