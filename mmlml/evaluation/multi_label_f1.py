"""CP, CR, CF1, OP, OR, OF1 as the multi-label literature defines them."""
from typing import List, Optional, Sequence, Tuple, Union

import torch
from mmpretrain.evaluation import MultiLabelMetric

from mmlml.registry import METRICS
from mmlml.utils.hyperparameters import (Flag, Integer, Real, RealTuple, Rule,
                                         check_settings)

#: ``topk`` of the multi-label metrics: the top-k classes of each sample
#: are its predictions (no threshold).
TOPK = Integer(None, low=1, optional=True)

#: The prefix of ``tools/test.py``'s threshold report (the metrics at 0.5,
#: the global and the per-class thresholds), which the model card reads.
THRESHOLD_REPORT_PREFIX = 'thresholds'


def f1_thresholds(metrics: dict, prefix: str) -> List[Tuple[str, str]]:
    """``(suffix, threshold)`` of each ``{prefix}/CF1{suffix}`` key of
    :class:`MultiLabelF1Metric` in ``metrics``, in their order: the
    threshold as its suffix names it (``'0.5'``, ``'0.07'``,
    ``'per class'``, ``'top 3'``); an EMA run's ``_origin`` keys left
    out."""
    found = []
    for key in metrics:
        if not key.startswith(f'{prefix}/CF1') or key.endswith('_origin'):
            continue
        suffix = key[len(f'{prefix}/CF1'):]
        if suffix == '_thr-class':
            threshold = 'per class'
        elif suffix.startswith('_top'):
            threshold = f'top {suffix[len("_top"):]}'
        else:
            threshold = suffix[len('_thr-'):] or '0.5'
        found.append((suffix, threshold))
    return found


@METRICS.register_module()
class MultiLabelF1Metric(MultiLabelMetric):
    r"""The six threshold metrics of the multi-label literature in one metric.

    .. math::
        CP = \frac{1}{C}\sum_c \frac{TP_c}{TP_c + FP_c},\quad
        CR = \frac{1}{C}\sum_c \frac{TP_c}{TP_c + FN_c},\quad
        CF1 = \frac{2\,CP\,CR}{CP + CR},

    and OP, OR, OF1 the same over the summed counts of all classes (ML-GCN,
    ASL and the partial-label papers report these). MMPretrain's
    ``MultiLabelMetric`` reports the *mean of per-class F1* as its macro
    ``f1-score``, which differs from CF1 above; this metric reports both
    (``CF1`` and ``mean-F1``). Like MMPretrain, entries whose target is -1
    are ignored and a class without predictions has precision 0.

    Keys: ``multi-label/CP``, ``CR``, ``CF1``, ``mean-F1``, ``OP``, ``OR``,
    ``OF1`` (suffix ``_thr-0.75`` for thresholds other than 0.5, ``_top3``
    for ``topk=3``), in percent.

    ``thr`` and ``topk`` follow MMPretrain's ``MultiLabelMetric``: a label
    is predicted when its score reaches ``thr``, or when it is among the
    ``topk`` highest scores of its sample if only ``topk`` is given; with
    neither, ``thr`` is 0.5, and with both, ``thr`` is used (a warning
    says so). ``class_thr`` gives each class its own threshold instead
    (those of a thresholds file,
    :mod:`mmlml.evaluation.class_thresholds`); its keys end in
    ``_thr-class``.

    Args:
        thr (float, optional): Score threshold in [0, 1]. Defaults to None
            (0.5 unless ``topk`` is given).
        topk (int, optional): Predict the ``topk`` highest scores of each
            sample, a positive integer. Defaults to None.
        strict (bool): Predict positive when ``score > thr`` (the Hill/SPLC
            code) instead of ``score >= thr`` (MMPretrain); threshold
            predictions only. Defaults to False.
        class_thr (Sequence[float], optional): One threshold in [0, 1] per
            class, instead of ``thr`` and ``topk``. Defaults to None.
        collect_device (str): ``'cpu'`` or ``'gpu'``. Defaults to ``'cpu'``.
        prefix (str, optional): Defaults to ``'multi-label'``.
    """

    hyperparameters = dict(
        thr=Real(None, low=0, high=1, optional=True),
        topk=TOPK,
        strict=Flag(False),
        class_thr=RealTuple(None, low=0, high=1, optional=True))
    rules = (Rule(
        lambda strict, thr, topk: not strict or thr is not None or topk is
        None, 'strict=True changes the threshold comparison, but topk '
        'predictions use no threshold: give thr, or leave strict False'),
             Rule(
                 lambda class_thr, thr, topk: class_thr is None or
                 (thr is None and topk is None), 'class_thr gives every '
                 'class its threshold: leave thr and topk unset'))

    def __init__(self,
                 *,
                 thr: Optional[float] = None,
                 topk: Optional[int] = None,
                 strict: bool = False,
                 class_thr: Optional[Sequence[float]] = None,
                 collect_device: str = 'cpu',
                 prefix: Optional[str] = None):
        if thr is None and topk is None and class_thr is None:
            thr = 0.5  # MMPretrain's default, without its warning
        # With class_thr alone, MMPretrain would warn that it uses 0.5; it
        # uses none.
        super().__init__(
            thr=0.5 if class_thr is not None and topk is None else thr,
            topk=topk,
            collect_device=collect_device,
            prefix=prefix)
        self.thr = thr
        self.strict = strict
        self.class_thr = class_thr
        check_settings(self)

    def compute_metrics(self, results: List) -> dict:
        target = torch.stack([res['gt_score'] for res in results])
        pred = torch.stack([res['pred_score'] for res in results]).float()
        thr: Union[None, float, torch.Tensor] = self.thr
        topk = None
        if self.class_thr is not None:
            if len(self.class_thr) != pred.size(1):
                raise ValueError(f'class_thr has {len(self.class_thr)} '
                                 f'thresholds but the predictions have '
                                 f'{pred.size(1)} classes')
            # MMPretrain compares ``pred >= thr``: a (C,) tensor broadcasts.
            per_class = torch.tensor(self.class_thr, dtype=pred.dtype)
            if self.strict:
                per_class = torch.nextafter(
                    per_class, torch.tensor(2., dtype=per_class.dtype))
            thr, suffix = per_class, '_thr-class'
        elif thr is None:
            topk = self.topk
            if topk > pred.size(1):
                raise ValueError(f'topk={topk} exceeds the {pred.size(1)} '
                                 'classes of the predictions')
            suffix = f'_top{topk}'
        else:
            suffix = '' if thr == 0.5 else f'_thr-{thr:.2f}'
            if self.strict:
                thr = torch.nextafter(torch.tensor(thr),
                                      torch.tensor(2.)).item()
        cp, cr, mean_f1, _ = self.calculate(
            pred, target, average='macro', thr=thr, topk=topk)
        op, orc, of1, _ = self.calculate(
            pred, target, average='micro', thr=thr, topk=topk)
        cp, cr = cp.item(), cr.item()
        cf1 = 2 * cp * cr / (cp + cr) if cp + cr > 0 else 0.0
        values = dict(
            CP=cp, CR=cr, CF1=cf1, OP=op.item(), OR=orc.item(), OF1=of1.item())
        values['mean-F1'] = mean_f1.item()
        return {key + suffix: value for key, value in values.items()}
