"""The quality of pseudo-labels on a partially annotated dataset: judged by
the annotation's known labels only, the same in tools/pseudo_label.py's
summary and in the training log of the label file."""
import json
import os.path as osp
import sys

import numpy as np
import pytest
from conftest import ROOT

import mmlml  # noqa: F401
from mmlml.datasets import PartialLabelDataset
from mmlml.datasets.partial.statistics import known_label_quality, quality_text

sys.path.insert(0, osp.join(ROOT, 'tools'))
import pseudo_label as tool  # noqa: E402

#: The annotation: 1 positive, -1 negative, 0 unknown.
ANNOTATION = np.array([[1, 1, -1, 0], [-1, 1, 0, -1], [1, -1, -1, 0]],
                      dtype=np.int8)
#: The first stage's labels: one positive per image (single positive).
OBSERVED = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [1, 0, 0, 0]], dtype=np.int8)
#: The pseudo-labels: five pseudo-positives added, one on a known positive
#: (0, 1), two on known negatives (0, 2) and (1, 0), two on unknowns (0, 3)
#: and (2, 3).
LABELS = np.array([[1, 1, 1, 1], [1, 1, 0, 0], [1, 0, 0, 1]], dtype=np.int8)


def _matrices():
    return (ANNOTATION == 1).astype(np.uint8), ANNOTATION == 0


def test_quality_counts_known_labels_only():
    full, unknown = _matrices()
    quality = known_label_quality(LABELS, full, unknown, OBSERVED == 0)
    assert quality == dict(
        num_positives_on_known=3,
        num_true_positives=1,
        num_positives_on_unknown=2,
        num_annotated_negatives=5,
        num_negatives_left=3,
        num_negatives_on_positives=0,
        precision=1 / 3,
        negative_agreement=3 / 5)
    assert quality_text(quality, 'pseudo-positives added') == (
        '3 pseudo-positives added on known labels: precision 33.3%; '
        'agreement with the 5 annotated negatives 60.0%; 2 on labels the '
        'annotation leaves unknown, left out')
    # Only unknowns decided on (the 'annotated' mode's first stage): no
    # known label judges them, nothing is a miss.
    quality = known_label_quality(
        np.where(ANNOTATION == 0, 1, ANNOTATION), full, unknown,
        ANNOTATION == 0)
    assert (quality['precision'], quality['negative_agreement'],
            quality['num_positives_on_unknown']) == (None, None, 3)
    assert 'precision n/a; agreement with the 0 annotated negatives n/a; ' \
        '3 on labels' in quality_text(quality, 'pseudo-positives added')
    # A fully labelled annotation (no unknowns): every label is known.
    quality = known_label_quality(LABELS, full, None)
    assert (quality['num_positives_on_known'],
            quality['num_positives_on_unknown']) == (8, 0)


def test_tool_summary_leaves_unknowns_out():
    full, unknown = _matrices()
    summary = tool.summarise(OBSERVED, LABELS, full, unknown)
    assert summary['num_pseudo_positives'] == 5
    assert summary['precision'] == pytest.approx(1 / 3)  # not 1 / 5
    assert summary['num_missing_positives'] == 1  # (0, 1)
    assert summary['recall'] == 1.0
    line = tool._format(summary, 'All rows')
    assert line == (
        'All rows: 3 images, observed positives 3, pseudo-positives added 5 '
        '(1.67 per image), recall 100.0% of the 1 missing known positives; '
        '3 pseudo-positives added on known labels: precision 33.3%; '
        'agreement with the 5 annotated negatives 60.0%; 2 on labels the '
        'annotation leaves unknown, left out')


def test_training_log_of_the_label_file_says_the_same(tmp_path, monkeypatch):
    """The label file trained on: its positives judged by the same
    function, in the same words, unknowns left out."""
    data_list = [
        dict(
            img_path=f'img_{i}.jpg',
            gt_label=np.flatnonzero(row == 1).tolist(),
            gt_label_negative=np.flatnonzero(row == -1).tolist())
        for i, row in enumerate(ANNOTATION)
    ]
    ann_file = tmp_path / 'ann.json'
    ann_file.write_text(
        json.dumps(
            dict(
                metainfo=dict(classes=['a', 'b', 'c', 'd']),
                data_list=data_list)))
    label_file = str(tmp_path / 'labels.npy')
    np.save(label_file, LABELS)
    messages = []
    monkeypatch.setattr('mmlml.datasets.partial.dataset.print_log',
                        lambda msg, **kwargs: messages.append(msg))
    dataset = PartialLabelDataset(
        dict(
            type='CustomMultiLabelDataset',
            ann_file=str(ann_file),
            unlisted='unknown',
            pipeline=[dict(type='PackInputs')]),
        mode='file',
        label_file=label_file)
    np.testing.assert_array_equal(dataset.annotation_unknown, ANNOTATION == 0)
    stats = dataset.statistics()
    # 8 positives: 4 on known positives, 2 on known negatives, 2 unknown.
    assert stats['observed_positive_precision'] == pytest.approx(4 / 6)
    assert stats['num_false_observed_positives'] == 2
    assert stats['quality']['num_positives_on_unknown'] == 2
    assert ('Against the known labels of the annotation: 2 observed '
            'positives are negatives there, 0 observed negatives are '
            'positives; 6 observed positives on known labels: precision '
            '66.7%; agreement with the 5 annotated negatives 60.0%; 2 on '
            'labels the annotation leaves unknown, left out.') in messages[0]
