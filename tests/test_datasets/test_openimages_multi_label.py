"""OpenImagesMultiLabel and its converter, on small files in the official
formats of OpenImages V6."""
import os.path as osp
import sys

import numpy as np
import pytest
import torch
from conftest import ROOT, build_image_dataset
from mmpretrain.evaluation import AveragePrecision

import mmlml  # noqa: F401
from mmlml.datasets import PartialLabelDataset
from mmlml.datasets.benchmarks.openimages_multi_label import (
    HUMAN_LABEL_FILES, OpenImagesMultiLabel, load_labels, save_labels)
from mmlml.datasets.custom_multi_label_dataset import CustomMultiLabelDataset
from mmlml.datasets.summary import dataset_summary, format_summary
from mmlml.registry import DATASETS

sys.path.insert(0, osp.join(ROOT, 'tools', 'dataset_converters'))
import openimages as converter  # noqa: E402

HEADER = 'ImageID,Source,LabelName,Confidence\n'
# Rows in file order (not sorted by ImageID): a class outside the subset
# (/m/0e, /m/0f), an image with only negatives in the subset (0b..02), one
# with labels of other classes only (0e..05), a repeated row and a
# conflicting pair (positive and negative).
ROWS = """\
0f00000000000003,verification,/m/0c,1
0f00000000000003,verification,/m/0a,0
0f00000000000003,verification,/m/0e,1
0a00000000000001,verification,/m/0c,0
0a00000000000001,crowdsource-verification,/m/0a,1
0a00000000000001,verification,/m/0d,0
0a00000000000001,verification,/m/0b,1
0a00000000000001,verification,/m/0b,1
0b00000000000002,verification,/m/0a,0
0b00000000000002,verification,/m/0f,1
0c00000000000004,verification,/m/0d,1
0c00000000000004,crowdsource-verification,/m/0d,0
0c00000000000004,verification,/m/0b,0
0e00000000000005,verification,/m/0f,1
"""
DESCRIPTIONS = """\
LabelName,DisplayName
/m/0a,Dog
/m/0b,Bat
/m/0c,Cat
/m/0d,Bat
/m/0e,"Car, red"
/m/0f,Tree
"""
SUBSET = '/m/0c\n/m/0a\n/m/0d\n/m/0b\n'
CLASSES = ('Cat', 'Dog', 'Bat (/m/0d)', 'Bat (/m/0b)')
MIDS = ('/m/0c', '/m/0a', '/m/0d', '/m/0b')
# Rows sorted by ImageID; states in mmlml's encoding (1, 0 unknown, -1).
IMAGES = ['0a00000000000001', '0c00000000000004', '0f00000000000003']
STATES = [[-1, 1, -1, 1], [0, 0, 1, -1], [1, -1, 0, 0]]
NEGATIVE_ONLY = '0b00000000000002'
PRESENT = IMAGES[:2]  # images on disk; IMAGES[2] is missing


@pytest.fixture
def root(tmp_path):
    ann = tmp_path / 'annotations'
    ann.mkdir()
    for name in HUMAN_LABEL_FILES.values():
        (ann / name).write_text(HEADER + ROWS)
    (ann / 'oidv6-class-descriptions.csv').write_text(DESCRIPTIONS)
    (ann / 'classes.txt').write_text(SUBSET)
    import mmcv
    for split in HUMAN_LABEL_FILES:
        for image_id in PRESENT:
            mmcv.imwrite(
                np.zeros((8, 8, 3), np.uint8),
                str(tmp_path / split / f'{image_id}.jpg'))
    return tmp_path


def make(root, split='validation', **kwargs):
    kwargs.setdefault('classes_file', 'annotations/classes.txt')
    return OpenImagesMultiLabel(data_root=str(root), split=split, **kwargs)


def infos(dataset):
    return [dataset.get_data_info(i) for i in range(len(dataset))]


def same_infos(first, second):
    return len(first) == len(second) and all(
        a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
        for a, b in zip(first, second))


