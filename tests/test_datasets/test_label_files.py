"""Annotations with observed negatives and unknowns, the two label encodings,
and the label files of the 'file' mode."""
import json
import logging
import re

import numpy as np
import pytest
import torch
from mmengine.dataset import ConcatDataset
from mmengine.registry import DefaultScope
from mmpretrain.evaluation import AveragePrecision, MultiLabelMetric

import mmlml  # noqa: F401
from mmlml.datasets import (CustomMultiLabelDataset, PartialLabelDataset,
                            evaluation_target, label_states)
from mmlml.registry import DATASETS

NUM_SAMPLES, NUM_CLASSES = 60, 5


def _annotation(seed=0):
    """Positives, negatives and unknowns of a partially annotated set."""
    rng = np.random.RandomState(seed)
    states = rng.choice([1, 0, -1],
                        size=(NUM_SAMPLES, NUM_CLASSES),
                        p=[0.3, 0.4, 0.3]).astype(np.int8)
    states[3] = 0  # nothing known
    states[4] = -1  # negatives only
    return states


def _write(path, states, classes=None, negatives=True):
    data_list = []
    for i, row in enumerate(states):
        item = dict(
            img_path=f'img_{i}.jpg',
            gt_label=np.flatnonzero(row == 1).tolist())
        if negatives:
            item['gt_label_negative'] = np.flatnonzero(row == -1).tolist()
        data_list.append(item)
    classes = classes or [f'c{k}' for k in range(states.shape[1])]
    path.write_text(
        json.dumps(dict(metainfo=dict(classes=classes), data_list=data_list)))
    return str(path)


@pytest.fixture(scope='module')
def partial_file(tmp_path_factory):
    return _write(tmp_path_factory.mktemp('ann') / 'ann.json', _annotation())


def _inner(ann_file, **kwargs):
    return dict(
        type='CustomMultiLabelDataset',
        ann_file=ann_file,
        unlisted='unknown',
        pipeline=[dict(type='PackInputs')],
        **kwargs)


def _samples(dataset):
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        return [dataset[i]['data_samples'] for i in range(len(dataset))]


# ------------------------------------------------------------- encodings
def test_label_states_and_evaluation_target():
    states = label_states([0, 2], [1], 4, unlisted='unknown')
    np.testing.assert_array_equal(states, [1, -1, 1, 0])
    np.testing.assert_array_equal(
        label_states([0], None, 3, unlisted='negative'), [1, -1, -1])
    np.testing.assert_array_equal(evaluation_target(states), [1, 0, 1, -1])
    np.testing.assert_array_equal(
        evaluation_target(states, unknown='negative'), [1, 0, 1, 0])
    with pytest.raises(ValueError, match='`unknown` must be one of'):
        evaluation_target(states, unknown='skip')


# --------------------------------------------------- CustomMultiLabelDataset
def test_custom_dataset_states_and_statistics(partial_file):
    states = _annotation()
    dataset = CustomMultiLabelDataset(
        ann_file=partial_file, unlisted='unknown')
    for i in range(NUM_SAMPLES):
        np.testing.assert_array_equal(dataset.get_label_states(i), states[i])
        assert dataset.get_cat_ids(i) == np.flatnonzero(
            states[i] == 1).tolist()
        # A training sample carries its positives only.
        assert 'gt_score' not in dataset.get_data_info(i)
    stats = dataset.annotation_statistics()
    assert stats['num_positives'] == (states == 1).sum()
    assert stats['num_negatives'] == (states == -1).sum()
    assert stats['num_unknown'] == (states == 0).sum()
    assert stats['num_images_without_positive'] == ((
        states == 1).sum(1) == 0).sum()
    assert stats['num_images_without_label'] == (
        (states != 0).sum(1) == 0).sum() > 0  # row 3 at least
    # The same file read as a full annotation: unlisted labels are negative.
    full = CustomMultiLabelDataset(ann_file=partial_file)
    np.testing.assert_array_equal(
        full.get_label_states(0), np.where(states[0] == 1, 1, -1))
    assert full.annotation_statistics()['num_unknown'] == 0


def test_custom_dataset_evaluation_split(partial_file):
    states = _annotation()
    dataset = CustomMultiLabelDataset(
        ann_file=partial_file, unlisted='unknown', test_mode=True)
    assert dataset.is_evaluation_split
    for i in range(NUM_SAMPLES):
        np.testing.assert_array_equal(
            dataset.get_data_info(i)['gt_score'], evaluation_target(states[i]))
    # A full annotation needs no evaluation target.
    full = CustomMultiLabelDataset(ann_file=partial_file, test_mode=True)
    assert 'gt_score' not in full.get_data_info(0)


