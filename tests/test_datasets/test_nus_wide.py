"""NUSWide: the official, Cole et al. and ASL-style annotations on small
fixtures written in their formats."""
import os
import os.path as osp

import mmcv
import numpy as np
import pytest
from conftest import build_image_dataset

from mmlml.datasets import PartialLabelDataset
from mmlml.datasets.benchmarks.nus_wide import (NUS_WIDE_CONCEPTS, NUSWide,
                                                load_formatted_arrays)
from mmlml.datasets.summary import dataset_summary

C = len(NUS_WIDE_CONCEPTS)
IDX = {name: i for i, name in enumerate(NUS_WIDE_CONCEPTS)}

# (folder, file, positives) of the official lists, in list order.
TRAIN = [
    ('actor', '0001_2124494179.jpg', ['airport', 'sky']),
    ('actor', '0002_174174086.jpg', []),
    ('zoo', '0003_962025380.jpg', ['zebra']),
    ('beach', '0004_2112006526.jpg', ['person', 'sky', 'water']),
]
TEST = [
    ('sea', '0001_26311591.jpg', ['ocean']),
    ('sea', '0002_29130961.jpg', []),
    ('city', '0003_31478815.jpg', ['town', 'buildings']),
]


def _matrix(rows):
    labels = np.zeros((len(rows), C), dtype=np.uint8)
    for i, (_, _, names) in enumerate(rows):
        labels[i, [IDX[n] for n in names]] = 1
    return labels


def _write(path, text):
    os.makedirs(osp.dirname(path), exist_ok=True)
    with open(path, 'w', newline='') as f:
        f.write(text)


def _write_image(path):
    os.makedirs(osp.dirname(path), exist_ok=True)
    mmcv.imwrite(np.zeros((8, 8, 3), np.uint8), path)


@pytest.fixture
def root(tmp_path):
    """The official layout: Windows paths with CRLF line ends, 81 label files
    per split, Concepts81.txt, the images (the last training image
    missing)."""
    root = str(tmp_path / 'nuswide')
    for split, rows in (('Train', TRAIN), ('Test', TEST)):
        _write(
            osp.join(root, 'ImageList', f'{split}Imagelist.txt'),
            ''.join(f'C:\\ImageData\\Flickr\\{d}\\{f}\r\n'
                    for d, f, _ in rows))
        labels = _matrix(rows)
        for c, concept in enumerate(NUS_WIDE_CONCEPTS):
            _write(
                osp.join(root, 'Groundtruth', 'TrainTestLabels',
                         f'Labels_{concept}_{split}.txt'),
                ''.join(f'{v}\r\n' for v in labels[:, c]))
    _write(
        osp.join(root, 'Concepts81.txt'),
        ''.join(f'{c}\r\n' for c in NUS_WIDE_CONCEPTS))
    for d, f, _ in TRAIN[:-1] + TEST:
        _write_image(osp.join(root, 'Flickr', d, f))
    return root


def _label_file(root, concept, split='Train'):
    return osp.join(root, 'Groundtruth', 'TrainTestLabels',
                    f'Labels_{concept}_{split}.txt')


def _write_cole(root, rows, split, labels_dtype=np.float64):
    images = np.array([f'{d}/{f}' for d, f, _ in rows])
    np.save(osp.join(root, f'formatted_{split}_images.npy'), images)
    np.save(
        osp.join(root, f'formatted_{split}_labels.npy'),
        _matrix(rows).astype(labels_dtype))


@pytest.fixture
def cole_root(root):
    _write_cole(root, TRAIN, 'train')
    _write_cole(root, TEST, 'val')
    return root


CSV = ('filepath,label,split_name\n'
       '"images/0001_a_m.jpg","[\'airport\', \'sky\']",train\n'
       'images/0002_b_m.jpg,[],train\n'
       '"images/0003_c_m.jpg","[\'ocean\']",val\n'
       '"images/0004_d_m.jpg","[\'zebra\', \'water\']",train\n')


