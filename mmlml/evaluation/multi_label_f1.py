"""CP, CR, CF1, OP, OR, OF1 as the multi-label literature defines them."""
from typing import List, Optional

import torch
from mmpretrain.evaluation import MultiLabelMetric

from mmlml.registry import METRICS


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
    ``OF1`` (suffix ``_thr-0.75`` for thresholds other than 0.5), in percent.

    Args:
        thr (float): Score threshold. Defaults to 0.5.
        strict (bool): Predict positive when ``score > thr`` (the Hill/SPLC
            code) instead of ``score >= thr`` (MMPretrain). Defaults to
            False.
        collect_device (str): ``'cpu'`` or ``'gpu'``. Defaults to ``'cpu'``.
        prefix (str, optional): Defaults to ``'multi-label'``.
    """

    def __init__(self,
                 thr: float = 0.5,
                 strict: bool = False,
                 collect_device: str = 'cpu',
                 prefix: Optional[str] = None):
        if not 0 <= thr <= 1:
            raise ValueError(f'thr must be in [0, 1], got {thr}')
        super().__init__(thr=thr, collect_device=collect_device, prefix=prefix)
        self.strict = strict

    def compute_metrics(self, results: List) -> dict:
        target = torch.stack([res['gt_score'] for res in results])
        pred = torch.stack([res['pred_score'] for res in results]).float()
        thr = self.thr
        if self.strict:
            thr = torch.nextafter(torch.tensor(thr), torch.tensor(2.)).item()
        cp, cr, mean_f1, _ = self.calculate(
            pred, target, average='macro', thr=thr)
        op, orc, of1, _ = self.calculate(
            pred, target, average='micro', thr=thr)
        cp, cr = cp.item(), cr.item()
        cf1 = 2 * cp * cr / (cp + cr) if cp + cr > 0 else 0.0
        suffix = '' if self.thr == 0.5 else f'_thr-{self.thr:.2f}'
        values = dict(
            CP=cp, CR=cr, CF1=cf1, OP=op.item(), OR=orc.item(), OF1=of1.item())
        values['mean-F1'] = mean_f1.item()
        return {key + suffix: value for key, value in values.items()}