def test_custom_dataset_logs_summary_and_warning(partial_file, monkeypatch):
    messages = []
    monkeypatch.setattr(
        'mmlml.datasets.custom_multi_label_dataset.print_log',
        lambda msg, **kwargs: messages.append((msg, kwargs.get('level'))))
    dataset = CustomMultiLabelDataset(
        ann_file=partial_file, unlisted='unknown')
    assert len(messages) == 1
    assert f'{NUM_SAMPLES} images, {NUM_CLASSES} classes' in messages[0][0]
    # Wrapped, the dataset's pipeline never runs: no warning.
    PartialLabelDataset(dataset, mode='annotated')[0]
    assert len(messages) == 1
    # Trained on directly, it warns once, at the first sample.
    dataset[0], dataset[1]
    assert len(messages) == 2
    assert "PartialLabelDataset(mode='annotated')" in messages[1][0]
    assert messages[1][1] == logging.WARNING
    # No warning for an evaluation split or a full annotation.
    for kwargs in (dict(unlisted='unknown', test_mode=True), dict()):
        CustomMultiLabelDataset(ann_file=partial_file, **kwargs)[0]
    assert len(messages) == 4


@pytest.mark.parametrize('item, match', [
    (dict(img_path='a.jpg'), r"\(a.jpg\).*has no `gt_label`"),
    (dict(img_path='a.jpg', gt_label=[5]), r'`gt_label`.*\[0, 3\).*\[5\]'),
    (dict(img_path='a.jpg', gt_label=[0.5]), r'`gt_label`.*integers'),
    (dict(img_path='a.jpg', gt_label=[1, 1]), 'lists a class twice'),
    (dict(img_path='a.jpg', gt_label=[1],
          gt_label_negative=[-1]), r'`gt_label_negative`.*\[-1\]'),
    (dict(img_path='a.jpg', gt_label=[0, 1], gt_label_negative=[1, 2]),
     r'classes \[1\] are both in `gt_label` and in `gt_label_negative`'),
])
def test_custom_dataset_bad_annotation(tmp_path, item, match):
    # Two good items first: the message names the bad one (item 2), whose
    # labels may collide with theirs once flattened (-1 in item 2 is class
    # 2 of item 1).
    good = [
        dict(img_path='x.jpg', gt_label=[0, 2], gt_label_negative=[1]),
        dict(img_path='y.jpg', gt_label=[2])
    ]
    path = tmp_path / 'bad.json'
    path.write_text(
        json.dumps(
            dict(
                metainfo=dict(classes=['a', 'b', 'c']),
                data_list=good + [item, good[1]])))
    with pytest.raises(
            ValueError, match=re.escape(str(path)) + '.*item 2.*' + match):
        CustomMultiLabelDataset(ann_file=str(path), unlisted='unknown')


def test_custom_dataset_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match='^unlisted must be one of'):
        CustomMultiLabelDataset(ann_file='x.json', unlisted='missing')
    path = tmp_path / 'no_classes.json'
    path.write_text(
        json.dumps(
            dict(metainfo={}, data_list=[dict(img_path='a.jpg',
                                              gt_label=[])])))
    with pytest.raises(ValueError, match='needs the class names'):
        CustomMultiLabelDataset(ann_file=str(path))


# ------------------------------------------------------ the 'annotated' mode
def test_annotated_mode_trains_on_the_annotation(partial_file):
    states = _annotation()
    dataset = PartialLabelDataset(
        _inner(partial_file), mode='annotated', split='train')
    rows = dataset.indices
    np.testing.assert_array_equal(dataset.observed_labels, states[rows])
    np.testing.assert_array_equal(dataset.full_labels, states[rows] == 1)
    assert dataset.annotation_has_unknowns
    for i, sample in enumerate(_samples(dataset)):
        # The loss target: the training encoding, negatives included.
        np.testing.assert_array_equal(sample.gt_score.numpy(), states[rows[i]])
        np.testing.assert_array_equal(
            dataset.get_annotation(i), states[rows[i]])
    stats = dataset.statistics()
    assert stats['num_observed_negatives'] == (states[rows] == -1).sum()
    assert stats['num_annotated_unknown'] == (states[rows] == 0).sum()
    assert stats['num_false_observed_negatives'] == 0


def test_full_mode_refuses_an_annotation_with_unknowns(partial_file):
    with pytest.raises(
            ValueError,
            match=r"mode='full'.*unknown in its own "
            r"annotation.*mode='annotated'"):
        PartialLabelDataset(_inner(partial_file), mode='full')


