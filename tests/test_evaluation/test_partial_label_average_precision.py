"""PartialLabelAveragePrecision: MMPretrain's AP where a class has known
labels, AP 0 where it has none, and a warning naming the classes without a
positive."""
import pytest
import torch
from mmengine.evaluator import Evaluator
from mmengine.logging import MMLogger
from mmpretrain.evaluation import AveragePrecision
from mmpretrain.structures import DataSample

import mmlml  # noqa: F401
from mmlml.evaluation import PartialLabelAveragePrecision
from mmlml.registry import METRICS

PRED = torch.tensor([[0.9, 0.2, 0.7, 0.1], [0.3, 0.8, 0.1, 0.4],
                     [0.6, 0.4, 0.5, 0.3]])
TARGET = torch.tensor([[1, -1, 0, 0], [0, -1, 1, 0], [1, -1, -1, 0]])


def test_equals_the_stock_metric_where_it_runs():
    gen = torch.Generator().manual_seed(0)
    pred = torch.rand(20, 6, generator=gen)
    target = (torch.rand(20, 6, generator=gen) < 0.4).long()
    target[torch.rand(20, 6, generator=gen) < 0.2] = -1
    for average in ('macro', None):
        torch.testing.assert_close(
            PartialLabelAveragePrecision.calculate(pred, target, average),
            AveragePrecision.calculate(pred, target, average).float())


def test_a_class_without_known_label_scores_zero():
    per_class = PartialLabelAveragePrecision.calculate(PRED, TARGET, None)
    assert per_class[1] == 0 and per_class[3] == 0
    expected = AveragePrecision.calculate(
        PRED[:, [0, 2]], TARGET[:, [0, 2]], average=None)
    torch.testing.assert_close(per_class[[0, 2]], expected)
    assert PartialLabelAveragePrecision.calculate(PRED,
                                                  TARGET) == per_class.mean()
    with pytest.raises(IndexError):  # the stock metric, untouched
        AveragePrecision.calculate(PRED, TARGET)


def test_bad_arguments():
    with pytest.raises(ValueError, match='average'):
        PartialLabelAveragePrecision.calculate(PRED, TARGET, 'micro')
    with pytest.raises(ValueError, match='same shape'):
        PartialLabelAveragePrecision.calculate(PRED, TARGET[:, :2])


def test_warns_once_naming_classes_without_positive(monkeypatch):
    metric = METRICS.build(dict(type='PartialLabelAveragePrecision'))
    metric.dataset_meta = dict(classes=['cat', 'dog', 'car', 'tree'])
    evaluator = Evaluator(metric)
    samples = [
        DataSample().set_pred_score(p).set_gt_score(t)
        for p, t in zip(PRED, TARGET)
    ]
    warnings = []
    monkeypatch.setattr(MMLogger.get_current_instance(), 'warning',
                        warnings.append)
    for _ in range(2):
        evaluator.process(samples)
        result = evaluator.evaluate(len(samples))
    assert len(warnings) == 1
    assert '2 classes have no positive' in warnings[0]
    assert '1 (dog), 3 (tree)' in warnings[0]
    expected = PartialLabelAveragePrecision.calculate(PRED, TARGET)
    assert result['multi-label/mAP'] == pytest.approx(float(expected))
