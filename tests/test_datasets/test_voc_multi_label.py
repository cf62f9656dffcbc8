"""VOCMultiLabel on small VOC2012-like and VOC2007-like folders."""
import os
import os.path as osp

import mmcv
import numpy as np
import pytest
import torch
from conftest import build_image_dataset
from mmengine.registry import DefaultScope
from mmpretrain.datasets import VOC
from mmpretrain.evaluation import (AveragePrecision, MultiLabelMetric,
                                   VOCAveragePrecision, VOCMultiLabelMetric)

from mmlml.datasets import PartialLabelDataset
from mmlml.datasets.benchmarks.voc_multi_label import VOCMultiLabel
from mmlml.datasets.custom_multi_label_dataset import CustomMultiLabelDataset
from mmlml.datasets.summary import dataset_summary, format_summary

# Cole et al.'s class dictionary (preproc/format_pascal.py).
COLE_CLASSES = ('aeroplane', 'bicycle', 'bird', 'boat', 'bottle', 'bus', 'car',
                'cat', 'chair', 'cow', 'diningtable', 'dog', 'horse',
                'motorbike', 'person', 'pottedplant', 'sheep', 'sofa', 'train',
                'tvmonitor')
IDX = {name: i for i, name in enumerate(COLE_CLASSES)}

# (name, difficult) of each object of each image. None: no <difficult> tag.
VOC2012 = {
    # person has a difficult and a non-difficult object: a positive.
    '2008_000008': [('horse', 0), ('person', 0), ('person', 1)],
    # Every object difficult: no positive unless difficult='positive'.
    '2008_000015': [('bottle', 1), ('bird', 1)],
    # bird is difficult-only.
    '2008_000019': [('dog', 0), ('bird', 1)],
    # The evaluation images: bird positive, difficult-only, absent.
    '2008_000002': [('bird', 0), ('tvmonitor', 0)],
    '2008_000003': [('bird', 1), ('cat', 0)],
    '2008_000007': [('cat', 0), ('car', None)],
}
TRAIN_2012 = ['2008_000008', '2008_000015', '2008_000019']
VAL_2012 = ['2008_000002', '2008_000003', '2008_000007']

VOC2007 = {
    '000005': [('chair', 0), ('chair', 1), ('diningtable', 1)],
    '000007': [('car', 0)],
    '000009': [('horse', 0), ('person', 0), ('person', 1)],
    '000001': [('dog', 0), ('person', 0)],
    '000002': [('train', 1)],
}
SETS_2007 = dict(
    trainval=['000005', '000007', '000009'], test=['000001', '000002'])


def _xml(img_id, objects, folder):
    lines = [
        '<annotation>', f'\t<folder>{folder}</folder>',
        f'\t<filename>{img_id}.jpg</filename>',
        '\t<size><width>8</width><height>8</height><depth>3</depth></size>',
        '\t<segmented>0</segmented>'
    ]
    for name, difficult in objects:
        lines += [
            '\t<object>', f'\t\t<name>{name}</name>',
            '\t\t<pose>Unspecified</pose>', '\t\t<truncated>0</truncated>'
        ]
        if difficult is not None:
            lines.append(f'\t\t<difficult>{difficult}</difficult>')
        lines.append('\t\t<bndbox><xmin>1</xmin><ymin>1</ymin><xmax>7</xmax>'
                     '<ymax>7</ymax></bndbox>')
        if name == 'person':  # VOC2012 person layout: named parts
            lines.append('\t\t<part><name>head</name></part>')
        lines.append('\t</object>')
    lines.append('</annotation>')
    return '\n'.join(lines) + '\n'


def _devkit_flag(objects, name):
    """The flag of a `<cls>_<split>.txt` line, as the VOC devkit writes it."""
    flags = [d for n, d in objects if n == name]
    if not flags:
        return -1
    return 1 if any(not d for d in flags) else 0