def test_generated_modes_keep_unknowns_unknown(partial_file):
    states = _annotation()
    dataset = PartialLabelDataset(_inner(partial_file), mode='single_positive')
    observed = dataset.observed_labels
    assert not (observed == -1).any()
    assert ((observed == 1) <= (states == 1)).all()
    has_pos = (states == 1).any(1)
    np.testing.assert_array_equal((observed == 1).sum(1), has_pos)
    assert dataset.statistics()['num_images_without_observed_positive'] == (
        ~has_pos).sum()


def test_concat_of_partial_parts(partial_file, tmp_path):
    other = _write(tmp_path / 'b.json', _annotation(seed=1))
    with DefaultScope.overwrite_default_scope('mmlml'):
        concat = ConcatDataset([
            DATASETS.build(_inner(partial_file)),
            DATASETS.build(_inner(other))
        ])
    dataset = PartialLabelDataset(concat, mode='annotated')
    expected = np.concatenate([_annotation(), _annotation(seed=1)])
    np.testing.assert_array_equal(dataset.observed_labels, expected)


# ------------------------------------------------- what reaches an evaluator
def test_clean_validation_ignores_the_annotations_unknowns(partial_file):
    states = _annotation()
    val = PartialLabelDataset(
        _inner(partial_file),
        mode='annotated',
        split='val',
        val_labels='clean')
    for i, sample in enumerate(_samples(val)):
        np.testing.assert_array_equal(
            sample.gt_score.numpy(), evaluation_target(states[val.indices[i]]))


def test_observed_validation_unknown_handling(partial_file, tmp_path):
    states = _annotation()
    # With observed negatives, unknown labels are ignored by default.
    val = PartialLabelDataset(
        _inner(partial_file),
        mode='annotated',
        split='val',
        val_labels='observed')
    assert val.eval_unknown == 'ignore'
    for i, sample in enumerate(_samples(val)):
        np.testing.assert_array_equal(
            sample.gt_score.numpy(), evaluation_target(states[val.indices[i]]))
    # Without any (single positive), they count as negatives (Cole et al.).
    single = PartialLabelDataset(
        _inner(partial_file), split='val', val_labels='observed')
    assert single.eval_unknown == 'negative'
    for i, sample in enumerate(_samples(single)):
        np.testing.assert_array_equal(sample.gt_score.numpy(),
                                      (single.observed_labels[i] == 1).astype(
                                          np.float32))
    with pytest.raises(ValueError, match="val_unknown='ignore'.*no negative"):
        PartialLabelDataset(
            _inner(partial_file),
            split='val',
            val_labels='observed',
            val_unknown='ignore')
    forced = PartialLabelDataset(
        _inner(partial_file),
        mode='annotated',
        split='val',
        val_labels='observed',
        val_unknown='negative')
    assert (forced[0]['data_samples'].gt_score >= 0).all()
    with pytest.raises(ValueError, match='^val_unknown must be one of'):
        PartialLabelDataset(_inner(partial_file), val_unknown='unknown')
    # Training samples keep the training encoding.
    train = PartialLabelDataset(
        _inner(partial_file), mode='annotated', split='train')
    assert train.eval_unknown is None


def _evaluate(samples, scores):
    """mAP and F1 of MMPretrain's evaluators on ``samples``."""
    results = {}
    for metric in (AveragePrecision(),
                   MultiLabelMetric(items=('precision', 'f1-score'))):
        data_samples = []
        for sample, score in zip(samples, scores):
            sample = sample.clone()
            sample.set_pred_score(torch.as_tensor(score))
            data_samples.append(sample.to_dict())
        metric.process(None, data_samples)
        results.update(metric.evaluate(len(data_samples)))
    return results


def test_evaluators_compute_over_known_labels_only(partial_file):
    val = PartialLabelDataset(
        _inner(partial_file),
        mode='annotated',
        split='val',
        val_frac=0.5,
        val_labels='observed')
    samples = _samples(val)
    observed = val.observed_labels
    rng = np.random.RandomState(0)
    scores = rng.rand(*observed.shape).astype(np.float32)

    # A constant predictor does not score AP 100 (it did when the training
    # encoding reached the evaluator: the -1s were dropped as "ignore").
    constant = _evaluate(samples, np.full(observed.shape, 0.7, np.float32))
    assert constant['multi-label/mAP'] < 100
    assert constant['multi-label/precision'] < 100

    # Unknown labels change nothing: any score there gives the same numbers.
    base = _evaluate(samples, scores)
    other = scores.copy()
    other[observed == 0] = rng.rand(int((observed == 0).sum()))
    assert _evaluate(samples, other) == pytest.approx(base)

    # And the numbers are those of the known labels alone.
    known = observed != 0
    aps = []
    for c in range(NUM_CLASSES):
        y, s = observed[known[:, c], c] == 1, scores[known[:, c], c]
        order = np.argsort(-s, kind='stable')
        hits = y[order]
        precision = np.cumsum(hits) / np.arange(1, len(hits) + 1)
        aps.append((precision * hits).sum() / max(hits.sum(), 1))
    assert base['multi-label/mAP'] == pytest.approx(
        100 * np.mean(aps), abs=1e-3)


