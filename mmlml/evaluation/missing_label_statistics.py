"""Score statistics of the labels missing from partial annotations.

:class:`MissingLabelStatistics` accumulates, per class, logit histograms
and counts of the unannotated training entries, split by their full label,
in memory independent of the number of samples; :func:`histogram_auc` turns
the histograms into AUCs. :class:`~mmlml.hooks.MissingLabelDiagnosticsHook`
fills them during training and defines the metrics.
"""
from typing import Dict, Tuple, Union

import numpy as np
import torch
from mmengine.dist import all_reduce
from torch import Tensor

from mmlml.utils.hyperparameters import Integer, Real, check_hyperparameters

__all__ = [
    'MissingLabelStatistics', 'BINNING', 'check_binning', 'histogram_auc'
]

#: The binning and threshold settings of the statistics and of
#: :class:`~mmlml.hooks.MissingLabelDiagnosticsHook`.
BINNING = dict(
    num_bins=Integer(100, low=2),
    logit_range=Real(10.0, low=0, low_open=True),
    thr=Real(0.5, low=0, high=1, low_open=True, high_open=True))


def check_binning(num_bins: int, logit_range: float,
                  thr: float) -> Tuple[int, float, float]:
    """Validate the :data:`BINNING` arguments, returning them as ``int``,
    ``float``, ``float``."""
    checked = check_hyperparameters(
        BINNING, dict(num_bins=num_bins, logit_range=logit_range, thr=thr),
        'MissingLabelStatistics')
    return checked['num_bins'], checked['logit_range'], checked['thr']


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
        num_bins (int): Number of histogram bins, >= 2. Defaults to 100.
        logit_range (float): Half-width of the binned logit interval, > 0.
            Defaults to 10.
        thr (float): The probability threshold of the counts above, in
            (0, 1). Defaults to 0.5.
    """

    #: The metrics of :meth:`compute`, in the order they are logged.
    metric_names = ('frac_missing', 'pos_rate', 'score_pos', 'score_neg',
                    'recall', 'precision', 'auc', 'auc_macro')

    def __init__(self,
                 num_classes: int,
                 num_bins: int = 100,
                 logit_range: float = 10.,
                 thr: float = 0.5):
        self.num_classes = Integer(low=1).validate('num_classes', num_classes)
        self.num_bins, self.logit_range, self.thr = check_binning(
            num_bins, logit_range, thr)
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

    def to_numpy(self) -> Dict[str, np.ndarray]:
        """The statistics as named arrays on the CPU (e.g. to save with
        ``np.savez``): ``logit_edges``, ``hist_missing_pos``,
        ``hist_unannotated_neg``, ``missing_pos_above_thr``,
        ``unannotated_neg_above_thr``, ``observed_pos``, ``score_sums`` and
        ``thr``."""
        counts = self.counts.cpu().numpy()
        return dict(
            logit_edges=self.bin_edges.numpy(),
            hist_missing_pos=self.hist[0].cpu().numpy(),
            hist_unannotated_neg=self.hist[1].cpu().numpy(),
            missing_pos_above_thr=counts[0],
            unannotated_neg_above_thr=counts[1],
            observed_pos=counts[2],
            score_sums=self.score_sums.cpu().numpy(),
            thr=np.float64(self.thr))

    def compute(self) -> Dict[str, float]:
        """Compute the metrics :attr:`metric_names` (defined in
        :class:`~mmlml.hooks.MissingLabelDiagnosticsHook`).

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

        out: Dict[str, float] = dict(
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
