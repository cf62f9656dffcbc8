"""Bad and extreme input of the metrics: MultiLabelF1Metric's and
ClassWiseMultiLabelMetric's thresholds and top-k, MissingLabelStatistics'
shapes, extreme scores, and validation labels in the evaluators' encoding.

Every case is a *kind* of bad input with an id (``area-what``); a kind
with several values has one case per value (``kind[value]``); see
``tests/test_datasets/test_dataset_bad_input.py``.
"""
import json
import math

import numpy as np
import pytest
import torch
from conftest import case
from mmpretrain.evaluation import AveragePrecision, MultiLabelMetric

import mmlml  # noqa: F401  (registers everything)
from mmlml.datasets import CustomMultiLabelDataset, PartialLabelDataset
from mmlml.evaluation import (ClassWiseMultiLabelMetric,
                              MissingLabelStatistics, MultiLabelF1Metric)
from mmlml.registry import METRICS

NAN = float('nan')


def evaluate(metric, scores, targets):
    metric.process(None, [
        dict(pred_score=torch.as_tensor(s), gt_score=torch.as_tensor(t))
        for s, t in zip(scores, targets)
    ])
    return metric.evaluate(len(scores))


SCORES = torch.tensor([[0.9, 0.6, 0.2, 0.5], [0.1, 0.8, 0.7, 0.3],
                       [0.4, 0.45, 0.9, 0.5]])
TARGETS = torch.tensor([[1, 0, 0, 1], [0, 1, 1, 0], [1, 0, 1, -1]])

METRIC_CASES = [
    case('f1-thr-out-of-range', lambda t: MultiLabelF1Metric(thr=1.5),
         ValueError, r'thr must lie in \[0, 1\], got 1\.5', 1.5),
    case('f1-thr-out-of-range', lambda t: MultiLabelF1Metric(thr=-0.1),
         ValueError, r'thr must lie in \[0, 1\], got -0\.1', -0.1),
    case('f1-thr-nonfinite', lambda t: MultiLabelF1Metric(thr=NAN), ValueError,
         r'thr must be a finite real number, got nan'),
    case('f1-thr-not-a-number', lambda t: MultiLabelF1Metric(thr='0.5'),
         ValueError, r"thr must be a finite real number, got '0\.5'"),
    case('f1-topk-bad', lambda t: MultiLabelF1Metric(topk=0), ValueError,
         r'topk must be an integer >= 1, got 0', 0),
    case('f1-topk-bad', lambda t: MultiLabelF1Metric(topk=1.5), ValueError,
         r'topk must be an integer >= 1, got 1\.5', 1.5),
    case('f1-topk-bad', lambda t: MultiLabelF1Metric(topk=True), ValueError,
         r'topk must be an integer >= 1, got True', True),
    case('f1-topk-exceeds-classes',
         lambda t: evaluate(MultiLabelF1Metric(topk=5), SCORES, TARGETS),
         ValueError, r'topk=5 exceeds the 4 classes'),
    case('f1-strict-with-topk',
         lambda t: MultiLabelF1Metric(topk=2, strict=True), ValueError,
         r'strict=True .* topk predictions use no threshold'),
    case('f1-strict-not-bool', lambda t: MultiLabelF1Metric(strict='yes'),
         ValueError, r"strict must be True or False, got 'yes'"),
    case('classwise-thr-bad', lambda t: ClassWiseMultiLabelMetric(thr='0.5'),
         ValueError, r"thr must be a finite real number, got '0\.5'", 'str'),
    case('classwise-thr-bad', lambda t: ClassWiseMultiLabelMetric(thr=NAN),
         ValueError, r'thr must be a finite real number, got nan', 'nan'),
    case('classwise-topk-bad', lambda t: ClassWiseMultiLabelMetric(topk=-1),
         ValueError, r'topk must be an integer >= 1, got -1'),
    case('classwise-out-file-not-csv',
         lambda t: ClassWiseMultiLabelMetric(out_file='table.txt'), ValueError,
         r"out_file must be a \.csv file, got 'table\.txt'"),
    case(
        'missing-label-statistics-shapes', lambda t: MissingLabelStatistics(
            4).update(torch.zeros(2, 4), torch.zeros(2, 3), torch.zeros(2, 4)),
        ValueError, r'logits, observed and full must have the same shape'),
    case('missing-label-statistics-num-classes',
         lambda t: MissingLabelStatistics(0), ValueError,
         r'num_classes must be an integer >= 1, got 0'),
]