def test_classes_rows_and_labels(root):
    dataset = make(root)
    assert dataset.metainfo['classes'] == CLASSES
    assert dataset.class_mids == MIDS
    assert [info['image_id'] for info in infos(dataset)] == IMAGES
    assert [info['img_path'] for info in infos(dataset)] == [
        osp.join(str(root), 'validation', f'{i}.jpg') for i in IMAGES
    ]
    for i, states in enumerate(STATES):
        np.testing.assert_array_equal(dataset.get_label_states(i), states)
        assert dataset.get_label_states(i).dtype == np.int8
        assert dataset.get_cat_ids(i) == [
            c for c, s in enumerate(states) if s == 1
        ]
        info = dataset.get_data_info(i)
        assert info['gt_label_negative'] == [
            c for c, s in enumerate(states) if s == -1
        ]
        # Evaluation convention: 1 positive, 0 negative, -1 unknown.
        np.testing.assert_array_equal(info['gt_score'], [{
            1: 1,
            -1: 0,
            0: -1
        }[s] for s in states])
    assert dataset.annotation_statistics() == dict(
        num_images=3,
        num_classes=4,
        num_positives=4,
        num_negatives=4,
        num_unknown=4,
        positives_per_image=4 / 3,
        num_images_without_positive=0,
        num_images_without_label=0,
        num_images_dropped=1,
        num_duplicate_labels=2,
        num_conflicting_labels=1)


def test_statistics_match_the_item_by_item_check(root):
    dataset = make(
        root, serialize_data=False, drop_images_without_positive=False)
    fast = dataset.annotation_statistics()
    CustomMultiLabelDataset.filter_data(dataset)  # the base's own count
    slow = dataset.annotation_statistics()
    assert {k: fast[k] for k in slow} == slow


def test_keep_images_without_positive(root):
    dataset = make(root, drop_images_without_positive=False)
    ids = [info['image_id'] for info in infos(dataset)]
    assert ids == sorted(IMAGES + [NEGATIVE_ONLY])
    np.testing.assert_array_equal(
        dataset.get_label_states(ids.index(NEGATIVE_ONLY)), [0, -1, 0, 0])
    stats = dataset.annotation_statistics()
    assert stats['num_images'] == 4
    assert stats['num_images_without_positive'] == 1
    assert stats['num_images_dropped'] == 0
    assert stats['num_negatives'] == 5


@pytest.mark.parametrize('split', ['train', 'validation', 'test'])
def test_splits(root, split):
    dataset = make(root, split=split)
    assert dataset.img_prefix == osp.join(str(root), split)
    assert dataset.ann_file == osp.join(
        str(root), 'annotations', HUMAN_LABEL_FILES[split])
    info = dataset.get_data_info(0)
    assert ('gt_score' in info) == (split != 'train')
    np.testing.assert_array_equal(dataset.get_label_states(0), STATES[0])


def test_class_names_and_subset_formats(root):
    assert make(root, class_descriptions=None).metainfo['classes'] == MIDS
    (root / 'annotations' / 'oidv6-class-descriptions.csv').unlink()
    assert make(root).metainfo['classes'] == MIDS  # default file absent
    with pytest.raises(FileNotFoundError, match='names.csv'):
        make(root, class_descriptions='names.csv')
    # A CSV class list (header, comment, blank line): first column = MID.
    (root / 'subset.csv').write_text('LabelName,DisplayName\n# pets\n'
                                     '/m/0a,Dog\n\n/m/0c,Cat\n')
    dataset = make(root, classes_file='subset.csv', class_descriptions=None)
    assert dataset.metainfo['classes'] == ('/m/0a', '/m/0c')
    np.testing.assert_array_equal(dataset.get_label_states(0), [1, -1])


def test_converted_file_gives_the_same_dataset(root, capsys):
    out = root / 'annotations' / 'val_4.npz'
    assert converter.main([
        '--data-root',
        str(root), '--split', 'validation', '--classes-file',
        str(root / 'annotations' / 'classes.txt'), '--out',
        str(out), '--no-progress'
    ]) == 0
    printed = capsys.readouterr().out
    missing = osp.join(str(root), 'validation', f'{IMAGES[2]}.jpg')
    assert 'validation (4 classes): 3 images, 4 classes' in printed
    assert 'missing image files: 1\n    ' + missing in printed
    assert "ann_file='annotations/val_4.npz'" in printed

    from_csv = make(root)
    for kwargs in (dict(classes_file=None), dict()):
        from_npz = make(root, ann_file=str(out), **kwargs)
        assert from_npz.metainfo == from_csv.metainfo
        assert same_infos(infos(from_npz), infos(from_csv))
        assert from_npz.annotation_statistics() == \
            from_csv.annotation_statistics()
    labels = load_labels(str(out))
    assert labels.split == 'validation'
    assert labels.source == HUMAN_LABEL_FILES['validation']
    assert [i.decode()
            for i in labels.image_ids] == sorted(IMAGES + [NEGATIVE_ONLY])
    assert labels.counts == dict(
        num_rows=14,
        num_rows_outside_subset=3,
        num_duplicate_labels=2,
        num_conflicting_labels=1)

    # The converter's options: no image check, negative-only images kept.
    assert converter.main([
        '--data-root',
        str(root), '--split', 'train', '--classes-file',
        str(root / 'annotations' / 'classes.txt'), '--out',
        str(root / 'train.npz'), '--no-progress', '--no-check-images',
        '--keep-images-without-positive', '--no-class-descriptions'
    ]) == 0
    printed = capsys.readouterr().out
    assert 'train (4 classes): 4 images' in printed
    assert 'missing image files' not in printed
    train = make(
        root,
        split='train',
        ann_file=str(root / 'train.npz'),
        classes_file=None,
        drop_images_without_positive=False)
    assert train.metainfo['classes'] == MIDS
    assert len(train) == 4