def write_voc(root, objects, image_sets, folder='VOC2012', images=True):
    """A VOC folder: Annotations/, ImageSets/Main/ (image sets and the
    per-class files) and JPEGImages/ (8x8 images)."""
    for sub in ('Annotations', 'ImageSets/Main', 'JPEGImages'):
        (root / sub).mkdir(parents=True, exist_ok=True)
    for img_id, objs in objects.items():
        (root / 'Annotations' / f'{img_id}.xml').write_text(
            _xml(img_id, objs, folder))
        if images:
            mmcv.imwrite(
                np.zeros((8, 8, 3), np.uint8),
                str(root / 'JPEGImages' / f'{img_id}.jpg'))
    for split, ids in image_sets.items():
        (root / 'ImageSets/Main' / f'{split}.txt').write_text(''.join(
            f'{i}\n' for i in ids))
        for name in COLE_CLASSES:  # right-aligned flags, as the official
            (root / 'ImageSets/Main' / f'{name}_{split}.txt').write_text(
                ''.join(f'{i} {_devkit_flag(objects[i], name):2d}\n'
                        for i in ids))
    return str(root)


@pytest.fixture
def voc2012(tmp_path):
    sets = dict(train=TRAIN_2012, val=VAL_2012)
    sets['trainval'] = sorted(TRAIN_2012 + VAL_2012)
    return write_voc(tmp_path / 'VOC2012', VOC2012, sets)


@pytest.fixture
def voc2007(tmp_path):
    return write_voc(tmp_path / 'VOC2007', VOC2007, SETS_2007, 'VOC2007')


def voc(**kwargs):
    """VOCMultiLabel without MMEngine's serialisation (faster to build)."""
    return VOCMultiLabel(serialize_data=False, **kwargs)


def _labels(dataset):
    return [dataset.get_data_info(i)['gt_label'] for i in range(len(dataset))]


def _cole_flags(root, split):
    """Cole et al.'s reading of `<cls>_<split>.txt`: the last token of a line
    split on single spaces."""
    rows = {}
    for c, name in enumerate(COLE_CLASSES):
        path = osp.join(root, 'ImageSets/Main', f'{name}_{split}.txt')
        with open(path) as f:
            for line in f:
                img_id, flag = line.rstrip('\n').split(' ')[0], int(
                    line.rstrip('\n').split(' ')[-1])
                rows.setdefault(img_id, np.zeros(20, np.int8))[c] = flag
    return rows


def test_classes_and_mro(voc2012):
    names = [c.__name__ for c in VOCMultiLabel.__mro__]
    assert names.index('CustomMultiLabelDataset') < names.index('VOC') < \
        names.index('MultiLabelDataset')
    dataset = voc(data_root=voc2012, split='train')
    assert isinstance(dataset, VOC)
    assert isinstance(dataset, CustomMultiLabelDataset)
    # MMPretrain's order, alphabetical, Cole et al.'s dictionary.
    assert tuple(dataset.metainfo['classes']) == COLE_CLASSES
    assert list(COLE_CLASSES) == sorted(COLE_CLASSES)
    assert tuple(VOC.METAINFO['classes']) == COLE_CLASSES
    # Row order: the image set file (sorted ids, sorted file names).
    assert [dataset.get_data_info(i)['image_id']
            for i in range(3)] == TRAIN_2012
    assert [
        osp.basename(dataset.get_data_info(i)['img_path']) for i in range(3)
    ] == sorted(f'{i}.jpg' for i in TRAIN_2012)
    assert dataset.get_data_info(0)['img_path'] == osp.join(
        voc2012, 'JPEGImages', '2008_000008.jpg')
    # The same labels as MMPretrain's VOC for the non-difficult objects.
    plain = VOC(data_root=voc2012, split='train')
    for i in range(3):
        assert sorted(plain.get_data_info(i)['gt_label']) == \
            dataset.get_data_info(i)['gt_label']


