"""ClassWiseMultiLabelMetric: per-class AP / precision / recall / F1 with
class names, against MMPretrain's per-class metrics."""
import csv
import json
import uuid

import numpy as np
import pytest
import torch
from mmengine.evaluator import Evaluator
from mmengine.logging import MMLogger
from mmengine.registry import DefaultScope
from mmpretrain.evaluation import AveragePrecision, MultiLabelMetric
from mmpretrain.structures import DataSample

import mmlml  # noqa: F401
from mmlml.datasets import PartialLabelDataset, evaluation_target
from mmlml.evaluation.class_wise_table import (COLUMNS,
                                               ClassWiseMultiLabelMetric)
from mmlml.registry import METRICS

CLASSES = ['red disk', 'blue square', 'green ring', 'yellow plus', 'white x']


def _data(seed=0, num=40):
    """Scores and evaluation targets (1 / 0 / -1 ignored); class 4 has no
    positive and class 1 some ignored entries."""
    gen = torch.Generator().manual_seed(seed)
    pred = torch.rand(num, len(CLASSES), generator=gen)
    target = (torch.rand(num, len(CLASSES), generator=gen) < 0.4).float()
    target[:8, 1] = -1
    target[:, 4] = 0
    return pred, target


def _samples(pred, target, gt_label=False):
    samples = []
    for p, t in zip(pred, target):
        sample = DataSample().set_pred_score(p)
        if gt_label:
            sample.set_gt_label(torch.nonzero(t == 1).flatten())
        else:
            sample.set_gt_score(t)
        samples.append(sample.to_dict())
    return samples


def _evaluate(metric, samples, classes=CLASSES):
    metric.dataset_meta = None if classes is None else dict(classes=classes)
    metric.process(None, samples)
    return metric.evaluate(len(samples))


@pytest.fixture
def log_file(tmp_path):
    """A fresh current MMLogger that writes to a file; its content."""
    path = tmp_path / 'log.txt'
    MMLogger.get_instance(f'classwise-{uuid.uuid4()}', log_file=str(path))
    return lambda: path.read_text()


def test_matches_mmpretrain_per_class(tmp_path, log_file):
    pred, target = _data()
    samples = _samples(pred, target)
    ap = _evaluate(AveragePrecision(average=None), samples, None)
    prf = _evaluate(
        MultiLabelMetric(
            thr=0.5,
            average=None,
            items=('precision', 'recall', 'f1-score', 'support')), samples,
        None)
    out = tmp_path / 'tables' / 'classwise.csv'
    metric = ClassWiseMultiLabelMetric(out_file=str(out))
    result = _evaluate(metric, samples)

    with open(out, newline='') as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == list(COLUMNS)
    assert [row['class'] for row in rows] == CLASSES
    np.testing.assert_allclose([float(r['AP']) for r in rows],
                               ap['multi-label/AP_classwise'])
    for column, key in [('precision', 'precision'), ('recall', 'recall'),
                        ('F1', 'f1-score'), ('support', 'support')]:
        np.testing.assert_allclose([float(r[column]) for r in rows],
                                   prf[f'multi-label/{key}_classwise'])
    # Support counts the positives; ignored entries are counted apart.
    assert [int(r['support']) for r in rows] == (target == 1).sum(0).tolist()
    assert [int(r['ignored']) for r in rows] == [0, 8, 0, 0, 0]

    # Two scalars: mAP as AveragePrecision's, the worst AP of the classes
    # with positives (class 4 has none: AP 0, left out).
    assert set(result) == {'classwise/mAP', 'classwise/min-AP'}
    mean_ap = _evaluate(AveragePrecision(), samples, None)['multi-label/mAP']
    assert result['classwise/mAP'] == pytest.approx(mean_ap)
    aps = ap['multi-label/AP_classwise']
    assert aps[4] == 0
    assert result['classwise/min-AP'] == pytest.approx(min(aps[:4]))

    log = log_file()
    for name in CLASSES:
        assert name in log
    assert 'Per-class metrics of 40 samples (predictions: score >= 0.5' in log
    assert 'without positives (AP 0, left out of min-AP): white x' in log
    assert f'written to {out}' in log
    # The table: a header, then the rows in class order and the mean row.
    lines = [line for line in log.splitlines() if line.startswith('|')]
    assert [c.strip() for c in lines[0].split('|')[1:-1]] == list(COLUMNS)
    names = [line.split('|')[2].strip() for line in lines[1:]]
    assert names == CLASSES + ['mean']
    assert f'{aps[0]:.2f}' in lines[1]