def test_converted_file_checks(root):
    out = str(root / 'val.npz')
    converter.main([
        '--data-root',
        str(root), '--split', 'validation', '--classes-file',
        str(root / 'annotations' / 'classes.txt'), '--out', out,
        '--no-progress', '--no-check-images'
    ])
    with pytest.raises(ValueError, match="holds the 'validation' split"):
        make(root, split='test', ann_file=out)
    (root / 'other.txt').write_text('/m/0a\n/m/0c\n/m/0d\n/m/0b\n')
    with pytest.raises(ValueError, match='other.txt.*is not the class subset'):
        make(root, ann_file=out, classes_file='other.txt')
    # A positive that is also a negative.
    labels = load_labels(out)
    bad = labels._replace(neg_indices=labels.neg_indices.copy())
    bad.neg_indices[0] = 1  # image 0 has class 1 as positive
    save_labels(str(root / 'bad.npz'), bad)
    with pytest.raises(ValueError, match='bad.npz.*both as positive and as'):
        make(root, ann_file=str(root / 'bad.npz'))
    np.savez(str(root / 'foreign.npz'), a=np.zeros(3))
    with pytest.raises(ValueError, match='foreign.npz.*lacks'):
        make(root, ann_file=str(root / 'foreign.npz'))
    (root / 'text.npz').write_text('not a zip')
    with pytest.raises(ValueError, match='text.npz.*not a readable'):
        make(root, ann_file=str(root / 'text.npz'))


def _write(root, text, name='labels.csv'):
    (root / name).write_text(text)
    return name


@pytest.mark.parametrize(
    'text, match', [
        (HEADER + '0a,machine,/m/0a,0.7\n',
         r'Line 2 of .*labels.csv.*fractional.*human-verified'),
        (HEADER + '0a,machine,/m/0a,1\n', r'Line 2 .*Source "machine"'),
        (HEADER + '0a,verification,/m/0a,yes\n', r'Line 2 .*not a number'),
        (HEADER + '0a,verification,/m/0a,2\n', r'Line 2 .*1 or 0'),
        (HEADER + '0a,verification,/m/0a,1\n0b,/m/0a,1\n',
         r'Line 3 .*3 fields'),
        (HEADER + '0a,verification,,1\n', r'Line 2 .*empty LabelName'),
        (HEADER + ',verification,/m/0a,1\n', r'Line 2 .*ImageID'),
        ('ImageID,Label,Confidence\n0a,/m/0a,1\n',
         r'Line 1 .*header.*LabelName'),
        ('', r'labels.csv.*empty'),
        (HEADER + '0a,verification,/m/0z,1\n', r'No row .*labels.csv'),
    ],
    ids=[
        'fractional', 'machine', 'not-a-number', 'not-0-or-1', 'fields',
        'no-label', 'no-image-id', 'header', 'empty', 'no-class-of-subset'
    ])
def test_malformed_label_file(root, text, match):
    with pytest.raises(ValueError, match=match):
        make(root, ann_file=_write(root, text))


def test_fractional_confidence_in_the_subset_or_not(root):
    # A machine label of a class outside the subset is an error too: the
    # whole file is of the wrong kind.
    text = HEADER + '0a,verification,/m/0a,1\n0a,machine,/m/0f,0.25\n'
    with pytest.raises(ValueError, match='Line 3 .*machine-imagelabels'):
        make(root, ann_file=_write(root, text))


