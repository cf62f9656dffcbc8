"""Per-class AP, precision, recall and F1, logged as a table with class
names."""
import csv
import math
import os
import os.path as osp
from typing import Dict, List, Optional, Sequence

import torch
from mmengine.evaluator import BaseMetric
from mmengine.logging import MMLogger
from mmpretrain.evaluation import MultiLabelMetric
from mmpretrain.structures import label_to_onehot
from rich import box
from rich.console import Console
from rich.table import Table

from mmlml.registry import METRICS
from mmlml.utils.hyperparameters import (PATH, Choice, Real, Rule,
                                         check_settings)
from .multi_label_f1 import TOPK
from .partial_label_average_precision import PartialLabelAveragePrecision

__all__ = ['ClassWiseMultiLabelMetric']

#: The columns of :attr:`ClassWiseMultiLabelMetric.rows` and of the CSV.
COLUMNS = ('index', 'class', 'AP', 'precision', 'recall', 'F1', 'support',
           'ignored')
SORT_KEYS = {None: None, 'ap': 'AP', 'f1': 'F1'}


@METRICS.register_module()
class ClassWiseMultiLabelMetric(BaseMetric):
    r"""Per-class AP, precision, recall, F1 and support, as a table with the
    class names in the log.

    MMPretrain's ``AveragePrecision(average=None)`` and
    ``MultiLabelMetric(average=None)`` return per-class lists without
    names, and put them in the metrics dict, where every logger and
    visualiser backend has to carry them. This metric computes the same
    numbers with MMPretrain's own functions, logs them as one table row per
    class (``self.dataset_meta['classes']`` names the rows, which the
    Runner sets from the evaluation dataset), optionally writes the table to
    a CSV file, and returns two scalars only.

    For class :math:`c`, over the samples whose target for :math:`c` is not
    ignored:

    - **AP**: MMPretrain's average precision
      (:meth:`PartialLabelAveragePrecision.calculate`): with the
      samples sorted by decreasing score,
      :math:`AP_c = \frac{1}{P_c}\sum_{n:\,y_n = 1} \mathrm{Precision@}n`,
      where :math:`P_c` is the number of positives; a class without
      positives has AP 0.
    - **precision, recall, F1**: MMPretrain's
      (:meth:`mmpretrain.evaluation.MultiLabelMetric.calculate` with
      ``average=None``): :math:`TP_c / \max(TP_c + FP_c, 1)`,
      :math:`TP_c / \max(TP_c + FN_c, 1)` and their harmonic mean, where a
      sample predicts :math:`c` when its score is ``>= thr`` (or when
      :math:`c` is among its ``topk`` highest scores); a class without
      predictions has precision 0.
    - **support**: :math:`P_c`, the number of positive targets.
    - **ignored**: the number of targets of :math:`c` that are ignored.

    All but the counts are in percent. Targets are MMPretrain's: the
    ``gt_score`` of a sample when it has one, in the evaluation encoding
    (1 positive, 0 negative, -1 ignored, as the validation samples of
    :class:`~mmlml.datasets.PartialLabelDataset` carry it), else the one-hot
    vector of its ``gt_label``.

    The returned metrics are ``{prefix}/mAP``, the mean of the per-class AP
    over all classes (equal to ``AveragePrecision``'s ``mAP``), and
    ``{prefix}/min-AP``, the lowest AP among the classes with at least one
    positive (a class without positives scores 0 by the convention above,
    which says nothing about the model; the log lists such classes). The
    table ends with a ``mean`` row: mAP, the macro precision, recall and F1
    of ``MultiLabelMetric`` (means of the per-class values) and the total
    support.

    Args:
        thr (float, optional): A score ``>= thr`` is a positive prediction.
            Defaults to 0.5.
        topk (int, optional): If given, the ``topk`` highest scores of each
            sample are its positive predictions, in place of the threshold
            (``thr`` is then unused; unlike MMPretrain's
            ``MultiLabelMetric``, where ``thr`` wins, because ``thr`` has a
            default here). Defaults to None.
        sort_by (str, optional): Order of the table rows: None (class index
            order), ``'ap'`` or ``'f1'`` (increasing, the weakest class
            first). Defaults to None.
        out_file (str, optional): Write the table (one row per class, the
            columns of :data:`COLUMNS`, in percent) to this CSV file after
            every evaluation, replacing the previous one. Defaults to None.
        collect_device (str): ``'cpu'`` or ``'gpu'``, where the results of
            all ranks are gathered. Defaults to ``'cpu'``.
        prefix (str, optional): Prefix of the metric names. Defaults to
            ``'classwise'``.

    Examples:
        >>> val_evaluator = [
        ...     dict(type='AveragePrecision'),
        ...     dict(type='ClassWiseMultiLabelMetric', sort_by='ap',
        ...          out_file='work_dirs/demo/classwise.csv'),
        ... ]
    """
    default_prefix: Optional[str] = 'classwise'

    hyperparameters = dict(
        thr=Real(0.5, low=0, high=1, optional=True),
        topk=TOPK,
        sort_by=Choice(None, options=tuple(SORT_KEYS), optional=True),
        out_file=PATH)
    rules = (
        Rule(
            lambda thr, topk: thr is not None or topk is not None,
            '{owner}: thr must be a number in [0, 1] when topk is None, '
            'got None'),
        Rule(
            lambda out_file: out_file is None or str(out_file).endswith(
                '.csv'), 'out_file must be a .csv file, got {out_file!r}'),
    )

    def __init__(self,
                 *,
                 thr: Optional[float] = 0.5,
                 topk: Optional[int] = None,
                 sort_by: Optional[str] = None,
                 out_file: Optional[str] = None,
                 collect_device: str = 'cpu',
                 prefix: Optional[str] = None) -> None:
        super().__init__(collect_device=collect_device, prefix=prefix)
        self.thr = thr
        self.topk = topk
        self.sort_by = sort_by
        self.out_file = out_file
        check_settings(self)
        if self.topk is not None:
            self.thr = None  # topk predictions use no threshold

    def process(self, data_batch, data_samples: Sequence[dict]) -> None:
        """Keep the scores and targets of a batch (as MMPretrain's
        multi-label metrics do)."""
        for data_sample in data_samples:
            pred = data_sample['pred_score'].clone()
            if 'gt_score' in data_sample:
                target = data_sample['gt_score'].clone()
            else:
                target = label_to_onehot(data_sample['gt_label'],
                                         pred.size(-1))
            self.results.append(dict(pred_score=pred, gt_score=target))

    def class_names(self, num_classes: int) -> List[str]:
        """``dataset_meta['classes']``, or ``class_0 ...`` without it."""
        classes = (self.dataset_meta or {}).get('classes')
        if classes is None:
            return [f'class_{i}' for i in range(num_classes)]
        if len(classes) != num_classes:
            raise ValueError(
                f'dataset_meta names {len(classes)} classes, but the '
                f'predictions have {num_classes} scores per sample.')
        return [str(name) for name in classes]

    def compute_rows(self, pred: torch.Tensor,
                     target: torch.Tensor) -> List[Dict]:
        """One dict per class (keys :data:`COLUMNS`) from ``(N, C)`` scores
        and evaluation targets."""
        # `MultiLabelMetric.calculate` zeroes the ignored entries of an
        # integer target in place: give it a copy.
        ap = PartialLabelAveragePrecision.calculate(
            pred, target.clone(), average=None)
        precision, recall, f1, support = MultiLabelMetric.calculate(
            pred, target.clone(), average=None, thr=self.thr, topk=self.topk)
        ignored = (target == -1).sum(0)
        names = self.class_names(pred.size(1))
        rows = []
        for c, name in enumerate(names):
            values = (c, name, ap[c].item(), precision[c].item(),
                      recall[c].item(), f1[c].item(), int(support[c]),
                      int(ignored[c]))
            rows.append(dict(zip(COLUMNS, values)))
        return rows

    def compute_metrics(self, results: List) -> Dict[str, float]:
        pred = torch.stack([res['pred_score'] for res in results]).float()
        target = torch.stack([res['gt_score'] for res in results])
        rows = self.compute_rows(pred, target)
        mean_ap = sum(row['AP'] for row in rows) / len(rows)
        scored = [row['AP'] for row in rows if row['support'] > 0]
        min_ap = min(scored) if scored else math.nan

        logger = MMLogger.get_current_instance()
        logger.info('\n' + self.format_table(rows, len(results)))
        if self.out_file is not None:
            self.write_csv(rows, self.out_file)
            logger.info(f'Per-class metrics written to {self.out_file}')
        return {'mAP': mean_ap, 'min-AP': min_ap}

    def _rule(self) -> str:
        if self.topk is not None:
            return f'top-{self.topk} predictions'
        return f'score >= {self.thr:g}'

    def sorted_rows(self, rows: List[Dict]) -> List[Dict]:
        key = SORT_KEYS[self.sort_by]
        if key is None:
            return list(rows)
        return sorted(rows, key=lambda row: (row[key], row['index']))

    def format_table(self, rows: List[Dict], num_samples: int) -> str:
        """The log table: one row per class, then the means."""
        show_ignored = any(row['ignored'] for row in rows)
        columns = [c for c in COLUMNS if c != 'ignored' or show_ignored]
        title = (f'Per-class metrics of {num_samples} samples '
                 f'(predictions: {self._rule()}; in percent)')
        table = Table(box=box.ASCII2)
        for column in columns:
            table.add_column(
                column, justify='left' if column == 'class' else 'right')

        def cells(row):
            out = []
            for column in columns:
                value = row[column]
                out.append(
                    f'{value:.2f}' if isinstance(value, float) else str(value))
            return out

        for row in self.sorted_rows(rows):
            table.add_row(*cells(row))
        mean = {'index': '', 'class': 'mean'}
        for key in ('AP', 'precision', 'recall', 'F1'):
            mean[key] = sum(row[key] for row in rows) / len(rows)
        for key in ('support', 'ignored'):
            mean[key] = sum(row[key] for row in rows)
        table.add_section()
        table.add_row(*cells(mean))

        # Wide enough never to wrap a row; the table takes the width of
        # its contents.
        console = Console(
            width=1000,
            color_system=None,
            force_terminal=False,
            highlight=False)
        with console.capture() as capture:
            console.print(table, end='')
        table_lines = capture.get().rstrip('\n').split('\n')
        lines = [title] + [line.rstrip() for line in table_lines]
        missing = [row['class'] for row in rows if row['support'] == 0]
        if missing:
            lines.append(f'Classes without positives (AP 0, left out of '
                         f'min-AP): {", ".join(missing)}')
        return '\n'.join(lines)

    @staticmethod
    def write_csv(rows: List[Dict], out_file: str) -> None:
        """Write the rows (class index order) to ``out_file``."""
        directory = osp.dirname(osp.abspath(out_file))
        os.makedirs(directory, exist_ok=True)
        with open(out_file, 'w', newline='') as f:
            writer = csv.DictWriter(f, fieldnames=COLUMNS)
            writer.writeheader()
            writer.writerows(rows)
