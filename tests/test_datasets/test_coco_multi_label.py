"""CocoMultiLabel on a tiny instance annotation file in the official
structure."""
import json
import os
import os.path as osp

import mmcv
import numpy as np
import pytest
from conftest import build_image_dataset
from mmengine.registry import DefaultScope

from mmlml.datasets import PartialLabelDataset
from mmlml.datasets.benchmarks.coco_multi_label import CocoMultiLabel
from mmlml.datasets.summary import dataset_summary, format_summary

# Ids with gaps like the official 1..90 (12 and 26 are unused there too).
CATEGORIES = [
    dict(supercategory='person', id=1, name='person'),
    dict(supercategory='vehicle', id=3, name='car'),
    dict(supercategory='outdoor', id=13, name='stop sign'),
    dict(supercategory='accessory', id=27, name='backpack'),
    dict(supercategory='indoor', id=90, name='toothbrush'),
]
CLASSES = ('person', 'car', 'stop sign', 'backpack', 'toothbrush')
# Numeric order 9 < 10 < 25 < 100 < 200; string order '10' < '100' < '200'
# < '25' < '9'. Image 42 has no annotation.
IMAGE_IDS = [9, 10, 100, 25, 42, 200]
ANNOTATIONS = [
    # (image_id, category_id, iscrowd)
    (9, 13, 0),
    (9, 13, 0),  # a second object of the same class
    (10, 3, 0),
    (100, 1, 1),  # a crowd annotation: counts
    (25, 1, 0),
    (25, 90, 0),
    (25, 3, 0),
    (200, 27, 0),
]
# Rows in the order of str(image_id), with their labels.
ROWS = [(10, [1]), (100, [0]), (200, [3]), (25, [0, 1, 4]), (9, [2])]


def _file_name(split, image_id):
    return f'COCO_{split}2014_{image_id:012d}.jpg'


def coco_json(split='train', image_ids=IMAGE_IDS, annotations=ANNOTATIONS):
    return dict(
        info=dict(description='COCO 2014 Dataset', year=2014),
        licenses=[],
        images=[
            dict(
                license=1,
                file_name=_file_name(split, i),
                height=8,
                width=8,
                id=i) for i in image_ids
        ],
        annotations=[
            dict(
                segmentation=[[1., 1., 6., 1., 6., 6.]],
                area=12.5,
                iscrowd=crowd,
                image_id=image_id,
                bbox=[1., 1., 5., 5.],
                category_id=cat_id,
                id=1000 + k)
            for k, (image_id, cat_id, crowd) in enumerate(annotations)
        ],
        categories=CATEGORIES)


def write_coco(root, split='train', images=True, **kwargs):
    ann_dir = root / 'annotations'
    ann_dir.mkdir(parents=True, exist_ok=True)
    path = ann_dir / f'instances_{split}2014.json'
    path.write_text(json.dumps(coco_json(split, **kwargs)))
    if images:
        (root / f'{split}2014').mkdir(exist_ok=True)
        for image_id in kwargs.get('image_ids', IMAGE_IDS):
            mmcv.imwrite(
                np.zeros((8, 8, 3), np.uint8),
                str(root / f'{split}2014' / _file_name(split, image_id)))
    return str(path)


@pytest.fixture
def coco(tmp_path):
    root = tmp_path / 'coco'
    write_coco(root, 'train')
    write_coco(root, 'val', image_ids=[9, 10], annotations=[(10, 1, 0)])
    return str(root)


def build(**kwargs):
    """CocoMultiLabel without MMEngine's serialisation (faster to build)."""
    return CocoMultiLabel(serialize_data=False, **kwargs)


def test_classes_rows_and_labels(coco):
    dataset = build(data_root=coco)  # split='train'
    assert dataset.split == 'train'
    assert dataset.metainfo['classes'] == CLASSES
    assert len(dataset) == len(ROWS)
    for i, (image_id, labels) in enumerate(ROWS):
        info = dataset.get_data_info(i)
        assert info['image_id'] == image_id
        assert info['img_path'] == osp.join(coco, 'train2014',
                                            _file_name('train', image_id))
        assert info['gt_label'] == labels
        assert dataset.get_cat_ids(i) == labels
        states = dataset.get_label_states(i)
        expected = np.full(len(CLASSES), -1, np.int8)
        expected[labels] = 1
        np.testing.assert_array_equal(states, expected)
        assert 'gt_label_negative' not in info and 'gt_score' not in info
    # Lexicographic, not numeric: Cole et al.'s order.
    ids = [dataset.get_data_info(i)['image_id'] for i in range(len(dataset))]
    assert ids == sorted(ids, key=str) != sorted(ids)
    assert dataset.unlisted == 'negative'
    stats = dataset.annotation_statistics()
    assert stats == dict(
        num_images=5,
        num_classes=5,
        num_positives=7,
        num_negatives=18,
        num_unknown=0,
        positives_per_image=7 / 5,
        num_images_without_positive=0,
        num_images_without_label=0,
        num_images_dropped=1)


def test_val_split(coco):
    dataset = build(data_root=coco, split='val', test_mode=True)
    assert len(dataset) == 1
    info = dataset.get_data_info(0)
    assert info['img_path'] == osp.join(coco, 'val2014', _file_name('val', 10))
    assert info['gt_label'] == [0]
    assert 'gt_score' not in info  # fully labelled: MMPretrain's gt_label
    assert dataset.annotation_statistics()['num_images_dropped'] == 1