@pytest.mark.parametrize('difficult', ['negative', 'unknown', 'positive'])
def test_difficult_choices(voc2012, difficult):
    dataset = voc(data_root=voc2012, split='train', difficult=difficult)
    assert dataset.unlisted == ('unknown'
                                if difficult == 'unknown' else 'negative')
    assert dataset.partially_annotated == (difficult == 'unknown')
    pos = [[IDX['horse'], IDX['person']], [], [IDX['dog']]]
    hard = [[], [IDX['bird'], IDX['bottle']], [IDX['bird']]]
    for i in range(3):
        info = dataset.get_data_info(i)
        assert info['gt_label_difficult'] == []
        assert info['difficult_only'] == hard[i]
        expected = sorted(pos[i] + hard[i]) if difficult == 'positive' \
            else pos[i]
        assert info['gt_label'] == expected
        assert dataset.get_cat_ids(i) == expected
        states = dataset.get_label_states(i)
        assert states.dtype == np.int8
        target = np.full(20, -1, np.int8)
        target[pos[i]] = 1
        target[hard[i]] = dict(negative=-1, unknown=0, positive=1)[difficult]
        np.testing.assert_array_equal(states, target)
        if difficult == 'unknown':
            assert info['gt_label_negative'] == np.flatnonzero(
                target == -1).tolist()
            assert 'gt_score' not in info  # a training split
        else:
            assert 'gt_label_negative' not in info
    stats = dataset.annotation_statistics()
    num_hard = 3
    assert stats['num_images'] == 3 and stats['num_classes'] == 20
    assert stats['num_difficult_only'] == num_hard
    assert stats['num_positives'] == 3 + (
        num_hard if difficult == 'positive' else 0)
    assert stats['num_unknown'] == (num_hard if difficult == 'unknown' else 0)
    assert stats['num_negatives'] == 60 - 3 - (0 if difficult == 'negative'
                                               else num_hard)
    assert stats['num_images_without_positive'] == (0 if difficult
                                                    == 'positive' else 1)
    assert stats['num_images_dropped'] == 0
    assert stats['num_images_without_label'] == 0


def test_unknown_in_evaluation_split(voc2012):
    dataset = voc(data_root=voc2012, split='val', difficult='unknown')
    info = dataset.get_data_info(1)  # 2008_000003: bird difficult-only
    assert info['gt_score'].dtype == np.float32
    expected = np.zeros(20, np.float32)
    expected[IDX['cat']] = 1
    expected[IDX['bird']] = -1
    np.testing.assert_array_equal(info['gt_score'], expected)
    # The other choices are full annotations: no gt_score.
    for difficult in ('negative', 'positive'):
        full = voc(data_root=voc2012, split='val', difficult=difficult)
        assert 'gt_score' not in full.get_data_info(1)


def test_cole_flags(voc2012):
    """Flags read from `<cls>_train.txt` as Cole et al. do: 1 positive, 0
    difficult-only, -1 absent; their labels are flag 1, their rows the images
    with a flag 1."""
    for split, ids in (('train', TRAIN_2012), ('val', VAL_2012)):
        flags = _cole_flags(voc2012, split)
        dataset = voc(data_root=voc2012, split=split)
        assert list(flags) == ids
        for i, img_id in enumerate(ids):
            np.testing.assert_array_equal(
                dataset.get_voc_flags(i), flags[img_id])
            assert dataset.get_cat_ids(i) == np.flatnonzero(
                flags[img_id] == 1).tolist()
        cole_rows = [i for i in ids if (flags[i] == 1).any()]
        dropped = voc(
            data_root=voc2012, split=split, drop_images_without_positive=True)
        assert [
            dropped.get_data_info(i)['image_id'] for i in range(len(dropped))
        ] == cole_rows
    flags = _cole_flags(voc2012, 'train')['2008_000015']
    assert flags[IDX['bird']] == 0 and flags[IDX['bottle']] == 0
    assert (np.delete(flags, [IDX['bird'], IDX['bottle']]) == -1).all()
    # The flags do not depend on the choice.
    positive = voc(data_root=voc2012, split='train', difficult='positive')
    np.testing.assert_array_equal(positive.get_voc_flags(1), flags)