def test_classes():
    assert len(NUS_WIDE_CONCEPTS) == 81
    assert NUSWide.METAINFO['classes'] == NUS_WIDE_CONCEPTS
    assert NUS_WIDE_CONCEPTS[:3] == ('airport', 'animal', 'beach')
    assert NUS_WIDE_CONCEPTS[55] == 'sky'
    assert NUS_WIDE_CONCEPTS[-1] == 'zebra'
    assert list(NUS_WIDE_CONCEPTS) == sorted(NUS_WIDE_CONCEPTS)


@pytest.mark.parametrize('split,rows', [('train', TRAIN), ('test', TEST)])
def test_official(root, split, rows, monkeypatch):
    messages = []
    monkeypatch.setattr('mmlml.datasets.custom_multi_label_dataset.print_log',
                        lambda msg, **kwargs: messages.append(msg))
    dataset = NUSWide(data_root=root, split=split)
    assert dataset.metainfo['classes'] == NUS_WIDE_CONCEPTS
    assert len(dataset) == len(rows)
    expected = _matrix(rows)
    for i, (d, f, names) in enumerate(rows):
        info = dataset.get_data_info(i)
        assert info['img_path'] == osp.join(root, 'Flickr', d, f)
        assert 'gt_score' not in info
        assert dataset.get_cat_ids(i) == sorted(IDX[n] for n in names)
        np.testing.assert_array_equal(
            dataset.get_label_states(i),
            np.where(expected[i] == 1, 1, -1).astype(np.int8))
    stats = dataset.annotation_statistics()
    num_pos = int(expected.sum())
    assert stats['num_images'] == len(rows)
    assert stats['num_classes'] == 81
    assert stats['num_positives'] == num_pos
    assert stats['num_negatives'] == len(rows) * 81 - num_pos
    assert stats['num_unknown'] == 0
    assert stats['num_images_without_positive'] == 1
    assert stats['num_images_without_label'] == 0
    assert len(messages) == 1
    assert f'NUSWide [{split}]: {len(rows)} images' in messages[0]
    assert 'images without positive 1' in messages[0]


def test_relative_image_list_and_prefix(root):
    # Image lists as relative Windows paths, another image folder.
    _write(
        osp.join(root, 'ImageList', 'TestImagelist.txt'),
        ''.join(f'{d}\\{f}\n' for d, f, _ in TEST))
    dataset = NUSWide(data_root=root, split='test', data_prefix='imgs')
    assert dataset.get_data_info(2)['img_path'] == osp.join(
        root, 'imgs', 'city', '0003_31478815.jpg')


def test_label_file_errors(root):
    path = _label_file(root, 'cat')
    _write(path, '0\n0\n0\n')
    with pytest.raises(ValueError) as error:
        NUSWide(data_root=root)
    message = str(error.value)
    assert repr(path) in message and 'TrainImagelist.txt' in message
    assert '3 lines' in message and 'has 4' in message

    _write(path, '0\n0\n2\n0\n')
    with pytest.raises(
            ValueError,
            match=r"Line 3 of the label file .*"
            r"Labels_cat_Train.txt.* '2'"):
        NUSWide(data_root=root)

    _write(path, '0\n\n0\n0\n')
    with pytest.raises(ValueError, match='Line 2 of the label file'):
        NUSWide(data_root=root)

    os.remove(path)
    with pytest.raises(FileNotFoundError, match='Labels_cat_Train.txt'):
        NUSWide(data_root=root)


def test_image_list_errors(root):
    path = osp.join(root, 'ImageList', 'TrainImagelist.txt')
    _write(path, 'C:\\ImageData\\Flickr\\actor\\1.jpg\n2.jpg\n')
    with pytest.raises(
            ValueError,
            match=r"Line 2 of the image list .*"
            r"TrainImagelist.txt.*'2.jpg'"):
        NUSWide(data_root=root)
    os.remove(path)
    with pytest.raises(FileNotFoundError, match='TrainImagelist.txt'):
        NUSWide(data_root=root)


