"""The hook that logs how the model scores the missing labels."""
import os
import os.path as osp
from typing import Any, Dict, Optional, Sequence, Tuple, Union

import numpy as np
import torch
import torch.nn as nn
from mmengine.dist import is_main_process
from mmengine.hooks import Hook
from mmengine.model import is_model_wrapper
from mmengine.runner import IterBasedTrainLoop
from torch import Tensor
from torch.utils.hooks import RemovableHandle

from mmlml.datasets import PartialLabelDataset, find_partial_label_dataset
from mmlml.evaluation import MissingLabelStatistics
from mmlml.evaluation.missing_label_statistics import BINNING
from mmlml.registry import HOOKS
from mmlml.structures import sample_indices
from mmlml.utils.hyperparameters import Flag, Integer, Text, check_settings
from .utils import found_before_train

__all__ = ['MissingLabelDiagnosticsHook']

DATA_BATCH = Optional[Union[dict, tuple, list]]


@HOOKS.register_module()
class MissingLabelDiagnosticsHook(Hook):
    r"""Log how the model scores the labels missing from the annotations.

    A loss that assumes the unannotated labels negative learns the missing
    positives as false negatives; a loss that corrects labels (SPLC, LL,
    pseudo-labels) tries to recover them from the scores. The hook measures
    both, like Fig. 2 and Fig. 7 of Zhang et al., "Simple and Robust Loss
    Design for Multi-Label Learning with Missing Labels". It reuses the
    logits of the training forward pass (a forward hook on ``model.head``;
    no extra pass over the data) and compares them with the full labels
    that the training :class:`PartialLabelDataset` keeps aside, looked up by
    each sample's ``sample_idx``; they never reach the loss.

    Over each period (``interval`` epochs or iterations) it accumulates a
    :class:`~mmlml.evaluation.MissingLabelStatistics` (per-class logit
    histograms and counts, ``O(C x num_bins)`` memory). With
    :math:`p = \sigma(\text{logit})`, :math:`M` the missing positives
    (observed label 0, full label 1), :math:`U` the unannotated negatives
    (observed 0, full 0), :math:`O` the observed positives and
    :math:`X_t = \{x \in X: p \ge thr\}`, all classes pooled, it reports:

    - ``frac_missing`` :math:`= |M| / (|M| + |O|)`, the share of the true
      positives that the annotation misses;
    - ``pos_rate`` :math:`= |M| / (|M| + |U|)`, the precision of random
      pseudo-labelling (the baseline of ``precision``);
    - ``score_pos``, ``score_neg``: the mean :math:`p` over :math:`M`, over
      :math:`U`;
    - ``recall`` :math:`= |M_t| / |M|` and ``precision``
      :math:`= |M_t| / |M_t \cup U_t|` (0 if empty): how well ``thr``
      would pseudo-label the unannotated entries;
    - ``auc``: the probability that a missing positive scores above an
      unannotated negative (ties count one half), from the histograms
      (:func:`~mmlml.evaluation.histogram_auc`; the log line gives the
      bound of the binning error). 1: every missing label ranks above every
      true negative; 0.5: they cannot be told apart (the late-training
      memorisation of assume-negative losses);
    - ``auc_macro``: the mean per-class ``auc`` over the classes with at
      least one missing positive and one unannotated negative.

    All lie in [0, 1]; one whose denominator is 0 is not reported (e.g. in
    the ``'full'`` mode). Each goes to the message hub as
    ``'{prefix}/{name}'`` and to the visualiser (step: the epoch, or the
    iteration with ``by_epoch=False``); all, with the counts, are logged in
    one line. ``prefix`` does not start with ``'train'``, so the values are
    not repeated in every logged training iteration. :attr:`stats` keeps
    the sums of the last reported period until the next one starts.

    Caveats:

    - The scores come from the training forward pass: augmented views and
      a model that changes during the period, a running picture rather
      than the final model's scores.
    - Under DDP the statistics are summed over ranks, so every rank
      reports the same numbers. MMEngine's ``DefaultSampler`` pads each
      epoch so that all ranks get the same number of samples
      (``round_up=True``): up to ``world_size - 1`` samples are counted
      twice, and a dataloader with ``drop_last=True`` skips a few.
    - Batch augments (Mixup, CutMix) blend images and targets; the rows
      then no longer are single samples, and the hook warns.
    - Only the first call of the head in a training iteration counts (a
      model that runs the head on several views counts the first).
    - Nothing is checkpointed: an iteration-based run resumed in the middle
      of a period reports that period over the iterations after the resume.

    Args:
        interval (int): Report every ``interval`` epochs (``by_epoch``) or
            iterations, and at the end of training; statistics are only
            gathered during periods that end with a report. Defaults to 1.
        by_epoch (bool): Count ``interval`` in epochs and report in
            ``after_train_epoch``, else in iterations and report in
            ``after_train_iter``. Defaults to True.
        thr (float): The threshold on :math:`p` of ``recall`` and
            ``precision``, in (0, 1). Defaults to 0.5.
        num_bins (int): Number of logit bins of the histograms, >= 2.
            Defaults to 100.
        logit_range (float): The bins cover ``[-logit_range, logit_range]``
            uniformly (the outer bins extend to infinity). Defaults to 10.
        prefix (str): The prefix of the message-hub keys.
            Defaults to ``'missing_label'``.
        save_histograms (bool): Save each period's statistics (histograms,
            bin edges, counts, class names, metrics) on the main process to
            ``{log_dir}/missing_label_diagnostics/epoch_{n}.npz`` (or
            ``iter_{n}.npz``), e.g. to plot the score distributions of
            missing labels and true negatives. Defaults to False.

    Examples:
        >>> custom_hooks = [dict(type='MissingLabelDiagnosticsHook', thr=0.5)]
    """

    priority = 'NORMAL'

    hyperparameters = dict(
        interval=Integer(1, low=1),
        by_epoch=Flag(True),
        thr=BINNING['thr'],
        num_bins=BINNING['num_bins'],
        logit_range=BINNING['logit_range'],
        prefix=Text('missing_label'),
        save_histograms=Flag(False))

    def __init__(self,
                 *,
                 interval: int = 1,
                 by_epoch: bool = True,
                 thr: float = 0.5,
                 num_bins: int = 100,
                 logit_range: float = 10.0,
                 prefix: str = 'missing_label',
                 save_histograms: bool = False) -> None:
        self.interval = interval
        self.by_epoch = by_epoch
        self.thr = thr
        self.num_bins = num_bins
        self.logit_range = logit_range
        self.prefix = prefix
        self.save_histograms = save_histograms
        check_settings(self)
        self.prefix = self.prefix.rstrip('/')

        self._stats: Optional[MissingLabelStatistics] = None
        self._training_set: Optional[PartialLabelDataset] = None
        self._handle: Optional[RemovableHandle] = None
        self._active = False
        # Labels of the current batch, waiting for the head's forward.
        self._pending: Optional[Tuple[np.ndarray, np.ndarray]] = None
        self._captured_once = False

    @property
    def stats(self) -> MissingLabelStatistics:
        """The statistics of the current period."""
        return found_before_train(self._stats,
                                  type(self).__name__, 'statistics')

    @property
    def _dataset(self) -> PartialLabelDataset:
        return found_before_train(self._training_set,
                                  type(self).__name__, 'training set')

    # ----------------------------------------------------------- set-up
    def before_train(self, runner) -> None:
        """Find the partial-label dataset and hook the classifier's head."""
        name = type(self).__name__
        dataset = find_partial_label_dataset(
            runner.train_dataloader.dataset, requester=name)
        if not dataset.uses_observed_labels:
            raise ValueError(
                'The training PartialLabelDataset carries its clean full '
                "labels (split='val' with val_labels='clean'), so no label "
                'is missing and there is nothing to diagnose.')
        if dataset.annotation_has_unknowns:
            raise ValueError(
                f'{name} measures how missing labels are recovered against '
                'the full labels, but the wrapped dataset\'s own annotation '
                'has unknown labels (e.g. OpenImages), so there are no full '
                'labels to measure against.')
        self._training_set = dataset
        model = runner.model.module if is_model_wrapper(runner.model) \
            else runner.model
        head = getattr(model, 'head', None)
        if not isinstance(head, nn.Module):
            raise TypeError(
                f"{name} reads the logits of the model's `head` module, but "
                f'{type(model).__name__} has no such module.')
        preprocessor = getattr(model, 'data_preprocessor', None)
        if getattr(preprocessor, 'batch_augments', None) is not None:
            runner.logger.warning(
                f'{name}: the data preprocessor mixes samples (batch '
                'augments); the diagnostics then describe mixed images, not '
                'the samples whose labels they use.')
        loop = getattr(runner, 'train_loop', None)
        if self.by_epoch and isinstance(loop, IterBasedTrainLoop):
            runner.logger.warning(
                f'{name}: with an iteration-based training loop and '
                'by_epoch=True, the hook reports once, at the end of '
                'training; set by_epoch=False to report every `interval` '
                'iterations.')
        if dataset.mode == 'full':
            runner.logger.warning(
                f"{name}: the training set is in the 'full' mode: no label "
                'is unannotated, so the missing-label metrics will not be '
                'reported.')

        self._stats = MissingLabelStatistics(dataset.num_classes,
                                             self.num_bins, self.logit_range,
                                             self.thr)
        self._remove_handle()
        self._handle = head.register_forward_hook(self._capture)
        self._captured_once = False
        self._active = not self.by_epoch

    def after_train(self, runner) -> None:
        """Remove the forward hook from the head."""
        self._remove_handle()
        self._pending = None

    def _remove_handle(self) -> None:
        if self._handle is not None:
            self._handle.remove()
            self._handle = None

    # ---------------------------------------------------------- capture
    def before_train_epoch(self, runner) -> None:
        """Start a period if this epoch ends with a report."""
        if not self.by_epoch:
            return
        self._active = self.every_n_epochs(runner, self.interval) \
            or self.is_last_train_epoch(runner)
        if self._active:
            self.stats.reset()

    def before_train_iter(self,
                          runner,
                          batch_idx: int,
                          data_batch: DATA_BATCH = None) -> None:
        """Look up the labels of the batch's samples by ``sample_idx``."""
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
                f'{type(self).__name__} expects each training batch to be a '
                "dict with a list of DataSamples in 'data_samples', but got "
                f'{type(data_batch).__name__}.')
        return sample_indices(samples, len(self._dataset)).numpy()

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
                f'{type(self).__name__} expects the head to return logits of '
                f'shape {observed.shape}, one row per sample of the batch, '
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
        ``by_epoch=False``."""
        if self._pending is not None and not self._captured_once:
            raise RuntimeError(
                f'{type(self).__name__}: the model did not call its `head` '
                'module during the training step, so there are no logits to '
                'diagnose.')
        self._pending = None
        if not self.by_epoch and (self.every_n_train_iters(
                runner, self.interval) or self.is_last_train_iter(runner)):
            self._report(runner, 'iter', runner.iter + 1)
            self.stats.reset()

    def after_train_epoch(self, runner) -> None:
        """Report the epoch's metrics every ``interval`` epochs."""
        if self.by_epoch and self._active:
            self._report(runner, 'epoch', runner.epoch + 1)
            self._active = False

    # ----------------------------------------------------------- report
    def _report(self, runner, unit: str, step: int) -> None:
        """All-reduce, compute, and write the metrics everywhere."""
        self.stats.all_reduce()
        results = self.stats.compute()
        scalars = {
            f'{self.prefix}/{name}': results[name]
            for name in self.stats.metric_names if name in results
        }
        for key, value in scalars.items():
            runner.message_hub.update_scalar(key, value)
        if scalars:
            runner.visualizer.add_scalars(scalars, step=step)
        runner.logger.info(self._format(results, unit, step))
        if self.save_histograms and is_main_process():
            self._save(runner, results, unit, step)

    def _format(self, results: dict, unit: str, step: int) -> str:
        """One log line with the counts and the metrics."""
        notes = dict(
            auc=f' (+-{results["auc_error_bound"]:.4f})'
            if 'auc_error_bound' in results else '',
            auc_macro=f' ({results["auc_macro_classes"]} classes)'
            if 'auc_macro_classes' in results else '')
        metrics = []
        for name in self.stats.metric_names:
            value = results.get(name)
            label = f'{name}@{self.thr:g}' \
                if name in ('recall', 'precision') else name
            metrics.append(f'{label} ' +
                           ('n/a' if value is None else f'{value:.4f}') +
                           notes.get(name, ''))
        return (f'Missing-label diagnostics ({unit} {step}, '
                f'{results["num_samples"]} samples, '
                f'{results["num_missing_pos"]} missing positives, '
                f'{results["num_unannotated_neg"]} unannotated negatives, '
                f'{results["num_observed_pos"]} observed positives): ' +
                ', '.join(metrics))

    def _save(self, runner, results: dict, unit: str, step: int) -> None:
        """Save the period's statistics to an ``.npz`` file."""
        out_dir = osp.join(runner.log_dir, 'missing_label_diagnostics')
        os.makedirs(out_dir, exist_ok=True)
        arrays: Dict[str, Any] = self.stats.to_numpy()
        arrays.update(
            (f'metric_{k}', np.float64(v)) for k, v in results.items())
        classes = self._dataset.metainfo.get('classes', ())
        arrays['classes'] = np.asarray(list(classes), dtype=str)
        np.savez(osp.join(out_dir, f'{unit}_{step}.npz'), **arrays)