def test_images_without_positive(voc2012, monkeypatch):
    messages = []
    for module in ('custom_multi_label_dataset', 'benchmarks.voc_multi_label'):
        monkeypatch.setattr(f'mmlml.datasets.{module}.print_log',
                            lambda msg, **kwargs: messages.append(msg))
    kept = voc(data_root=voc2012, split='train')
    assert len(kept) == 3
    assert 'images without positive 1.' in messages[0]
    assert 'images without positive 1 (kept)' in messages[-1]
    assert 'difficult-only labels 3' in messages[-1]
    messages.clear()
    for difficult in ('negative', 'unknown'):
        dropped = voc(
            data_root=voc2012,
            split='train',
            difficult=difficult,
            drop_images_without_positive=True)
        assert [
            dropped.get_data_info(i)['image_id'] for i in range(len(dropped))
        ] == ['2008_000008', '2008_000019']
        stats = dropped.annotation_statistics()
        assert stats['num_images_dropped'] == 1
        assert stats['num_images_without_positive'] == 0
        assert stats['num_difficult_only'] == 1
    assert 'images without positive 1 (left out)' in messages[-1]
    # Under 'positive' a difficult-only class is a positive: nothing dropped.
    positive = voc(
        data_root=voc2012,
        split='train',
        difficult='positive',
        drop_images_without_positive=True)
    assert len(positive) == 3
    assert positive.annotation_statistics()['num_images_dropped'] == 0


def _eval_samples(dataset_cls, root, scores, **kwargs):
    pipeline = [
        dict(
            type='PackInputs',
            meta_keys=('sample_idx', 'img_path', 'gt_label_difficult'))
    ]
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        dataset = dataset_cls(
            data_root=root, split='val', pipeline=pipeline, **kwargs)
    samples = []
    for i in range(len(dataset)):
        sample = dataset[i]['data_samples']
        sample.set_pred_score(torch.tensor(scores[i]))
        samples.append(sample.to_dict())
    return samples


def _evaluate(metric, samples):
    metric.process(None, samples)
    return metric.evaluate(len(samples))


def _metrics():
    """The four metrics, the VOC ones with each `difficult_as_positive`."""
    yield 'ap', AveragePrecision(average=None)
    yield 'f1', MultiLabelMetric(average=None)
    for flag in (None, False, True):
        yield 'ap', VOCAveragePrecision(
            average=None, difficult_as_positive=flag)
        yield 'f1', VOCMultiLabelMetric(
            average=None, difficult_as_positive=flag)


@pytest.mark.parametrize('difficult', ['negative', 'unknown', 'positive'])
def test_metrics_agree_with_choice(voc2012, difficult):
    """Scores of bird: 0.7 (positive), 0.9 (difficult-only), 0.8 (absent)."""
    rng = np.random.RandomState(0)
    scores = rng.uniform(0.05, 0.45, (3, 20)).astype(np.float32)
    scores[:, IDX['bird']] = [0.7, 0.9, 0.8]
    samples = _eval_samples(voc, voc2012, scores, difficult=difficult)
    # Ranked by score: difficult-only, absent, positive.
    expected_ap = dict(negative=100 / 3, unknown=50., positive=250 / 3)
    expected_precision = dict(negative=100 / 3, unknown=50., positive=200 / 3)
    results = {}
    for kind, metric in _metrics():
        res = _evaluate(metric, samples)
        if kind == 'ap':
            ap = res['multi-label/AP_classwise']
            assert ap[IDX['bird']] == pytest.approx(expected_ap[difficult])
            results.setdefault(kind, ap)
            assert ap == pytest.approx(results[kind])
        else:
            precision = res['multi-label/precision_classwise']
            assert precision[IDX['bird']] == pytest.approx(
                expected_precision[difficult])
            assert res['multi-label/recall_classwise'][IDX['bird']] == 100
            results.setdefault(kind, precision)
            assert precision == pytest.approx(results[kind])


