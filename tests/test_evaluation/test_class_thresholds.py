"""Per-class thresholds (mmlml.evaluation.class_thresholds): chosen on
known labels only, shrunk by the known positives, stored beside the
checkpoint; and MultiLabelF1Metric's per-class thresholds."""
import json

import numpy as np
import pytest
import torch

from mmlml.evaluation import MultiLabelF1Metric
from mmlml.evaluation import class_thresholds as ct

CLASSES = ['cat', 'dog', 'bird', 'fish']


def _split(seed=0, num_samples=300):
    """Scores that rank positives higher, and evaluation targets with a
    third of the labels unknown (-1) and a class without known
    positive."""
    rng = np.random.default_rng(seed)
    full = (rng.random((num_samples, len(CLASSES))) < 0.3).astype(np.float32)
    scores = np.clip(0.35 * full + 0.65 * rng.random(full.shape), 0, 1)
    target = full.copy()
    target[rng.random(full.shape) < 0.33] = -1
    target[:, 3][target[:, 3] == 1] = -1  # fish: no known positive
    return scores.astype(np.float32), target


def test_best_f1_threshold_cuts_between_scores():
    # Predicting the top three (0.9, 0.8, 0.7) gives F1 = 2*2/(3+2) = 0.8,
    # the top one 2/3, all 2*2/(4+2) = 2/3.
    threshold, f1 = ct.best_f1_threshold([0.9, 0.8, 0.7, 0.1], [1, 0, 1, 0])
    assert threshold == pytest.approx(0.4) and f1 == pytest.approx(0.8)
    # Tied scores are predicted together: no cut between the two 0.6.
    threshold, _ = ct.best_f1_threshold([0.6, 0.6, 0.2], [1, 0, 0])
    assert threshold == pytest.approx(0.4)
    # Every label predicted: the lowest score itself.
    assert ct.best_f1_threshold([0.3, 0.2], [1, 1])[0] == pytest.approx(0.2)
    assert ct.best_f1_threshold([0.3, 0.2], [0, 0]) == (None, 0.0)


def test_unknown_labels_are_never_read():
    """Scores of unknown labels, changed at random, change nothing; a
    known label of the same score changes the thresholds."""
    scores, target = _split()
    chosen = ct.choose_thresholds(scores, target, CLASSES)
    unknown = target == -1
    for seed in range(3):
        changed = scores.copy()
        changed[unknown] = np.random.default_rng(seed).random(unknown.sum())
        assert ct.choose_thresholds(changed, target, CLASSES) == chosen
    # The counts are those of the known labels.
    assert chosen.known_positives == tuple((target == 1).sum(0))
    assert chosen.known_negatives == tuple((target == 0).sum(0))
    # Turning the unknowns into negatives (the "assume negative" reading)
    # would choose other thresholds: the test above can fail.
    assert ct.choose_thresholds(scores, np.where(unknown, 0, target),
                                CLASSES) != chosen


def test_shrinkage_toward_the_global_threshold():
    scores, target = _split()
    k = 10.0
    chosen = ct.choose_thresholds(scores, target, CLASSES, shrinkage=k)
    known = target >= 0
    global_threshold, _ = ct.best_f1_threshold(scores[known], target[known])
    assert chosen.global_threshold == pytest.approx(global_threshold)
    for c in range(3):
        rows = known[:, c]
        own, _ = ct.best_f1_threshold(scores[rows, c], target[rows, c])
        n = chosen.known_positives[c]
        assert chosen.best_thresholds[c] == pytest.approx(own)
        assert chosen.thresholds[c] == pytest.approx(
            (n * own + k * global_threshold) / (n + k))
    # No known positive: the global threshold.
    assert chosen.known_positives[3] == 0
    assert chosen.best_thresholds[3] is None
    assert chosen.thresholds[3] == chosen.global_threshold
    # k = 0 keeps each class's own; a huge k the global one.
    own = ct.choose_thresholds(scores, target, CLASSES, shrinkage=0)
    assert own.thresholds[:3] == own.best_thresholds[:3]
    flat = ct.choose_thresholds(scores, target, CLASSES, shrinkage=1e9)
    np.testing.assert_allclose(
        flat.thresholds, flat.global_threshold, atol=1e-6)


def test_bad_input_is_refused():
    scores, target = _split()
    with pytest.raises(ValueError, match='4 classes of scores but 3'):
        ct.choose_thresholds(scores, target, CLASSES[:3])
    with pytest.raises(ValueError, match='shrinkage must be >= 0'):
        ct.choose_thresholds(scores, target, CLASSES, shrinkage=-1)
    with pytest.raises(ValueError, match='no known positive'):
        ct.choose_thresholds(scores, np.where(target == 1, -1, target),
                             CLASSES)


