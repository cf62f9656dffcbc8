"""Tiny copies of the benchmark datasets, in their official layouts under
one ``data/`` folder, laid out as the configs under ``configs/`` expect
them: the config tests change into the folder that holds ``data/`` and
build the configs unchanged.

Every dataset has its real number of classes (the configs' heads and
label-count constants depend on it) but only a few 16x16 images, with
random labels drawn from a fixed seed.
"""
import json
import os.path as osp

import mmcv
import numpy as np
from mmengine.utils import mkdir_or_exist

from mmlml.datasets.benchmarks.nus_wide import NUS_WIDE_CONCEPTS

#: Images per split: enough for Cole et al.'s 80/20 split and a batch of 2.
NUM_TRAIN, NUM_TEST = 15, 6
VOC_CLASSES = ('aeroplane', 'bicycle', 'bird', 'boat', 'bottle', 'bus', 'car',
               'cat', 'chair', 'cow', 'diningtable', 'dog', 'horse',
               'motorbike', 'person', 'pottedplant', 'sheep', 'sofa', 'train',
               'tvmonitor')
#: COCO's category ids: 1 to 90 without the 10 unused ones.
COCO_IDS = [
    i for i in range(1, 91)
    if i not in (12, 26, 29, 30, 45, 66, 68, 69, 71, 83)
]
NUM_CUB_ATTRIBUTES = 312
NUM_OPENIMAGES_CLASSES = 567


def _image(path, rng):
    mkdir_or_exist(osp.dirname(path))
    mmcv.imwrite(rng.integers(0, 256, (16, 16, 3), dtype=np.uint8), str(path))


def _positives(rng, num_classes, num_images, low=1, high=4):
    """Random sorted class indices per image, at least ``low`` each."""
    return [
        sorted(
            rng.choice(
                num_classes, rng.integers(low, high + 1), replace=False))
        for _ in range(num_images)
    ]


def _write_voc(root, rng):
    root = osp.join(root, 'VOCdevkit', 'VOC2012')
    sets = dict(
        train=[f'2008_{i:06d}' for i in range(NUM_TRAIN)],
        val=[f'2009_{i:06d}' for i in range(NUM_TEST)])
    for split, ids in sets.items():
        mkdir_or_exist(osp.join(root, 'ImageSets', 'Main'))
        with open(osp.join(root, 'ImageSets', 'Main', f'{split}.txt'),
                  'w') as f:
            f.write(''.join(f'{i}\n' for i in ids))
        for img_id, labels in zip(ids, _positives(rng, 20, len(ids))):
            objects = ''.join(
                f'<object><name>{VOC_CLASSES[c]}</name>'
                '<difficult>0</difficult><bndbox><xmin>1</xmin><ymin>1'
                '</ymin><xmax>9</xmax><ymax>9</ymax></bndbox></object>'
                for c in labels)
            mkdir_or_exist(osp.join(root, 'Annotations'))
            with open(osp.join(root, 'Annotations', f'{img_id}.xml'),
                      'w') as f:
                f.write(f'<annotation><filename>{img_id}.jpg</filename>'
                        f'{objects}</annotation>\n')
            _image(osp.join(root, 'JPEGImages', f'{img_id}.jpg'), rng)


def _write_coco(root, rng):
    root = osp.join(root, 'coco')
    categories = [
        dict(supercategory='thing', id=cat_id, name=f'category {cat_id}')
        for cat_id in COCO_IDS
    ]
    first_id = dict(train=1, val=100001)
    train_rows = None
    for split, num in (('train', NUM_TRAIN), ('val', NUM_TEST)):
        ids = list(range(first_id[split], first_id[split] + num))
        names = [f'COCO_{split}2014_{i:012d}.jpg' for i in ids]
        labels = _positives(rng, 80, num)
        annotations = [
            dict(
                id=len(ids) * k + j,
                image_id=image_id,
                category_id=COCO_IDS[c],
                iscrowd=0,
                area=4.,
                bbox=[1., 1., 2., 2.])
            for k, (image_id, row) in enumerate(zip(ids, labels))
            for j, c in enumerate(row)
        ]
        images = [
            dict(id=i, file_name=n, height=16, width=16)
            for i, n in zip(ids, names)
        ]
        mkdir_or_exist(osp.join(root, 'annotations'))
        with open(
                osp.join(root, 'annotations', f'instances_{split}2014.json'),
                'w') as f:
            json.dump(
                dict(
                    images=images,
                    annotations=annotations,
                    categories=categories), f)
        for name in names:
            _image(osp.join(root, f'{split}2014', name), rng)
        if split == 'train':
            # Rows in Cole et al.'s order: image ids sorted as strings.
            train_rows = sorted(
                zip(ids, names, labels), key=lambda row: str(row[0]))
    # Zhang et al.'s files of observed labels, one line per training image:
    # "<file name>,<class indices>".
    for left, keep in (('full', None), ('0.75left', 0.5), ('0.4left', 0.2),
                       ('singlelabel', 0.)):
        with open(osp.join(root, f'coco_train_{left}.txt'), 'w') as f:
            for _, name, labels in train_rows:
                if keep is not None:
                    labels = sorted(labels[:int(len(labels) * keep) + 1])
                f.write(f'{name},{" ".join(map(str, labels))}\n')