@pytest.mark.parametrize('make, error, match', METRIC_CASES)
def test_metric_input_refused(make, error, match, tmp_path):
    with pytest.raises(error, match=match):
        make(tmp_path)


def test_f1_thr_none_and_topk_follow_mmpretrain():
    """f1-thr-none, f1-topk: ``thr=None`` is MMPretrain's
    ``MultiLabelMetric``'s default (0.5 unless ``topk`` is given), and
    ``topk`` predicts the top-k scores; numpy numbers are accepted."""
    default = evaluate(MultiLabelF1Metric(thr=None), SCORES, TARGETS)
    half = evaluate(MultiLabelF1Metric(thr=np.float32(0.5)), SCORES, TARGETS)
    assert default == half
    reference = evaluate(MultiLabelMetric(thr=None), SCORES, TARGETS)
    assert default['multi-label/CP'] == pytest.approx(
        reference['multi-label/precision'])
    assert default['multi-label/mean-F1'] == pytest.approx(
        reference['multi-label/f1-score'])

    top2 = evaluate(MultiLabelF1Metric(topk=np.int64(2)), SCORES, TARGETS)
    # MMPretrain's calculate() writes into its target: give it a copy.
    precision, recall, f1, _ = MultiLabelMetric.calculate(
        SCORES.clone(), TARGETS.clone(), average='macro', topk=2)
    assert top2['multi-label/CP_top2'] == pytest.approx(precision.item())
    assert top2['multi-label/CR_top2'] == pytest.approx(recall.item())
    assert top2['multi-label/mean-F1_top2'] == pytest.approx(f1.item())
    # Both given: the threshold wins, as in MMPretrain.
    both = evaluate(MultiLabelF1Metric(thr=0.5, topk=2), SCORES, TARGETS)
    assert both == half
    assert METRICS.build(dict(type='MultiLabelF1Metric', thr=None)).thr == 0.5


def test_f1_extreme_scores_are_finite():
    """f1-all-ignored-class: a class whose targets are all ignored (-1) and
    scores at 0 and 1 give finite numbers."""
    targets = TARGETS.clone()
    targets[:, 3] = -1
    scores = torch.tensor([[1., 0., 1., 0.], [0., 1., 1., 1.],
                           [1., 1., 0., 0.]])
    result = evaluate(MultiLabelF1Metric(), scores, targets)
    assert all(math.isfinite(v) for v in result.values())


def test_evaluation_never_sees_training_negatives(tmp_path):
    """eval-observed-negatives-kept: a validation split with observed
    labels reaches the evaluators in MMPretrain's encoding (observed
    negatives 0, unknown labels -1); before the fix its training -1s were
    "ignored", so a constant predictor scored mAP 100. Regression test of
    the item "Evaluation sets that carry mmlml's -1 crash AveragePrecision
    or inflate precision" (also ``test_annotated_labels.py``)."""
    items = [
        dict(
            img_path=f'{i}.jpg',
            gt_label=[i % 4],
            gt_label_negative=[(i + 1) % 4, (i + 2) % 4]) for i in range(20)
    ]
    ann_file = tmp_path / 'a.json'
    ann_file.write_text(
        json.dumps(
            dict(metainfo=dict(classes=['a', 'b', 'c', 'd']),
                 data_list=items)))
    inner = CustomMultiLabelDataset(
        ann_file=str(ann_file),
        unlisted='unknown',
        pipeline=[dict(type='PackInputs')])
    val = PartialLabelDataset(
        inner,
        mode='annotated',
        split='val',
        val_frac=0.5,
        val_labels='observed')
    targets = torch.stack(
        [val[i]['data_samples'].gt_score for i in range(len(val))])
    observed = torch.from_numpy(val.observed_labels).float()
    assert torch.equal(targets == 0, observed == -1)
    assert torch.equal(targets == -1, observed == 0)
    # A constant predictor: every known label predicted positive, 1 in 3
    # of them is. In the training encoding the observed negatives would be
    # ignored and the unknown labels counted as negatives: precision 1/2.
    constant = torch.full(targets.shape, 0.7)
    ap = evaluate(AveragePrecision(), constant, targets)
    f1 = evaluate(MultiLabelF1Metric(), constant, targets)
    assert ap['multi-label/mAP'] < 60
    assert f1['multi-label/OP'] == pytest.approx(100 / 3)
    wrong = evaluate(MultiLabelF1Metric(), constant, observed)
    assert wrong['multi-label/OP'] == pytest.approx(50)