def test_file_round_trip_beside_the_checkpoint(tmp_path):
    scores, target = _split()
    chosen = ct.choose_thresholds(
        scores, target, CLASSES, source=dict(split='val'))
    checkpoint = str(tmp_path / 'epoch_3.pth')
    assert ct.load_thresholds(checkpoint) is None  # no file: None
    path = ct.save_thresholds(chosen, checkpoint)
    assert path == str(tmp_path / 'epoch_3.thresholds.json')
    assert ct.thresholds_path(checkpoint) == path
    assert ct.load_thresholds(checkpoint) == chosen
    data = json.loads(open(path).read())
    # The keys other readers (the ONNX exporter) rely on.
    assert data['classes'] == CLASSES
    assert data['thresholds'] == list(chosen.thresholds)
    assert data['global_threshold'] == chosen.global_threshold
    assert data['best_thresholds'][3] is None
    assert data['source'] == dict(split='val')
    # The minimal file: classes, thresholds and global_threshold.
    minimal = tmp_path / 'minimal.json'
    minimal.write_text(
        json.dumps(
            dict(
                classes=['a', 'b'],
                thresholds=[0.2, 0.7],
                global_threshold=0.4)))
    assert ct.read_thresholds(str(minimal)).as_array().tolist() == \
        pytest.approx([0.2, 0.7])


@pytest.mark.parametrize('data, message', [
    ([], 'a JSON object'),
    (dict(classes=['a']), 'no thresholds, global_threshold'),
    (dict(classes=['a', 'a'], thresholds=[.1, .2],
          global_threshold=.3), 'names a class twice'),
    (dict(classes=['a'], thresholds=[.1, .2],
          global_threshold=.3), 'one number per class'),
    (dict(classes=['a'], thresholds=[1.5], global_threshold=.3),
     r'thresholds\[0\]` must be a number in \[0, 1\]'),
    (dict(
        classes=['a'],
        thresholds=[.1],
        global_threshold=.3,
        known_positives=[1, 2]), '`known_positives` must have one entry'),
])
def test_damaged_file_names_itself(tmp_path, data, message):
    path = tmp_path / 'model.thresholds.json'
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=message) as error:
        ct.load_thresholds(str(tmp_path / 'model.pth'))
    assert str(path) in str(error.value)
    path.write_text('{not json')
    with pytest.raises(ValueError, match='is not a JSON file'):
        ct.load_thresholds(str(tmp_path / 'model.pth'))


def test_other_classes_are_refused():
    thresholds = ct.ClassThresholds(('a', 'b'), (0.1, 0.2), 0.15)
    ct.check_classes(thresholds, ['a', 'b'], 'f.json')
    with pytest.raises(ValueError, match='f.json is for 2 classes'):
        ct.check_classes(thresholds, ['a', 'c'], 'f.json')


def test_metric_at_per_class_thresholds():
    """class_thr predicts class c where its score reaches threshold c: the
    metric equals the one computed here by hand, and threshold_metrics
    reports the three settings."""
    scores, target = _split()
    chosen = ct.choose_thresholds(scores, target, CLASSES)
    results = [
        dict(pred_score=torch.tensor(s), gt_score=torch.tensor(t))
        for s, t in zip(scores, target)
    ]
    values = MultiLabelF1Metric(
        class_thr=chosen.thresholds).compute_metrics(results)
    predicted = scores >= chosen.as_array()
    known = target >= 0
    tp = (predicted & (target == 1) & known).sum()
    fp = (predicted & (target == 0) & known).sum()
    fn = (~predicted & (target == 1) & known).sum()
    assert values['OF1_thr-class'] == pytest.approx(
        100 * 2 * tp / (2 * tp + fp + fn), rel=1e-5)
    table = ct.threshold_metrics(scores, target, chosen)
    assert table['class']['OF1'] == pytest.approx(values['OF1_thr-class'])
    assert table['0.5']['CF1'] == pytest.approx(
        MultiLabelF1Metric().compute_metrics(results)['CF1'])
    # The global threshold maximises OF1 over the known labels.
    assert table['global']['OF1'] >= table['0.5']['OF1']
    with pytest.raises(ValueError, match='leave thr and topk unset'):
        MultiLabelF1Metric(class_thr=[0.5] * 4, thr=0.3)
    with pytest.raises(ValueError, match=r'class_thr\[1\] must lie'):
        MultiLabelF1Metric(class_thr=[0.5, 1.5])
    with pytest.raises(ValueError, match='3 thresholds but the predictions'):
        MultiLabelF1Metric(class_thr=[0.5] * 3).compute_metrics(results)


def test_the_thresholds_of_the_metric_keys():
    """What tools/test.py prints and the model card titles read from the
    keys of MultiLabelF1Metric: each threshold once, in order, an EMA
    run's ``_origin`` keys left out."""
    from mmlml.evaluation.multi_label_f1 import f1_thresholds
    metrics = {
        'thresholds/CP': 1,
        'thresholds/CF1': 2,
        'thresholds/CF1_thr-0.07': 3,
        'thresholds/CF1_thr-class': 4,
        'thresholds/CF1_thr-class_origin': 5,
        'thresholds/CF1_top3': 6,
        'multi-label/CF1': 7
    }
    assert f1_thresholds(metrics,
                         'thresholds') == [('', '0.5'), ('_thr-0.07', '0.07'),
                                           ('_thr-class', 'per class'),
                                           ('_top3', 'top 3')]
