"""How the model scores the labels missing from the training annotations.

Every partial-label method is about the entries that the annotation leaves
out: a loss that assumes them negative learns the missing positives as
false negatives, and a loss that corrects labels (SPLC, LL, pseudo-labels)
tries to recover them from the model's scores.
:class:`MissingLabelDiagnosticsHook` measures both effects during training,
from the scores of the training forward pass and the full labels that
:class:`~mmlml.datasets.PartialLabelDataset` keeps aside, in the spirit of
Fig. 2 (score distributions of missing labels and true negatives) and
Fig. 7 (precision and recall of the corrected missing labels) of Zhang et
al., "Simple and Robust Loss Design for Multi-Label Learning with Missing
Labels" (the Hill / SPLC paper).
"""
import os
import os.path as osp
from typing import Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import torch
import torch.nn as nn
from mmengine.dist import all_reduce, is_main_process
from mmengine.hooks import Hook
from mmengine.model import is_model_wrapper
from mmengine.runner import IterBasedTrainLoop
from torch import Tensor

from mmlml.datasets import PartialLabelDataset
from mmlml.registry import HOOKS

__all__ = [
    'MissingLabelDiagnosticsHook', 'MissingLabelStatistics',
    'find_partial_label_dataset', 'histogram_auc'
]

DATA_BATCH = Optional[Union[dict, tuple, list]]


def find_partial_label_dataset(dataset: object) -> PartialLabelDataset:
    """Find the :class:`PartialLabelDataset` that a training dataset is or
    wraps.

    Wrappers that keep one inner dataset in ``.dataset`` (MMEngine's
    ``RepeatDataset`` and ``ClassBalancedDataset``, PyTorch's ``Subset``)
    are looked through: they fetch their samples from the inner
    :class:`PartialLabelDataset`, which sets ``sample_idx`` to its own
    index, so ``sample_idx`` still addresses its label matrices. A
    ``ConcatDataset`` is refused, because its parts reuse ``sample_idx``.

    Args:
        dataset: The training dataset.

    Returns:
        PartialLabelDataset: The partial-label dataset.

    Raises:
        TypeError: If no :class:`PartialLabelDataset` is found.
    """
    current = dataset
    seen = []
    for _ in range(16):
        if isinstance(current, PartialLabelDataset):
            return current
        seen.append(type(current).__name__)
        if hasattr(current, 'datasets'):
            raise TypeError(
                'The training dataset concatenates several datasets '
                f'({" -> ".join(seen)}), whose samples share `sample_idx` '
                'values, so the full labels of a sample cannot be found. '
                'Wrap a single PartialLabelDataset instead.')
        if not hasattr(current, 'dataset'):
            break
        current = current.dataset
    raise TypeError(
        'MissingLabelDiagnosticsHook needs the training dataset to be, or '
        'to wrap, a PartialLabelDataset (which keeps the full labels '
        f'beside the observed ones), but got {" -> ".join(seen)}.')


def histogram_auc(pos_hist: Tensor, neg_hist: Tensor) -> Tuple[Tensor, Tensor]:
    r"""The area under the ROC curve from score histograms.

    With :math:`P_b` positives and :math:`N_b` negatives in bin :math:`b`
    (bins in increasing score order), :math:`P = \sum_b P_b` and
    :math:`N = \sum_b N_b`,

    .. math::
        \mathrm{AUC} \approx \frac{1}{PN} \sum_b P_b
        \Big(\sum_{b' < b} N_{b'} + \tfrac{1}{2} N_b\Big),

    the probability that a random positive scores above a random negative
    (ties counted one half), where two scores in the same bin count as a
    tie. The exact AUC differs from it by at most
    :math:`\frac{1}{2PN} \sum_b P_b N_b`, which is returned as the error
    bound.

    Args:
        pos_hist (Tensor): Positive counts of shape ``(..., B)``.
        neg_hist (Tensor): Negative counts of the same shape.

    Returns:
        tuple[Tensor, Tensor]: The AUC and its error bound, each of shape
        ``(...)`` and dtype float64; NaN where :math:`P` or :math:`N` is 0.
    """
    pos = pos_hist.double()
    neg = neg_hist.double()
    neg_below = neg.cumsum(-1) - neg
    pairs = pos.sum(-1) * neg.sum(-1)
    auc = (pos * (neg_below + 0.5 * neg)).sum(-1) / pairs
    bound = 0.5 * (pos * neg).sum(-1) / pairs
    return auc, bound