def test_unknown_reproduces_mmpretrain_voc_evaluation(voc2007):
    """difficult='unknown' with the plain metrics gives MMPretrain's VOC
    numbers (VOC metrics at their defaults, difficult-only ignored)."""
    rng = np.random.RandomState(1)
    scores = rng.rand(2, 20).astype(np.float32)
    pipeline = [
        dict(
            type='PackInputs', meta_keys=('sample_idx', 'gt_label_difficult'))
    ]
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        ours = voc(
            data_root=voc2007,
            split='test',
            test_mode=True,
            difficult='unknown',
            pipeline=pipeline)
        theirs = VOC(
            data_root=voc2007, split='test', test_mode=True, pipeline=pipeline)

    def samples(dataset):
        out = []
        for i in range(len(dataset)):
            sample = dataset[i]['data_samples']
            sample.set_pred_score(torch.tensor(scores[i]))
            out.append(sample.to_dict())
        return out

    mine = _evaluate(AveragePrecision(), samples(ours))
    reference = _evaluate(VOCAveragePrecision(), samples(theirs))
    assert mine['multi-label/mAP'] == pytest.approx(
        reference['multi-label/mAP'])
    mine = _evaluate(MultiLabelMetric(average='micro'), samples(ours))
    reference = _evaluate(
        VOCMultiLabelMetric(average='micro'), samples(theirs))
    assert mine == pytest.approx(reference)


def test_voc2007_layout(voc2007):
    dataset = voc(data_root=voc2007)  # split='trainval'
    assert dataset.split == 'trainval'
    assert _labels(dataset) == [[IDX['chair']], [IDX['car']],
                                [IDX['horse'], IDX['person']]]
    assert dataset.get_data_info(0)['difficult_only'] == [IDX['diningtable']]
    test = voc(data_root=voc2007, split='test', test_mode=True)
    assert _labels(test) == [[IDX['dog'], IDX['person']], []]
    np.testing.assert_array_equal(
        np.flatnonzero(test.get_voc_flags(1) == 0), [IDX['train']])
    assert test.annotation_statistics()['num_images_without_positive'] == 1


def test_missing_difficult_tag_is_not_difficult(voc2012):
    dataset = voc(data_root=voc2012, split='val')
    assert dataset.get_data_info(2)['gt_label'] == [IDX['car'], IDX['cat']]


def test_arguments(voc2012):
    with pytest.raises(ValueError, match=r"`split` must be one of .*'train'"):
        voc(data_root=voc2012, split='training')
    with pytest.raises(ValueError, match='`difficult` must be one of'):
        voc(data_root=voc2012, difficult='ignore')
    with pytest.raises(TypeError, match='sets `unlisted` itself'):
        voc(data_root=voc2012, unlisted='unknown')
    with pytest.raises(TypeError, match='must be a bool'):
        voc(data_root=voc2012, drop_images_without_positive='yes')
    with pytest.raises(ValueError, match='ann_path'):
        voc(data_root=voc2012,
            data_prefix=dict(img_path='JPEGImages', ann_path=None))
    # A string data_prefix is the image folder; annotations stay default.
    dataset = voc(data_root=voc2012, split='train', data_prefix='JPEGImages')
    assert len(dataset) == 3
    # image_set_path overrides the split's file; lazy_init defers loading.
    lazy = voc(
        data_root=voc2012,
        split='train',
        lazy_init=True,
        image_set_path='ImageSets/Main/val.txt')
    assert not lazy._fully_initialized
    lazy.full_init()
    assert len(lazy) == 3 and lazy.get_data_info(0)['image_id'] == VAL_2012[0]