@pytest.mark.parametrize(
    'text, match', [
        ('/m/0c\n/m/0a\n/m/0c\n', r'cls.txt.*/m/0c twice: on line 1 and on '
         r'line 3'),
        ('/m/0c\n/m/0z\n', r'Line 2 of the class-subset file .*cls.txt.*'
         r'/m/0z.*not a class of the class descriptions'),
        ('/m/0c\nCat\n', r'Line 2 of class-subset file .*cls.txt.*Cat'),
        ('\n# nothing\n', r'cls.txt.*lists no class'),
    ],
    ids=['duplicate', 'unknown-mid', 'not-a-mid', 'empty'])
def test_malformed_classes_file(root, text, match):
    with pytest.raises(ValueError, match=match):
        make(root, classes_file=_write(root, text, 'cls.txt'))


def test_missing_files_and_arguments(root):
    with pytest.raises(FileNotFoundError, match='nope.txt'):
        make(root, classes_file='nope.txt')
    with pytest.raises(FileNotFoundError, match='nope.csv'):
        make(root, ann_file='nope.csv')
    with pytest.raises(FileNotFoundError, match='nope.npz'):
        make(root, ann_file='nope.npz')
    (root / 'bad_desc.csv').write_text('LabelName,DisplayName\n/m/0a\n')
    with pytest.raises(ValueError, match='Line 2 .*bad_desc.csv'):
        make(root, class_descriptions='bad_desc.csv')
    with pytest.raises(ValueError, match='needs `classes_file`'):
        make(root, classes_file=None)
    with pytest.raises(ValueError, match='`split` must be one of'):
        make(root, split='val')
    with pytest.raises(ValueError, match='.csv.*.npz'):
        make(root, ann_file='labels.json')
    with pytest.raises(TypeError, match='unlisted'):
        make(root, unlisted='negative')
    with pytest.raises(ValueError, match='differ'):
        make(root, metainfo=dict(classes=('a', 'b', 'c', 'd')))


def test_summary_lists_missing_images(root):
    summary = dataset_summary(make(root), progress=False)
    missing = osp.join(str(root), 'validation', f'{IMAGES[2]}.jpg')
    assert summary['num_missing_images'] == 1
    assert summary['missing_images'] == [missing]
    assert missing in format_summary(summary)


def test_registry_pipeline_and_lazy_init(root):
    cfg, dataset = build_image_dataset(
        dict(
            type='OpenImagesMultiLabel',
            data_root=str(root),
            split='validation',
            classes_file='annotations/classes.txt'))
    data_sample = dataset[0]['data_samples']
    assert data_sample.gt_label.tolist() == [1, 3]
    assert data_sample.gt_score.tolist() == [0, 1, 0, 1]

    lazy = DATASETS.build(dict(cfg, lazy_init=True))
    assert not lazy._fully_initialized
    assert len(lazy) == 3
    assert lazy.metainfo['classes'] == CLASSES


def test_average_precision_ignores_unknown_labels(root):
    dataset = make(root)
    targets = torch.tensor(
        np.stack([
            dataset.get_data_info(i)['gt_score'] for i in range(len(dataset))
        ]))

    def m_ap(scores):
        metric = AveragePrecision()
        metric.process(None, [
            dict(
                pred_score=torch.as_tensor(s, dtype=torch.float32), gt_score=t)
            for s, t in zip(scores, targets)
        ])
        return metric.compute_metrics(metric.results)['mAP']

    states = np.array(STATES)
    # Unknowns highest, then positives, then negatives: perfect on the
    # verified labels, so 100 only if the unknowns are ignored.
    assert m_ap(np.select([states == 0, states == 1], [1., .5], 0.)) == \
        pytest.approx(100)
    # Negatives above positives: the verified negatives count.
    assert m_ap(np.where(states == -1, 1., 0.)) < 100
    # A constant predictor (ties keep the row order, where the first known
    # label of classes 0 and 2 is a negative): 50, 100, 50, 100.
    assert m_ap(np.full(states.shape, .5)) == pytest.approx(75)


def test_partial_label_dataset_wraps_it(root):
    partial = PartialLabelDataset(
        dataset=dict(
            type='OpenImagesMultiLabel',
            data_root=str(root),
            split='train',
            classes_file='annotations/classes.txt'),
        mode='single_positive')
    assert len(partial) == 3
    states = np.array(STATES)
    for i in range(3):
        observed = partial.get_data_info(i)['gt_score']
        assert (observed == 1).sum() == 1
        assert states[i][observed == 1] == 1