def test_gt_label_topk_sorting_and_names(log_file):
    pred, target = _data(seed=1)
    target[target == -1] = 0
    samples = _samples(pred, target, gt_label=True)
    # Without gt_score, the one-hot gt_label is the target.
    metric = ClassWiseMultiLabelMetric(topk=2, sort_by='f1')
    rows = metric.compute_rows(pred, target)
    ref = MultiLabelMetric.calculate(pred, target, average=None, topk=2)
    np.testing.assert_allclose([r['F1'] for r in rows], ref[2])
    _evaluate(metric, samples)
    log = log_file()
    assert 'predictions: top-2 predictions' in log
    assert '| ignored |' not in log  # nothing ignored: no column
    lines = [line for line in log.splitlines() if line.startswith('|')][1:-1]
    f1 = [float(line.split('|')[6]) for line in lines]
    assert f1 == sorted(f1)
    by_f1 = sorted(rows, key=lambda r: (r['F1'], r['index']))
    assert [int(line.split('|')[1])
            for line in lines] == [r['index'] for r in by_f1]

    # Without dataset_meta: class_0 ...; a wrong number of names fails.
    metric = ClassWiseMultiLabelMetric(sort_by='ap')
    assert _evaluate(metric, samples, None)['classwise/mAP'] > 0
    assert 'class_4' in log_file()
    with pytest.raises(
            ValueError,
            match='names 2 classes, but the '
            'predictions have 5 scores'):
        _evaluate(ClassWiseMultiLabelMetric(), samples, ['a', 'b'])


def test_ignored_targets_change_nothing():
    pred, target = _data()
    metric = ClassWiseMultiLabelMetric()
    base = metric.compute_rows(pred, target)
    other = pred.clone()
    ignored = target == -1
    other[ignored] = 1 - other[ignored]
    assert metric.compute_rows(other, target) == base
    # An integer target gives the same numbers and is not modified
    # (MMPretrain's `MultiLabelMetric.calculate` zeroes it in place).
    integer = target.long()
    assert metric.compute_rows(pred, integer) == base
    assert (integer == -1).sum() == 8
    # Dropping the ignored samples of class 1 gives the same numbers.
    kept = ~ignored[:, 1]
    alone = metric.compute_rows(pred[kept], target[kept])
    for key in ('AP', 'precision', 'recall', 'F1', 'support'):
        assert alone[1][key] == pytest.approx(base[1][key])


def test_bad_arguments():
    for kwargs, match in [
        (dict(thr=1.5), r'thr must lie in \[0, 1\]'),
        (dict(thr=None), r'thr must be a number in \[0, 1\] when topk is'),
        (dict(topk=0), 'topk must be an integer >= 1'),
        (dict(sort_by='AP'), 'sort_by must be one of'),
        (dict(out_file='x.txt'), 'out_file must be a .csv file'),
    ]:
        with pytest.raises(ValueError, match=match):
            ClassWiseMultiLabelMetric(**kwargs)


def _inner(ann_file):
    return dict(
        type='CustomMultiLabelDataset',
        ann_file=ann_file,
        unlisted='unknown',
        pipeline=[dict(type='PackInputs')])


def test_in_an_evaluator_on_partial_validation_labels(tmp_path, log_file):
    """Next to AveragePrecision in one evaluator list, on the validation
    samples of a PartialLabelDataset with observed negatives and unknowns
    (the evaluation encoding: unknown labels ignored)."""
    rng = np.random.RandomState(0)
    states = rng.choice([1, 0, -1], size=(60, 4), p=[0.3, 0.4, 0.3])
    data_list = [
        dict(
            img_path=f'img_{i}.jpg',
            gt_label=np.flatnonzero(row == 1).tolist(),
            gt_label_negative=np.flatnonzero(row == -1).tolist())
        for i, row in enumerate(states)
    ]
    ann = tmp_path / 'ann.json'
    names = ['cat', 'dog', 'car', 'tree']
    ann.write_text(
        json.dumps(dict(metainfo=dict(classes=names), data_list=data_list)))
    val = PartialLabelDataset(
        _inner(str(ann)),
        mode='annotated',
        split='val',
        val_frac=0.5,
        val_labels='observed')
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        samples = [val[i]['data_samples'] for i in range(len(val))]
        evaluator = Evaluator([
            dict(type='AveragePrecision'),
            dict(type='ClassWiseMultiLabelMetric', sort_by='ap')
        ])
    assert METRICS.get('ClassWiseMultiLabelMetric') is \
        ClassWiseMultiLabelMetric
    evaluator.dataset_meta = val.metainfo
    scores = torch.from_numpy(rng.rand(len(val), 4).astype(np.float32))
    batch = []
    for sample, score in zip(samples, scores):
        batch.append(sample.clone().set_pred_score(score).to_dict())
    evaluator.process(batch)
    result = evaluator.evaluate(len(batch))
    assert result['classwise/mAP'] == pytest.approx(result['multi-label/mAP'])
    targets = np.stack([evaluation_target(states[i]) for i in val.indices])
    assert (targets == -1).any()
    log = log_file()
    assert all(name in log for name in names)
    rows = [line for line in log.splitlines() if line.startswith('|')][1:-1]
    ignored = {
        line.split('|')[2].strip(): int(line.split('|')[8])
        for line in rows
    }
    assert ignored == dict(zip(names, (targets == -1).sum(0).tolist()))