def test_options(coco, tmp_path):
    # ann_file and data_prefix override the defaults.
    dataset = build(
        data_root=coco,
        split='val',
        ann_file='annotations/instances_train2014.json',
        data_prefix='train2014')
    assert len(dataset) == 5
    assert dataset.get_data_info(0)['img_path'] == osp.join(
        coco, 'train2014', _file_name('train', 10))
    dataset = build(
        ann_file=osp.join(coco, 'annotations', 'instances_train2014.json'),
        data_prefix=dict(img_path=osp.join(coco, 'images')))
    assert dataset.get_data_info(0)['img_path'] == osp.join(
        coco, 'images', _file_name('train', 10))
    # lazy_init: the classes come with the annotation.
    lazy = build(data_root=coco, lazy_init=True)
    assert not lazy._fully_initialized
    lazy.full_init()
    assert lazy.metainfo['classes'] == CLASSES and len(lazy) == 5
    # metainfo classes must be the file's.
    assert build(data_root=coco, metainfo=dict(classes=CLASSES))
    with pytest.raises(ValueError, match='differ from the 5 categories'):
        build(data_root=coco, metainfo=dict(classes=CLASSES[::-1]))
    with pytest.raises(ValueError, match=r"`split` must be one of \('train'"):
        build(data_root=coco, split='test')
    with pytest.raises(TypeError, match='sets `unlisted` itself'):
        build(data_root=coco, unlisted='unknown')


def test_each_file_uses_its_own_category_order(tmp_path):
    root = tmp_path / 'coco'
    path = write_coco(root, images=False)
    content = json.loads(open(path).read())
    content['categories'] = content['categories'][::-1]
    open(path, 'w').write(json.dumps(content))
    dataset = build(data_root=str(root))
    assert dataset.metainfo['classes'] == CLASSES[::-1]
    assert dataset.get_data_info(0)['gt_label'] == [3]  # car


def _write(path, content):
    with open(path, 'w') as f:
        f.write(content if isinstance(content, str) else json.dumps(content))


def test_missing_and_malformed_files(coco):
    path = osp.join(coco, 'annotations', 'instances_train2014.json')
    good = coco_json('train')
    os.remove(path)
    with pytest.raises(FileNotFoundError) as e:
        build(data_root=coco)
    assert path in str(e.value)

    _write(path, '{"images": [],\n "annotations": [}')
    with pytest.raises(ValueError, match='line 2, column') as e:
        build(data_root=coco)
    assert path in str(e.value)

    cases = [
        (dict(
            good,
            annotations=good['annotations'] +
            [dict(id=77, image_id=5, category_id=1)]),
         r'annotation 77 .* image_id 5, which is not an id of `images`'),
        (dict(
            good,
            annotations=good['annotations'] +
            [dict(id=78, image_id=9, category_id=12)]),
         r'annotation 78 .* category_id 12, which is not an id of '
         '`categories`'),
        (dict(good, categories=good['categories'] + [dict(name='x')]),
         r'Entry 5 of `categories` .* needs an integer `id`'),
        (dict(good, categories=good['categories'] + [dict(id=1, name='x')]),
         'category id 1 appears twice'),
        (dict(good, images=good['images'] + [dict(id=9, file_name='a.jpg')]),
         'image id 9 appears twice'),
        (dict(
            good,
            images=good['images'] +
            [dict(id=99, file_name=good['images'][0]['file_name'])]),
         r"image file_name '.*' is listed twice in `images` .* under the "
         'ids 9 and 99'),
        (dict(
            good,
            categories=good['categories'] +
            [dict(id=50, name=good['categories'][0]['name'])]),
         r'category name .* is listed twice in `categories` .* under the '
         r'ids \d+ and 50'),
        (dict(good, images=good['images'] + [dict(id=8)]),
         r'Entry 6 of `images` .* `file_name`'),
        ({
            k: v
            for k, v in good.items() if k != 'categories'
        }, 'has no `categories` list'),
        ([], 'must hold a JSON object'),
    ]
    for content, match in cases:
        _write(path, content)
        with pytest.raises(ValueError, match=match) as e:
            build(data_root=coco)
        assert path in str(e.value)


def test_summary_reports_missing_images(coco):
    missing = osp.join(coco, 'train2014', _file_name('train', 25))
    os.remove(missing)
    dataset = build(data_root=coco)
    summary = dataset_summary(dataset, progress=False)
    assert summary['num_missing_images'] == 1
    assert summary['missing_images'] == [missing]
    text = format_summary(summary, 'COCO train')
    assert missing in text and 'COCO train: 5 images, 5 classes' in text


def test_config_pipeline_and_wrapper(coco):
    cfg, dataset = build_image_dataset(
        dict(type='CocoMultiLabel', data_root=coco, split='train'))
    assert dataset[3]['data_samples'].gt_label.tolist() == [0, 1, 4]
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        wrapped = PartialLabelDataset(dataset=cfg, mode='single_positive')
    assert len(wrapped) == 5
    full = np.zeros((5, 5), np.uint8)
    for i, (_, labels) in enumerate(ROWS):
        full[i, labels] = 1
    np.testing.assert_array_equal(wrapped.full_labels, full)
    observed = wrapped.observed_labels
    assert ((observed == 1).sum(axis=1) == 1).all()
    assert (full[observed == 1] == 1).all()
