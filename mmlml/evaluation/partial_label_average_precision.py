"""Average precision over the known labels of each class, for evaluation sets
that are themselves partially labelled."""
from typing import List, Optional, Union

import numpy as np
import torch
from mmengine.logging import MMLogger
from mmpretrain.evaluation import AveragePrecision
from mmpretrain.evaluation.metrics.multi_label import to_tensor

from mmlml.registry import METRICS
from mmlml.utils.hyperparameters import Choice, check_settings

__all__ = ['PartialLabelAveragePrecision', 'classes_without_positive']

#: The most class names a warning lists.
MAX_NAMES = 20


def classes_without_positive(target: torch.Tensor) -> List[int]:
    """The classes (columns) of an evaluation target (1 positive, 0
    negative, -1 ignored) without a single positive."""
    return torch.nonzero(~(target == 1).any(0)).flatten().tolist()


@METRICS.register_module()
class PartialLabelAveragePrecision(AveragePrecision):
    r"""MMPretrain's ``AveragePrecision`` for evaluation targets where a class
    may have no known label at all.

    For class :math:`c`, over the samples whose target for :math:`c` is not
    ``-1`` (ignored), ranked by score,

    .. math::
        \mathrm{AP}_c = \frac{1}{P_c} \sum_{n} \mathrm{prec}@n \cdot
            [\text{the } n\text{-th sample is a positive}],

    exactly MMPretrain's value (its per-class computation is called on the
    classes with known labels). MMPretrain's metric raises ``IndexError`` on
    a class whose targets are all ``-1``, which a partially labelled
    evaluation set can have (OpenImages' verified labels); here such a
    class gets AP 0, as MMPretrain already gives a class without a
    positive. ``mAP`` is the mean over all classes, as MMPretrain's.

    A class without a positive in the evaluation set scores 0 whatever the
    model does and pulls ``mAP`` down: the first evaluation logs a warning
    naming such classes. The metric names are MMPretrain's
    (``multi-label/mAP``, ``multi-label/AP_classwise``); the stock
    ``AveragePrecision`` is left as it is.

    Args:
        average (str, optional): ``'macro'`` (``mAP``) or None (per-class
            APs). Defaults to ``'macro'``.
        collect_device (str): ``'cpu'`` or ``'gpu'``. Defaults to 'cpu'.
        prefix (str, optional): The metric name prefix. Defaults to None
            (``multi-label``).

    Example:
        >>> val_evaluator = [dict(type='PartialLabelAveragePrecision'),
        ...                  dict(type='MultiLabelMetric', thr=0.5)]
    """

    hyperparameters = dict(
        average=Choice('macro', options=('macro', ), optional=True))

    def __init__(self,
                 *,
                 average: Optional[str] = 'macro',
                 collect_device: str = 'cpu',
                 prefix: Optional[str] = None) -> None:
        super().__init__(
            average=average, collect_device=collect_device, prefix=prefix)
        check_settings(self)
        self._warned = False

    def compute_metrics(self, results: List) -> dict:
        if not self._warned:
            self._warned = True
            target = torch.stack([res['gt_score'] for res in results])
            self.warn_classes_without_positive(
                classes_without_positive(target))
        return super().compute_metrics(results)

    def warn_classes_without_positive(self, classes: List[int]) -> None:
        """Log which classes have no positive in the evaluation set."""
        if not classes:
            return
        names = (self.dataset_meta or {}).get('classes')
        shown = [
            f'{c} ({names[c]})'
            if names is not None and c < len(names) else str(c)
            for c in classes[:MAX_NAMES]
        ]
        more = len(classes) - len(shown)
        MMLogger.get_current_instance().warning(
            f'{type(self).__name__}: {len(classes)} classes have no positive '
            'in the evaluation set and score AP 0 whatever the model '
            'predicts, which lowers mAP: ' + ', '.join(shown) +
            (f' and {more} more' if more else '') + '.')

    @staticmethod
    def calculate(pred: Union[torch.Tensor, np.ndarray],
                  target: Union[torch.Tensor, np.ndarray],
                  average: Optional[str] = 'macro') -> torch.Tensor:
        """The APs (in %) of ``(N, C)`` scores against ``(N, C)`` evaluation
        targets: their mean (``average='macro'``) or the ``(C,)`` vector
        (``average=None``)."""
        if average not in ('macro', None):
            raise ValueError(
                f"average must be 'macro' or None, got {average!r}")
        scores: torch.Tensor = to_tensor(pred)
        labels: torch.Tensor = to_tensor(target)
        if scores.ndim != 2 or scores.shape != labels.shape:
            raise ValueError(
                'pred and target must have the same shape '
                f'(N, num_classes), got {tuple(scores.shape)} and '
                f'{tuple(labels.shape)}')
        known = (labels > -1).any(0)
        ap = scores.new_zeros(scores.size(1), dtype=torch.float32)
        if known.any():
            ap[known] = AveragePrecision.calculate(
                scores[:, known], labels[:, known], average=None).float()
        return ap.mean() if average == 'macro' else ap