def test_missing_and_malformed_files(voc2012):
    root = voc2012
    # A missing annotation names its path and the image set file.
    xml = osp.join(root, 'Annotations', '2008_000019.xml')
    content = open(xml).read()
    os.remove(xml)
    with pytest.raises(FileNotFoundError) as e:
        voc(data_root=root, split='train')
    assert xml in str(e.value) and 'train.txt' in str(e.value)
    # Malformed XML.
    with open(xml, 'w') as f:
        f.write(content.replace('</object>', '</obj>', 1))
    with pytest.raises(ValueError, match=r'2008_000019.xml.*not valid XML'):
        voc(data_root=root, split='train')
    # A bad difficult flag, an unknown class, an object without name.
    for old, new, match in [('<difficult>1<', '<difficult>2<',
                             r'<difficult>2</difficult>'),
                            ('<name>dog<', '<name>doggo<', "'doggo'"),
                            ('<name>dog</name>', '', 'no <name>')]:
        with open(xml, 'w') as f:
            f.write(content.replace(old, new))
        with pytest.raises(ValueError, match=match) as e:
            voc(data_root=root, split='train')
        assert xml in str(e.value)
    with open(xml, 'w') as f:
        f.write(content)
    # The image set file: missing, a per-class file, a repeated id.
    image_set = osp.join(root, 'ImageSets', 'Main', 'train.txt')
    with pytest.raises(FileNotFoundError, match='trainx.txt'):
        voc(data_root=root,
            split='train',
            image_set_path='ImageSets/Main/trainx.txt')
    with pytest.raises(ValueError, match=r"Line 1 .*'2008_000008 -1'"):
        voc(data_root=root,
            split='train',
            image_set_path='ImageSets/Main/aeroplane_train.txt')
    with open(image_set, 'a') as f:
        f.write('2008_000008\n')
    with pytest.raises(ValueError, match='lines 1 and 4') as e:
        voc(data_root=root, split='train')
    assert image_set in str(e.value)


def test_unsorted_image_set_warns(voc2012, monkeypatch):
    messages = []
    monkeypatch.setattr('mmlml.datasets.benchmarks.voc_multi_label.print_log',
                        lambda msg, **kwargs: messages.append(msg))
    path = osp.join(voc2012, 'ImageSets', 'Main', 'train.txt')
    with open(path, 'w') as f:
        f.write('2008_000019\n2008_000008\n')
    dataset = voc(data_root=voc2012, split='train')
    assert [dataset.get_data_info(i)['image_id']
            for i in range(2)] == ['2008_000019', '2008_000008']
    assert any('is not sorted' in m for m in messages)


def test_summary_reports_missing_images(voc2012):
    os_path = osp.join(voc2012, 'JPEGImages', '2008_000015.jpg')
    os.remove(os_path)
    dataset = voc(data_root=voc2012, split='train')
    summary = dataset_summary(dataset, progress=False)
    assert summary['num_missing_images'] == 1
    assert summary['missing_images'] == [os_path]
    text = format_summary(summary, 'VOC2012 train')
    assert os_path in text and 'images without positive: 1' in text


def test_config_pipeline_and_wrapper(voc2012):
    cfg, dataset = build_image_dataset(
        dict(type='VOCMultiLabel', data_root=voc2012, split='train'))
    assert dataset[0]['data_samples'].gt_label.tolist() == [
        IDX['horse'], IDX['person']
    ]
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        wrapped = PartialLabelDataset(dataset=cfg, mode='single_positive')
    assert len(wrapped) == 3
    observed = wrapped.observed_labels
    # One observed positive, none for the image whose objects are difficult.
    assert (observed == 1).sum(axis=1).tolist() == [1, 0, 1]
    assert observed[0, IDX['horse']] == 1 or observed[0, IDX['person']] == 1
    np.testing.assert_array_equal(wrapped.full_labels[1], np.zeros(20))


def test_wrapping_mmpretrains_voc_warns(voc2012, monkeypatch):
    messages = []
    monkeypatch.setattr('mmlml.datasets.partial.dataset.print_log',
                        lambda msg, **kwargs: messages.append(msg))
    PartialLabelDataset(
        dataset=VOC(data_root=voc2012, split='train'), mode='full')
    assert any("wraps MMPretrain's VOC" in m and 'VOCMultiLabel' in m
               for m in messages)
    messages.clear()
    PartialLabelDataset(
        dataset=voc(data_root=voc2012, split='train'), mode='full')
    assert not any("MMPretrain's VOC" in m for m in messages)