def test_concepts_file(root):
    path = osp.join(root, 'Concepts81.txt')
    names = list(NUS_WIDE_CONCEPTS)
    names[1], names[2] = names[2], names[1]
    _write(path, '\n'.join(names) + '\n')
    with pytest.raises(
            ValueError,
            match=r"Concepts81.txt.* line 2 is "
            r"'beach', expected 'animal'"):
        NUSWide(data_root=root)
    # ConceptsList/Concepts81.txt of ConceptsList.zip is checked as well.
    os.makedirs(osp.join(root, 'ConceptsList'))
    os.rename(path, osp.join(root, 'ConceptsList', 'Concepts81.txt'))
    with pytest.raises(ValueError, match='ConceptsList'):
        NUSWide(data_root=root)
    os.remove(osp.join(root, 'ConceptsList', 'Concepts81.txt'))
    assert len(NUSWide(data_root=root)) == 4  # none: nothing to check
    _write(path, '\n'.join(NUS_WIDE_CONCEPTS[:80]) + '\n')
    with pytest.raises(ValueError, match=r"\(80 lines\).* line 81"):
        NUSWide(data_root=root)
    with pytest.raises(FileNotFoundError, match='other.txt'):
        NUSWide(data_root=root, concepts_file='other.txt')


@pytest.mark.parametrize('split,rows', [('train', TRAIN), ('val', TEST)])
def test_cole(cole_root, split, rows):
    dataset = NUSWide(data_root=cole_root, ann_format='cole', split=split)
    assert len(dataset) == len(rows)
    expected = _matrix(rows)
    for i, (d, f, names) in enumerate(rows):
        assert dataset.get_data_info(i)['img_path'] == osp.join(
            cole_root, 'Flickr', d, f)
        assert dataset.get_cat_ids(i) == sorted(IDX[n] for n in names)
    stats = dataset.annotation_statistics()
    assert stats['num_positives'] == int(expected.sum())
    assert stats['num_images_without_positive'] == 1


def test_cole_errors(cole_root):
    images = osp.join(cole_root, 'formatted_train_images.npy')
    labels = osp.join(cole_root, 'formatted_train_labels.npy')
    good = np.load(labels)

    bad = good.copy()
    bad[2, 7] = 0.5
    np.save(labels, bad)
    with pytest.raises(
            ValueError,
            match=r'formatted_train_labels.npy.* '
            r'row 2, column 7 is 0.5'):
        NUSWide(data_root=cole_root, ann_format='cole')
    np.save(labels, good[:, :80])
    with pytest.raises(ValueError, match='has 80 columns'):
        NUSWide(data_root=cole_root, ann_format='cole')
    np.save(labels, good[:3])
    with pytest.raises(
            ValueError,
            match=r'3 rows but the images array '
            r'.*formatted_train_images.npy.* has 4'):
        NUSWide(data_root=cole_root, ann_format='cole')
    np.save(labels, good.astype(np.int64))  # any 0/1 dtype is read
    assert len(NUSWide(data_root=cole_root, ann_format='cole')) == 4

    # Object arrays are read only with allow_pickle.
    paths = np.load(images).tolist()
    np.save(images, np.array(paths, dtype=object), allow_pickle=True)
    with pytest.raises(ValueError, match='allow_pickle=True'):
        NUSWide(data_root=cole_root, ann_format='cole')
    dataset = NUSWide(
        data_root=cole_root, ann_format='cole', allow_pickle=True)
    assert dataset.get_data_info(0)['img_path'].endswith(paths[0])

    os.remove(images)
    with pytest.raises(FileNotFoundError, match='formatted_train_images.npy'):
        NUSWide(data_root=cole_root, ann_format='cole')


def test_load_formatted_arrays(tmp_path):
    images, labels = str(tmp_path / 'i.npy'), str(tmp_path / 'l.npy')
    np.save(images, np.array([b'a/1.jpg', b'b/2.jpg']))
    np.save(labels, np.array([[1, 0, 1], [0, 0, 0]], dtype=bool))
    paths, matrix = load_formatted_arrays(images, labels, num_classes=3)
    assert paths == ['a/1.jpg', 'b/2.jpg']
    assert matrix.dtype == np.uint8
    np.testing.assert_array_equal(matrix, [[1, 0, 1], [0, 0, 0]])
    np.save(images, np.array([['a/1.jpg'], ['b/2.jpg']]))
    with pytest.raises(ValueError, match='must be 1-D'):
        load_formatted_arrays(images, labels)
    np.save(images, np.arange(2))
    with pytest.raises(ValueError, match='must hold image paths'):
        load_formatted_arrays(images, labels)
    with open(images, 'w') as f:
        f.write('not an array')
    with pytest.raises(ValueError, match='i.npy.* is not a readable'):
        load_formatted_arrays(images, labels)


