"""Asymmetric pseudo-labelling (APL) of Zhou et al., ECCV 2022."""
from typing import Optional

import torch

from mmlml.registry import HOOKS
from mmlml.utils.hyperparameters import Flag, Real, check_settings
from .epoch_scores_hook import (WARMUP_BEFORE_END, WARMUP_EPOCHS,
                                EpochScoresHook)
from .utils import found_before_train

__all__ = ['APLHook']


@HOOKS.register_module()
class APLHook(EpochScoresHook):
    r"""Asymmetric pseudo-labelling (APL) for :class:`~mmlml.models.losses.
    EMAPLLoss` (Zhou et al., "Acknowledging the Unknown for Multi-label
    Learning with Single Positive Labels", ECCV 2022, Sec. 3.3).

    After each epoch :math:`T_w \le e < T` (1-based, ``warmup_epochs``), for
    every class :math:`c`, the ``quota`` entries with the lowest predicted
    probability among those still unannotated (observed label 0, no
    pseudo-label yet) become *soft negative* pseudo-labels whose value is
    that probability :math:`s = p`; they are never updated and never
    positive. The quota of each call is

    .. math::
        q_c = \left\lfloor \frac{\theta\, Z_c}{T - T_w} \right\rfloor,

    with :math:`Z_c` the number of unannotated entries of class :math:`c`
    in the initial labels, :math:`T` the number of epochs and :math:`\theta`
    ``theta``, as in the official code. So the :math:`T - T_w` calls
    label the fraction :math:`\theta` of the unannotated entries. The
    official code also assigns after the last epoch, where the labels would
    train nothing (and, one call more than the quota counts, would label
    every entry left); this hook skips that call and the scores it needs.

    The probabilities are by default those of the training forward pass
    over the epoch (train mode and augmentation, no extra pass: recorded
    in the label store at every iteration, from the head's last loss
    inputs). ``extra_pass=True`` runs the official procedure instead: a
    pass over the training dataloader at the end of the epoch with the
    model in eval mode (so with the training augmentation). Under DDP every
    rank records its samples and the store gathers them, so all ranks pick
    the same pseudo-labels.

    Needs ``model.head.type='PartialLabelLinearClsHead'`` and
    ``model.head.loss.type='EMAPLLoss'``. Paper values of ``warmup_epochs``
    (10 epochs in all): VOC 5, COCO 5, NUS-WIDE 4, CUB 3.

    Args:
        warmup_epochs (int): :math:`T_w`, the first (1-based) epoch after
            which entries are pseudo-labelled; smaller than the number of
            epochs. Defaults to 5.
        theta (float): :math:`\theta`, the fraction of the unannotated
            entries pseudo-labelled over the remaining epochs, in
            ``(0, 1]``. Defaults to 0.9.
        extra_pass (bool): Score the training set with a separate
            eval-mode pass (the official procedure) instead of the training
            forward pass. Defaults to False.

    Example:
        >>> model = dict(head=dict(type='PartialLabelLinearClsHead',
        ...     loss=dict(_delete_=True, type='EMAPLLoss', alpha=0.1,
        ...               beta=0.9)))
        >>> custom_hooks = [dict(type='APLHook', warmup_epochs=5)]
    """

    hyperparameters = dict(
        warmup_epochs=WARMUP_EPOCHS.with_default(5),
        theta=Real(0.9, low=0, high=1, low_open=True),
        extra_pass=Flag(False))
    rules = (WARMUP_BEFORE_END, )
    warmup_purpose = 'to pseudo-label'

    def __init__(self,
                 *,
                 warmup_epochs: int = 5,
                 theta: float = 0.9,
                 extra_pass: bool = False):
        super().__init__()
        self.warmup_epochs = warmup_epochs
        self.theta = theta
        self.extra_pass = extra_pass
        check_settings(self)
        self.quota: Optional[torch.Tensor] = None

    def before_train(self, runner) -> None:
        """Check the set-up and compute the per-class quota.

        Args:
            runner (Runner): The runner of the training process.
        """
        super().before_train(runner)
        remaining = runner.max_epochs - self.warmup_epochs
        zeros = (self.observed_labels() == 0).sum(0)
        self.quota = (self.theta * zeros.double() / remaining).floor().long()

    def _labels_after(self, runner) -> bool:
        """Whether pseudo-labels are assigned after the current epoch: from
        the warm-up on, except after the last, whose labels would train
        nothing."""
        return self.warmup_epochs <= runner.epoch + 1 < runner.max_epochs

    def scores_used_after(self, runner) -> bool:
        return self._labels_after(runner)

    def use_epoch_scores(self, runner) -> None:
        """Assign this epoch's soft negative pseudo-labels."""
        added = self.assign_pseudo_labels()
        runner.logger.info(
            f'APLHook: epoch {runner.epoch + 1}: {added} new soft negative '
            f'pseudo-labels, {self.store.num_pseudo_labels} in all.')

    def assign_pseudo_labels(self, chunk: int = 64) -> int:
        """Pseudo-label the ``quota`` lowest-scoring candidates of every
        class (entries with observed label 0, no pseudo-label, and a score
        recorded this epoch); their value is their score. Among equal
        scores the lower sample index goes first, so every rank picks the
        same entries.

        Args:
            chunk (int): Classes selected at a time (float32 copies of
                ``chunk x N`` scores). Defaults to 64.

        Returns:
            int: The number of entries pseudo-labelled.
        """
        observed = self.observed_labels()
        samples, classes, values = [], [], []
        quotas = found_before_train(self.quota, self.name, 'quota')
        for start in range(0, self.store.num_classes, chunk):
            block = slice(start, start + chunk)
            scores = self.store.scores(block).t().contiguous()
            candidate = (observed[:, block] == 0).t() & ~torch.isnan(scores)
            scores.masked_fill_(~candidate, float('inf'))
            quota = torch.minimum(quotas[block],
                                  torch.count_nonzero(candidate, dim=1))
            # The quota-th lowest score of each class, then every score
            # below it and the first (by sample) of those equal to it.
            kth = torch.full((quota.numel(), ), float('-inf'))
            for row in quota.nonzero().squeeze(1).tolist():
                kth[row] = torch.kthvalue(scores[row], int(quota[row])).values
            take = scores < kth[:, None]
            equal = scores == kth[:, None]
            need = quota - torch.count_nonzero(take, dim=1)
            ties = torch.count_nonzero(equal, dim=1) > need
            take |= equal & ~ties[:, None]
            for row in ties.nonzero().squeeze(1).tolist():
                first = equal[row].nonzero().squeeze(1)[:int(need[row])]
                take[row, first] = True
            rows, cols = take.nonzero(as_tuple=True)
            samples.append(cols)
            classes.append(rows + start)
            values.append(scores[rows, cols])
        # Every rank holds the same scores and picks the same, distinct
        # entries: nothing needs gathering.
        return self.store.assign(
            torch.cat(samples),
            torch.cat(classes),
            torch.cat(values),
            gather=False)