# ------------------------------------------------------------ label files
def _coco_like(tmp_path, names):
    data_list = [
        dict(img_path=f'train2014/{n}', gt_label=[k % 3, 3])
        for k, n in enumerate(names)
    ]
    path = tmp_path / 'full.json'
    path.write_text(
        json.dumps(
            dict(
                metainfo=dict(classes=['a', 'b', 'c', 'd']),
                data_list=data_list)))
    return dict(type='MultiLabelDataset', ann_file=str(path), pipeline=[])


def test_text_label_file(tmp_path):
    names = [f'COCO_train2014_{i:012d}.jpg' for i in (9, 25, 30, 34)]
    inner = _coco_like(tmp_path, names)
    lines = [
        f'{names[2]},2 3', f'{names[0]}, 3', f'{names[3]},', f'{names[1]},1 3',
        'COCO_train2014_000000099999.jpg,2'
    ]
    path = tmp_path / 'coco_train_0.75left.txt'
    path.write_text('\n'.join(lines) + '\n\n')
    dataset = PartialLabelDataset(inner, mode='file', label_file=str(path))
    np.testing.assert_array_equal(
        dataset.observed_labels,
        [[0, 0, 0, 1], [0, 1, 0, 1], [0, 0, 1, 1], [0, 0, 0, 0]])
    stats = dataset.statistics()
    assert stats['num_false_observed_positives'] == 0
    assert stats['num_observed_negatives'] == 0


@pytest.mark.parametrize('lines, match', [
    (['{0},0', '{1},1', '{2},2'], r'no line for 1 of the 4 samples.*'
     r'COCO_train2014_000000000034\.jpg'),
    (['{0},0', '{1},1', '{2},2', '{3},1', '{0},2'
      ], r'line 5.*already listed on line 1'),
    (['{0},0', '{1},7', '{2},2', '{3},1'], r'line 2.*\[7\] are outside'),
    (['{0},0', '{1},x', '{2},2', '{3},1'], r'line 2.*integers'),
    (['{0} 0', '{1},1', '{2},2', '{3},1'], r'line 1.*expected'),
])
def test_text_label_file_errors(tmp_path, lines, match):
    names = [f'COCO_train2014_{i:012d}.jpg' for i in (9, 25, 30, 34)]
    inner = _coco_like(tmp_path, names)
    path = tmp_path / 'labels.txt'
    path.write_text('\n'.join(line.format(*names) for line in lines))
    with pytest.raises(ValueError, match=re.escape(str(path)) + '.*' + match):
        PartialLabelDataset(inner, mode='file', label_file=str(path))


@pytest.mark.parametrize('suffix', ['.txt', '.npy'])
def test_label_file_without_observed_label(tmp_path, suffix):
    """label-file-empty: a label file whose every entry is unknown trains
    on nothing; it is refused, naming the file."""
    names = [f'COCO_train2014_{i:012d}.jpg' for i in (9, 25, 30, 34)]
    inner = _coco_like(tmp_path, names)
    path = tmp_path / f'labels{suffix}'
    if suffix == '.txt':
        path.write_text(''.join(f'{name},\n' for name in names))
    else:
        np.save(path, np.zeros((4, 4), dtype=np.int8))
    with pytest.raises(ValueError, match=r'holds no observed label.*4 x 4'):
        PartialLabelDataset(inner, mode='file', label_file=str(path))


def test_text_label_file_needs_unique_names(tmp_path):
    inner = _coco_like(tmp_path, ['a/x.jpg', 'b/x.jpg'])
    path = tmp_path / 'labels.txt'
    path.write_text('x.jpg,0\n')
    with pytest.raises(ValueError, match="samples 0 and 1 .* both 'x.jpg'"):
        PartialLabelDataset(inner, mode='file', label_file=str(path))
    with pytest.raises(ValueError, match=r"suffix is '\.csv'"):
        PartialLabelDataset(
            inner, mode='file', label_file=str(tmp_path / 'labels.csv'))