@pytest.mark.parametrize('split,expected', [
    ('train', [('images/0001_a_m.jpg', ['airport', 'sky']),
               ('images/0002_b_m.jpg', []),
               ('images/0004_d_m.jpg', ['water', 'zebra'])]),
    ('val', [('images/0003_c_m.jpg', ['ocean'])]),
])
def test_csv(tmp_path, split, expected):
    _write(str(tmp_path / 'nus_wid_data.csv'), CSV)
    dataset = NUSWide(data_root=str(tmp_path), ann_format='csv', split=split)
    assert len(dataset) == len(expected)
    for i, (path, names) in enumerate(expected):
        assert dataset.get_data_info(i)['img_path'] == str(tmp_path / path)
        assert dataset.get_cat_ids(i) == sorted(IDX[n] for n in names)


@pytest.mark.parametrize('line,match', [
    ('x.jpg,"[\'unicorn\']",train', r"Line 3 .* unknown concepts "
     r"\['unicorn'\]"),
    ('x.jpg,"[\'sky\'",train', r'Line 3 .* not a Python list'),
    ('x.jpg,sky,train', r'Line 3 .* not a Python list'),
    ('x.jpg,[],test', r"Line 3 .* split_name 'test'"),
    ('x.jpg', r'Line 3 .* must have the columns'),
])
def test_csv_errors(tmp_path, line, match):
    path = str(tmp_path / 'nus_wid_data.csv')
    _write(path,
           'filepath,label,split_name\nimages/a.jpg,[],train\n' + line + '\n')
    with pytest.raises(ValueError, match=match) as error:
        NUSWide(data_root=str(tmp_path), ann_format='csv')
    assert 'nus_wid_data.csv' in str(error.value)


def test_csv_header(tmp_path):
    _write(str(tmp_path / 'nus_wid_data.csv'), 'path,labels\na.jpg,[]\n')
    with pytest.raises(ValueError, match='must start with the header'):
        NUSWide(data_root=str(tmp_path), ann_format='csv')


def test_arguments(root):
    with pytest.raises(ValueError, match=r"\('train', 'test'\)"):
        NUSWide(data_root=root, split='val')
    with pytest.raises(ValueError, match=r"\('train', 'val'\).* test set"):
        NUSWide(data_root=root, ann_format='cole', split='test')
    with pytest.raises(ValueError, match='`ann_format` must be one of'):
        NUSWide(data_root=root, ann_format='asl')
    with pytest.raises(
            ValueError,
            match="`labels_file` is read only with "
            "ann_format='cole'"):
        NUSWide(data_root=root, labels_file='x.npy')
    with pytest.raises(ValueError, match='fully labelled'):
        NUSWide(data_root=root, unlisted='unknown')


def test_lazy_init(root):
    dataset = NUSWide(data_root=root, lazy_init=True)
    assert not dataset._fully_initialized
    assert dataset.metainfo['classes'] == NUS_WIDE_CONCEPTS
    assert len(dataset) == 4


def test_summary_reports_missing_images(root):
    summary = dataset_summary(NUSWide(data_root=root), progress=False)
    assert summary['num_missing_images'] == 1
    assert summary['missing_images'] == [
        osp.join(root, 'Flickr', 'beach', '0004_2112006526.jpg')
    ]


def test_build_and_pipeline(root):
    _, dataset = build_image_dataset(dict(type='NUSWide', data_root=root))
    sample = dataset[0]
    assert sample['data_samples'].gt_label.tolist() == [
        IDX['airport'], IDX['sky']
    ]


def test_partial_label_wrapper(cole_root):
    dataset = PartialLabelDataset(
        dataset=dict(type='NUSWide', data_root=cole_root, ann_format='cole'),
        mode='single_positive')
    assert len(dataset) == 4
    observed = dataset.observed_labels
    full = _matrix(TRAIN)
    # One observed positive per image, among its positives; none for the
    # image without positive.
    np.testing.assert_array_equal((observed == 1).sum(axis=1), [1, 0, 1, 1])
    assert (full[observed == 1] == 1).all()