def _write_nus_wide(root, rng):
    root = osp.join(root, 'nuswide')
    mkdir_or_exist(root)
    # Cole et al.'s formatted arrays (some rows without a positive, as in
    # theirs), images under Flickr/.
    for split, num in (('train', NUM_TRAIN), ('val', NUM_TEST)):
        paths = [f'{split}_concept/{split}_{i:04d}.jpg' for i in range(num)]
        labels = np.zeros((num, 81))
        for i, row in enumerate(_positives(rng, 81, num, low=0)):
            labels[i, row] = 1
        np.save(
            osp.join(root, f'formatted_{split}_images.npy'), np.array(paths))
        np.save(osp.join(root, f'formatted_{split}_labels.npy'), labels)
        for path in paths:
            _image(osp.join(root, 'Flickr', path), rng)
    # The ASL / Zhang et al. re-crawl: nus_wid_data.csv, images/.
    lines = ['filepath,label,split_name']
    for split, num in (('train', NUM_TRAIN), ('val', NUM_TEST)):
        for i, row in enumerate(_positives(rng, 81, num)):
            path = f'images/{split}_{i:04d}.jpg'
            names = [NUS_WIDE_CONCEPTS[c] for c in row]
            lines.append(f'{path},"{names}",{split}')
            _image(osp.join(root, path), rng)
    with open(osp.join(root, 'nus_wid_data.csv'), 'w') as f:
        f.write('\n'.join(lines) + '\n')


def _write_cub(root, rng):
    top = osp.join(root, 'cub')
    root = osp.join(top, 'CUB_200_2011')
    mkdir_or_exist(osp.join(root, 'attributes'))
    with open(osp.join(top, 'attributes.txt'), 'w') as f:
        f.write(''.join(f'{a + 1} has_part::value_{a}\n'
                        for a in range(NUM_CUB_ATTRIBUTES)))
    num = NUM_TRAIN + NUM_TEST
    paths = [f'001.Bird/Bird_{i:04d}.jpg' for i in range(num)]
    with open(osp.join(root, 'images.txt'), 'w') as f:
        f.write(''.join(f'{i + 1} {p}\n' for i, p in enumerate(paths)))
    is_train = [1] * NUM_TRAIN + [0] * NUM_TEST
    with open(osp.join(root, 'train_test_split.txt'), 'w') as f:
        f.write(''.join(f'{i + 1} {t}\n' for i, t in enumerate(is_train)))
    present = rng.random((num, NUM_CUB_ATTRIBUTES)) < 0.1
    present[:, 0] = True
    with open(osp.join(root, 'attributes', 'image_attribute_labels.txt'),
              'w') as f:
        f.write(''.join(f'{i + 1} {a + 1} {int(present[i, a])} 3 1.5\n'
                        for i in range(num)
                        for a in range(NUM_CUB_ATTRIBUTES)))
    for path in paths:
        _image(osp.join(root, 'images', path), rng)


def _write_openimages(root, rng):
    images = osp.join(root, 'openimages')
    root = osp.join(images, 'annotations')
    mkdir_or_exist(root)
    mids = [f'/m/{c:05x}' for c in range(NUM_OPENIMAGES_CLASSES)]
    with open(osp.join(root, 'classes_567.txt'), 'w') as f:
        f.write('\n'.join(mids) + '\n')
    with open(osp.join(root, 'oidv6-class-descriptions.csv'), 'w') as f:
        f.write('LabelName,DisplayName\n')
        f.write(''.join(f'{m},Class {i}\n' for i, m in enumerate(mids)))
    files = dict(
        train='oidv6-train-annotations-human-imagelabels.csv',
        validation='validation-annotations-human-imagelabels.csv',
        test='test-annotations-human-imagelabels.csv')
    for split, name in files.items():
        num = NUM_TRAIN if split == 'train' else NUM_TEST
        lines = ['ImageID,Source,LabelName,Confidence']
        for i in range(num):
            image_id = f'{split[0]}{i:015x}'
            verified = rng.choice(NUM_OPENIMAGES_CLASSES, 6, replace=False)
            for k, c in enumerate(verified):
                lines.append(f'{image_id},verification,{mids[c]},'
                             f'{int(k < 2)}')
            _image(osp.join(images, split, f'{image_id}.jpg'), rng)
        with open(osp.join(root, name), 'w') as f:
            f.write('\n'.join(lines) + '\n')


def write_benchmark_data(root, seed=0):
    """Write ``root/data/`` with VOC2012, COCO 2014, NUS-WIDE (Cole et
    al.'s arrays and the ASL re-crawl's CSV), CUB-200-2011 and OpenImages
    V6 in their official layouts. Returns ``root``."""
    rng = np.random.default_rng(seed)
    data = osp.join(str(root), 'data')
    for write in (_write_voc, _write_coco, _write_nus_wide, _write_cub,
                  _write_openimages):
        write(data, rng)
    return str(root)