class MissingLabelStatistics:
    r"""Per-class score statistics of the unannotated training labels.

    An entry ``(i, c)`` is *unannotated* when its observed label is 0. It
    is a *missing positive* when its full label is 1 and an *unannotated
    negative* when its full label is 0. For each class, the statistics
    hold, in ``O(C x num_bins)`` memory whatever the number of samples:

    - ``hist`` (int64, ``(2, C, num_bins)``): histograms of the logits of
      the missing positives (``hist[0]``) and of the unannotated negatives
      (``hist[1]``). The bins are uniform in logit space over
      ``[-logit_range, logit_range]``; the first and last bins extend to
      infinity. Logit bins keep apart the small probabilities where partial
      label models put most unannotated entries, which uniform bins in
      probability would merge.
    - ``counts`` (int64, ``(3, C)``): missing positives with
      :math:`p \ge` ``thr``, unannotated negatives with :math:`p \ge`
      ``thr`` (both exact, not binned), and observed positives.
    - ``score_sums`` (float64, ``(2, C)``): the sums of
      :math:`p = \sigma(\text{logit})` over missing positives and over
      unannotated negatives.
    - ``num_samples`` (int64, ``(1,)``): the number of rows seen.

    Args:
        num_classes (int): Number of classes ``C``.
        num_bins (int): Number of histogram bins. Defaults to 100.
        logit_range (float): Half-width of the binned logit interval.
            Defaults to 10.
        thr (float): The probability threshold of the counts above.
            Defaults to 0.5.
    """

    def __init__(self,
                 num_classes: int,
                 num_bins: int = 100,
                 logit_range: float = 10.,
                 thr: float = 0.5):
        if not isinstance(num_classes, int) or num_classes < 1:
            raise ValueError('`num_classes` must be a positive int, but got '
                             f'{num_classes!r}.')
        _check_args(num_bins, logit_range, thr)
        self.num_classes = num_classes
        self.num_bins = num_bins
        self.logit_range = float(logit_range)
        self.thr = float(thr)
        self.reset()

    def reset(self, device: Union[str, torch.device, None] = None) -> None:
        """Zero the statistics, on ``device`` (default: where they are)."""
        if device is None:
            device = getattr(self, 'device', 'cpu')
        self.device = torch.device(device)
        c, b = self.num_classes, self.num_bins
        self.hist = torch.zeros(2, c, b, dtype=torch.int64, device=device)
        self.counts = torch.zeros(3, c, dtype=torch.int64, device=device)
        self.score_sums = torch.zeros(2, c, dtype=torch.float64, device=device)
        self.num_samples = torch.zeros(1, dtype=torch.int64, device=device)

    def to(self, device: Union[str, torch.device]) -> None:
        """Move the statistics to ``device``."""
        self.device = torch.device(device)
        for name in ('hist', 'counts', 'score_sums', 'num_samples'):
            setattr(self, name, getattr(self, name).to(device))

    @property
    def bin_edges(self) -> Tensor:
        """Tensor: The ``num_bins + 1`` logit edges of the bins; the outer
        bins also take the logits beyond the first and last edge."""
        return torch.linspace(
            -self.logit_range,
            self.logit_range,
            self.num_bins + 1,
            dtype=torch.float64)

    def bin_index(self, logits: Tensor) -> Tensor:
        """The bin of each logit (float32 arithmetic), as int64."""
        scale = self.num_bins / (2 * self.logit_range)
        index = (logits.float() + self.logit_range) * scale
        # Clamp before the cast: infinities go to the outer bins, NaN to
        # the first one.
        index = torch.nan_to_num(index, nan=0.).clamp_(0, self.num_bins - 1)
        return index.floor_().long()

    @torch.no_grad()
    def update(self, logits: Tensor, observed: Tensor, full: Tensor) -> None:
        """Add a batch.

        Args:
            logits (Tensor): Logits of shape ``(N, C)``.
            observed (Tensor): Observed labels of shape ``(N, C)``: 1
                observed positive, 0 unannotated, -1 observed negative.
            full (Tensor): Full labels of shape ``(N, C)``, 0 or 1.
        """
        if logits.dim() != 2 or logits.size(1) != self.num_classes:
            raise ValueError(
                f'logits must have shape (N, {self.num_classes}), but got '
                f'{tuple(logits.shape)}.')
        if observed.shape != logits.shape or full.shape != logits.shape:
            raise ValueError(
                'logits, observed and full must have the same shape, but '
                f'got {tuple(logits.shape)}, {tuple(observed.shape)} and '
                f'{tuple(full.shape)}.')
        # MPS has no float64: keep the statistics on the CPU there.
        device = logits.device if logits.device.type != 'mps' \
            else torch.device('cpu')
        if device != self.device:
            self.to(device)
        logits = logits.detach().to(device, torch.float32)
        observed = observed.to(device)
        full = full.to(device).bool()

        unknown = observed == 0
        missing_pos = unknown & full
        unknown_neg = unknown & ~full
        c, b = self.num_classes, self.num_bins

        # One bincount: key = kind * C * B + class * B + bin, over the
        # unannotated entries (kind 0: missing positive, 1: negative).
        key = self.bin_index(logits) + torch.arange(c, device=device).mul_(b)
        key = key + (~full).long() * (c * b)
        self.hist += torch.bincount(
            key[unknown], minlength=2 * c * b).view(2, c, b)

        prob = logits.sigmoid()
        above = prob >= self.thr
        self.counts[0] += (missing_pos & above).sum(0)
        self.counts[1] += (unknown_neg & above).sum(0)
        self.counts[2] += (observed == 1).sum(0)
        prob = prob.double()
        self.score_sums[0] += prob.where(missing_pos, 0.).sum(0)
        self.score_sums[1] += prob.where(unknown_neg, 0.).sum(0)
        self.num_samples += logits.size(0)

    def all_reduce(self) -> None:
        """Sum the statistics over all ranks (a no-op without DDP).

        Every rank must call it. Afterwards every rank holds bitwise the
        same statistics.
        """
        ints = torch.cat(
            [self.hist.flatten(),
             self.counts.flatten(), self.num_samples])
        all_reduce(ints, op='sum')
        all_reduce(self.score_sums, op='sum')
        sizes = [self.hist.numel(), self.counts.numel(), 1]
        hist, counts, num_samples = ints.split(sizes)
        self.hist = hist.view_as(self.hist).clone()
        self.counts = counts.view_as(self.counts).clone()
        self.num_samples = num_samples.clone()

    def compute(self) -> Dict[str, float]:
        """Compute the metrics (see :class:`MissingLabelDiagnosticsHook`).

        Returns:
            dict[str, float]: The metrics that are defined: a metric whose
            denominator is 0 (no missing positive, no unannotated
            negative) is left out, except ``precision``, which is 0 when
            no unannotated entry reaches the threshold. Besides the
            metrics, the keys ``num_missing_pos``,
            ``num_unannotated_neg``, ``num_observed_pos``, ``num_samples``
            and, where the AUCs are defined, ``auc_error_bound`` and
            ``auc_macro_classes`` (the number of classes it averages).
        """
        hist = self.hist.cpu()
        counts = self.counts.cpu().double()
        sums = self.score_sums.cpu()
        per_class = hist.sum(-1)
        num_pos = int(per_class[0].sum())
        num_neg = int(per_class[1].sum())
        num_obs = int(counts[2].sum())
        pos_above = float(counts[0].sum())
        neg_above = float(counts[1].sum())

        out = dict(
            num_missing_pos=num_pos,
            num_unannotated_neg=num_neg,
            num_observed_pos=num_obs,
            num_samples=int(self.num_samples.sum()))
        metrics = {}
        if num_pos + num_obs > 0:
            metrics['frac_missing'] = num_pos / (num_pos + num_obs)
        if num_pos + num_neg > 0:
            metrics['pos_rate'] = num_pos / (num_pos + num_neg)
            predicted = pos_above + neg_above
            metrics['precision'] = pos_above / predicted if predicted else 0.
        if num_pos > 0:
            metrics['score_pos'] = float(sums[0].sum()) / num_pos
            metrics['recall'] = pos_above / num_pos
        if num_neg > 0:
            metrics['score_neg'] = float(sums[1].sum()) / num_neg
        if num_pos > 0 and num_neg > 0:
            auc, bound = histogram_auc(hist[0].sum(0), hist[1].sum(0))
            metrics['auc'] = float(auc)
            out['auc_error_bound'] = float(bound)
            valid = (per_class[0] > 0) & (per_class[1] > 0)
            if valid.any():
                class_auc, _ = histogram_auc(hist[0][valid], hist[1][valid])
                metrics['auc_macro'] = float(class_auc.mean())
                out['auc_macro_classes'] = int(valid.sum())
        out.update(metrics)
        return out


def _check_args(num_bins: int, logit_range: float, thr: float) -> None:
    """Validate the binning and threshold arguments."""
    if isinstance(num_bins, bool) or not isinstance(num_bins, int) \
            or num_bins < 2:
        raise ValueError('`num_bins` must be an int >= 2, but got '
                         f'{num_bins!r}.')
    if isinstance(logit_range, bool) \
            or not isinstance(logit_range, (int, float)) \
            or not 0 < logit_range < float('inf'):
        raise ValueError('`logit_range` must be a finite number > 0, but '
                         f'got {logit_range!r}.')
    if isinstance(thr, bool) or not isinstance(thr, (int, float)) \
            or not 0 < thr < 1:
        raise ValueError(f'`thr` must be in (0, 1), but got {thr!r}.')


@HOOKS.register_module()
class MissingLabelDiagnosticsHook(Hook):
    r"""Log how the model scores the labels missing from the annotations.

    The hook reuses the logits of the training forward pass (a forward
    hook on ``model.head``; no extra pass over the data) and compares them
    with the full labels that the training :class:`PartialLabelDataset`
    keeps for diagnostics, looked up by each sample's ``sample_idx``. The
    full labels are used by this hook only and never reach the loss.

    Over each reporting period (``interval`` epochs or iterations) it
    accumulates, for the *unannotated* entries ``(i, c)`` (observed label
    0), per-class logit histograms and counts
    (:class:`MissingLabelStatistics`, ``O(C x num_bins)`` memory). With
    :math:`p = \sigma(\text{logit})`, :math:`M` the missing positives
    (unannotated, full label 1), :math:`U` the unannotated negatives
    (unannotated, full label 0) and :math:`O` the observed positives, all
    classes pooled, it then reports:

    - ``frac_missing`` :math:`= |M| / (|M| + |O|)`: the fraction of the true
      positives that the annotation misses.
    - ``pos_rate`` :math:`= |M| / (|M| + |U|)`: the fraction of the
      unannotated entries that are positive, the precision of random
      pseudo-labelling (the baseline of ``precision``).
    - ``score_pos`` :math:`= \frac{1}{|M|} \sum_M p`: the mean score of the
      missing positives.
    - ``score_neg`` :math:`= \frac{1}{|U|} \sum_U p`: the mean score of
      the unannotated negatives.
    - ``recall`` :math:`= |\{M: p \ge thr\}| / |M|`: the fraction of the
      missing positives that a threshold ``thr`` would recover.
    - ``precision`` :math:`= |\{M: p \ge thr\}| / |\{M \cup U: p \ge
      thr\}|`: the fraction of the unannotated entries above ``thr``
      (would-be pseudo-positives) that are truly positive; 0 if there are
      none.
    - ``auc``: the probability that a missing positive scores above an
      unannotated negative (ties count one half), all classes pooled,
      computed from the histograms (see :func:`histogram_auc`; the log
      line gives the bound of the binning error). 1 means that the model
      ranks every missing label above every true negative, 0.5 that it
      cannot tell them apart (the late-training memorisation of
      assume-negative losses).
    - ``auc_macro``: the mean over classes of the same AUC per class, over
      the classes with at least one missing positive and one unannotated
      negative in the period.

    The metrics are fractions in [0, 1]. A metric whose denominator is 0
    is not reported (e.g. no unannotated entry in the ``'full'`` mode).
    Each is written to the message hub as ``'{prefix}/{name}'`` and to the
    visualiser (step: the epoch number, or the iteration with
    ``by_epoch=False``), and all of them, with the counts, are logged in
    one line. ``prefix`` does not start with ``'train'``, so that the
    values are not repeated in every logged training iteration. The
    summed statistics of the last reported period stay in :attr:`stats`
    until the next period starts.

    Caveats:

    - The scores come from the training forward pass: augmented views and
      a model that changes during the period. They are a running picture,
      not the scores of the final model of the period.
    - Under DDP the statistics are summed over ranks, so every rank
      reports the same numbers. MMEngine's ``DefaultSampler`` pads each
      epoch so that all ranks get the same number of samples
      (``round_up=True``): up to ``world_size - 1`` samples are counted
      twice, and a dataloader with ``drop_last=True`` skips a few.
    - Batch augments (Mixup, CutMix) blend images and targets; the rows
      then no longer are single samples, and the hook warns.
    - Only the first call of the head during a training iteration is
      counted (a model that runs the head on several views counts the
      first).
    - Nothing needs checkpointing: the statistics are recomputed over each
      period. An iteration-based run resumed in the middle of a period
      reports that period over the iterations after the resume only.

    Args:
        interval (int): Report every ``interval`` epochs (``by_epoch``) or
            iterations, and at the end of training. Statistics are only
            gathered during periods that end with a report.
            Defaults to 1.
        by_epoch (bool): Count ``interval`` in epochs, and report in
            ``after_train_epoch``. Otherwise count iterations and report
            in ``after_train_iter``. Defaults to True.
        thr (float): The threshold on :math:`p` of ``recall`` and
            ``precision``, in (0, 1). Defaults to 0.5.
        num_bins (int): Number of logit bins of the histograms, >= 2.
            Defaults to 100.
        logit_range (float): The bins cover the logits in
            ``[-logit_range, logit_range]`` uniformly (the outer bins extend
            to infinity). Defaults to 10.
        prefix (str): The prefix of the message-hub keys.
            Defaults to ``'missing_label'``.
        save_histograms (bool): Whether to save the statistics of each
            period (histograms, bin edges, counts, class names) to
            ``{log_dir}/missing_label_diagnostics/epoch_{n}.npz`` (or
            ``iter_{n}.npz``) on the main process, e.g. to plot the score
            distributions of missing labels and true negatives.
            Defaults to False.

    Examples:
        >>> custom_hooks = [
        ...     dict(type='MissingLabelDiagnosticsHook', interval=1,
        ...          thr=0.5)
        ... ]
    """

    priority = 'NORMAL'

    def __init__(self,
                 interval: int = 1,
                 by_epoch: bool = True,
                 thr: float = 0.5,
                 num_bins: int = 100,
                 logit_range: float = 10.,
                 prefix: str = 'missing_label',
                 save_histograms: bool = False) -> None:
        if isinstance(interval, bool) or not isinstance(interval, int) \
                or interval < 1:
            raise ValueError('`interval` must be an int >= 1, but got '
                             f'{interval!r}.')
        _check_args(num_bins, logit_range, thr)
        if not isinstance(prefix, str) or not prefix:
            raise ValueError('`prefix` must be a non-empty str, but got '
                             f'{prefix!r}.')
        self.interval = interval
        self.by_epoch = bool(by_epoch)
        self.thr = float(thr)
        self.num_bins = num_bins
        self.logit_range = float(logit_range)
        self.prefix = prefix.rstrip('/')
        self.save_histograms = bool(save_histograms)

        self.stats: Optional[MissingLabelStatistics] = None
        self._dataset: Optional[PartialLabelDataset] = None
        self._handle = None
        self._active = False
        # Labels of the current batch, waiting for the head's forward.
        self._pending: Optional[Tuple[np.ndarray, np.ndarray]] = None
        self._captured_once = False

    # ----------------------------------------------------------- set-up
    def before_train(self, runner) -> None:
        """Find the partial-label dataset and hook the classifier's head.

        Args:
            runner (Runner): The runner of the training process.
        """
        dataset = find_partial_label_dataset(runner.train_dataloader.dataset)
        if not dataset.uses_observed_labels:
            raise ValueError(
                'The training PartialLabelDataset carries its clean full '
                "labels (split='val' with val_labels='clean'), so no label "
                'is missing and there is nothing to diagnose.')
        self._dataset = dataset
        model = runner.model.module if is_model_wrapper(runner.model) \
            else runner.model
        head = getattr(model, 'head', None)
        if not isinstance(head, nn.Module):
            raise TypeError(
                'MissingLabelDiagnosticsHook reads the logits of the '
                "model's `head` module, but "
                f'{type(model).__name__} has no such module.')
        preprocessor = getattr(model, 'data_preprocessor', None)
        if getattr(preprocessor, 'batch_augments', None) is not None:
            runner.logger.warning(
                'MissingLabelDiagnosticsHook: the data preprocessor mixes '
                'samples (batch augments); the diagnostics then describe '
                'mixed images, not the samples whose labels they use.')
        loop = getattr(runner, 'train_loop', None)
        if self.by_epoch and isinstance(loop, IterBasedTrainLoop):
            runner.logger.warning(
                'MissingLabelDiagnosticsHook: with an iteration-based '
                'training loop and by_epoch=True, the hook reports once, '
                'at the end of training; set by_epoch=False to report '
                'every `interval` iterations.')
        if dataset.mode == 'full':
            runner.logger.warning(
                "MissingLabelDiagnosticsHook: the training set is in the "
                "'full' mode: no label is unannotated, so the missing-label "
                'metrics will not be reported.')

        self.stats = MissingLabelStatistics(
            dataset.num_classes,
            num_bins=self.num_bins,
            logit_range=self.logit_range,
            thr=self.thr)
        self._remove_handle()
        self._handle = head.register_forward_hook(self._capture)
        self._captured_once = False
        self._active = not self.by_epoch

    def after_train(self, runner) -> None:
        """Remove the forward hook from the head.

        Args:
            runner (Runner): The runner of the training process.
        """
        self._remove_handle()
        self._pending = None

    def _remove_handle(self) -> None:
        if self._handle is not None:
            self._handle.remove()
            self._handle = None

    # ---------------------------------------------------------- capture
    def before_train_epoch(self, runner) -> None:
        """Start a period if this epoch ends with a report.

        Args:
            runner (Runner): The runner of the training process.
        """
        if not self.by_epoch:
            return
        self._active = self._is_report_epoch(runner)
        if self._active:
            self.stats.reset()

    def _is_report_epoch(self, runner) -> bool:
        return self.every_n_epochs(runner, self.interval) \
            or self.is_last_train_epoch(runner)

    def before_train_iter(self,
                          runner,
                          batch_idx: int,
                          data_batch: DATA_BATCH = None) -> None:
        """Look up the labels of the batch's samples by ``sample_idx``.

        Args:
            runner (Runner): The runner of the training process.
            batch_idx (int): The index of the current batch in the loop.
            data_batch (dict, optional): The batch from the dataloader.
        """
        self._pending = None
        if not self._active:
            return
        indices = self._sample_indices(data_batch)
        self._pending = (self._dataset.observed_labels[indices],
                         self._dataset.full_labels[indices])

    def _sample_indices(self, data_batch: DATA_BATCH) -> np.ndarray:
        samples = data_batch.get('data_samples') \
            if isinstance(data_batch, dict) else None
        if not isinstance(samples, Sequence) or not samples:
            raise TypeError(
                'MissingLabelDiagnosticsHook expects each training batch to '
                "be a dict with a list of DataSamples in 'data_samples', "
                f'but got {type(data_batch).__name__}.')
        indices = [
            getattr(s, 'metainfo', {}).get('sample_idx', None) for s in samples
        ]
        if any(i is None for i in indices):
            raise KeyError(
                'A training DataSample has no `sample_idx` in its metainfo. '
                'Keep it in the meta keys of PackInputs (it is there by '
                'default).')
        indices = np.asarray(indices, dtype=np.int64)
        num = len(self._dataset)
        if indices.min() < 0 or indices.max() >= num:
            raise IndexError(
                f'`sample_idx` {indices.tolist()} out of range for the '
                f'training PartialLabelDataset of length {num}.')
        return indices

    def _capture(self, module: nn.Module, args, output) -> None:
        """Forward hook of the head: count the batch once per iteration."""
        if self._pending is None or not module.training:
            return
        observed, full = self._pending
        self._pending = None
        if not isinstance(output, Tensor) or output.dim() != 2 \
                or output.size(0) != observed.shape[0]:
            shape = tuple(output.shape) if isinstance(output, Tensor) \
                else type(output).__name__
            raise RuntimeError(
                'MissingLabelDiagnosticsHook expects the head to return '
                f'logits of shape ({observed.shape[0]}, '
                f'{observed.shape[1]}), one row per sample of the batch, '
                f'but got {shape}.')
        self.stats.update(output, torch.from_numpy(observed),
                          torch.from_numpy(full))
        self._captured_once = True

    def after_train_iter(self,
                         runner,
                         batch_idx: int,
                         data_batch: DATA_BATCH = None,
                         outputs: Optional[dict] = None) -> None:
        """Check the capture; report every ``interval`` iterations with
        ``by_epoch=False``.

        Args:
            runner (Runner): The runner of the training process.
            batch_idx (int): The index of the current batch in the loop.
            data_batch (dict, optional): The batch from the dataloader.
            outputs (dict, optional): The outputs of ``train_step``.
        """
        if self._pending is not None and not self._captured_once:
            raise RuntimeError(
                'MissingLabelDiagnosticsHook: the model did not call its '
                '`head` module during the training step, so there are no '
                'logits to diagnose.')
        self._pending = None
        if not self.by_epoch and (self.every_n_train_iters(
                runner, self.interval) or self.is_last_train_iter(runner)):
            self._report(runner, 'iter', runner.iter + 1)
            self.stats.reset()

    def after_train_epoch(self, runner) -> None:
        """Report the epoch's metrics every ``interval`` epochs.

        Args:
            runner (Runner): The runner of the training process.
        """
        if self.by_epoch and self._active:
            self._report(runner, 'epoch', runner.epoch + 1)
            self._active = False

    # ----------------------------------------------------------- report
    def _report(self, runner, unit: str, step: int) -> None:
        """All-reduce, compute, and write the metrics everywhere."""
        self.stats.all_reduce()
        results = self.stats.compute()
        metric_names = ('frac_missing', 'pos_rate', 'score_pos', 'score_neg',
                        'recall', 'precision', 'auc', 'auc_macro')
        scalars = {
            f'{self.prefix}/{name}': results[name]
            for name in metric_names if name in results
        }
        for key, value in scalars.items():
            runner.message_hub.update_scalar(key, value)
        if scalars:
            runner.visualizer.add_scalars(scalars, step=step)
        runner.logger.info(self._format(results, unit, step))
        if self.save_histograms and is_main_process():
            self._save(runner, results, unit, step)

    def _format(self, results: dict, unit: str, step: int) -> str:
        """One log line with the metrics and the counts."""

        def fmt(name: str) -> str:
            value = results.get(name)
            return 'n/a' if value is None else f'{value:.4f}'

        text = (f'Missing-label diagnostics ({unit} {step}, '
                f'{results["num_samples"]} samples, '
                f'{results["num_missing_pos"]} missing positives, '
                f'{results["num_unannotated_neg"]} unannotated negatives, '
                f'{results["num_observed_pos"]} observed positives): '
                f'frac_missing {fmt("frac_missing")}, '
                f'pos_rate {fmt("pos_rate")}, '
                f'score_pos {fmt("score_pos")}, '
                f'score_neg {fmt("score_neg")}, '
                f'recall@{self.thr:g} {fmt("recall")}, '
                f'precision@{self.thr:g} {fmt("precision")}, '
                f'auc {fmt("auc")}')
        if 'auc_error_bound' in results:
            text += f' (+-{results["auc_error_bound"]:.4f})'
        text += f', auc_macro {fmt("auc_macro")}'
        if 'auc_macro_classes' in results:
            text += f' ({results["auc_macro_classes"]} classes)'
        return text

    def _save(self, runner, results: dict, unit: str, step: int) -> None:
        """Save the period's statistics to an ``.npz`` file."""
        out_dir = osp.join(runner.log_dir, 'missing_label_diagnostics')
        os.makedirs(out_dir, exist_ok=True)
        classes: List[str] = list(self._dataset.metainfo.get('classes', ()))
        stats = self.stats
        np.savez(
            osp.join(out_dir, f'{unit}_{step}.npz'),
            logit_edges=stats.bin_edges.numpy(),
            hist_missing_pos=stats.hist[0].cpu().numpy(),
            hist_unannotated_neg=stats.hist[1].cpu().numpy(),
            missing_pos_above_thr=stats.counts[0].cpu().numpy(),
            unannotated_neg_above_thr=stats.counts[1].cpu().numpy(),
            observed_pos=stats.counts[2].cpu().numpy(),
            score_sums=stats.score_sums.cpu().numpy(),
            thr=np.float64(self.thr),
            classes=np.asarray(classes, dtype=str),
            **{
                f'metric_{k}': np.float64(v)
                for k, v in results.items()
            })
