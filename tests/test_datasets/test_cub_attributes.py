"""CUBAttributes: the 312 attributes of CUB-200-2011 on a small fixture in
the official format."""
import os
import os.path as osp

import mmcv
import numpy as np
import pytest
from conftest import build_image_dataset

from mmlml.datasets import PartialLabelDataset
from mmlml.datasets.benchmarks.cub_attributes import CUBAttributes
from mmlml.datasets.summary import dataset_summary

A = 312
# (image id, path, is_train) in images.txt order: ids not sorted, to check
# that rows follow the file and labels are keyed by id.
IMAGES = [
    (1, '001.Black_footed_Albatross/Black_Footed_Albatross_0046_18.jpg', 1),
    (2, '001.Black_footed_Albatross/Black_Footed_Albatross_0009_34.jpg', 0),
    (5, '002.Laysan_Albatross/Laysan_Albatross_0002_1027.jpg', 1),
    (3, '002.Laysan_Albatross/Laysan_Albatross_0003_1033.jpg', 1),
    (4, '200.Common_Yellowthroat/Common_Yellowthroat_0055_190967.jpg', 0),
]
TRAIN = [0, 2, 3]  # positions in IMAGES
TEST = [1, 4]
NAMES = [f'has_part_{k // 15}::value_{k % 15}_(x)' for k in range(A)]


def _matrices():
    rng = np.random.RandomState(3)
    present = (rng.rand(len(IMAGES), A) < 0.1).astype(np.uint8)
    present[3] = 0  # an image without any attribute
    certainty = rng.randint(1, 5, size=(len(IMAGES), A))
    return present, certainty


def _write(path, text):
    os.makedirs(osp.dirname(path), exist_ok=True)
    with open(path, 'w') as f:
        f.write(text)


def _label_lines():
    present, certainty = _matrices()
    lines = []
    for i, (image_id, _, _) in enumerate(IMAGES):
        for a in range(A):
            lines.append(f'{image_id} {a + 1} {present[i, a]} '
                         f'{certainty[i, a]} {(i * A + a) % 97 * 0.731:.3f}')
    # One line with extra tokens, as in parts of the release.
    lines[7] += ' 0 12.5'
    order = np.random.RandomState(0).permutation(len(lines))
    return [lines[k] for k in order]


def _write_labels(root, lines):
    _write(
        osp.join(root, 'attributes', 'image_attribute_labels.txt'),
        '\n'.join(lines) + '\n')


@pytest.fixture
def root(tmp_path):
    """``tmp_path/cub``: attributes.txt (shuffled ids) next to
    CUB_200_2011/, which is ``data_root``; the images of all but the last
    training image."""
    root = str(tmp_path / 'cub' / 'CUB_200_2011')
    _write(
        osp.join(root, 'images.txt'),
        ''.join(f'{i} {p}\n' for i, p, _ in IMAGES))
    _write(
        osp.join(root, 'train_test_split.txt'),
        ''.join(f'{i} {t}\n' for i, _, t in IMAGES[::-1]))
    ids = np.random.RandomState(1).permutation(A) + 1
    _write(
        str(tmp_path / 'cub' / 'attributes.txt'),
        ''.join(f'{k} {NAMES[k - 1]}\n' for k in ids))
    _write_labels(root, _label_lines())
    for k in TRAIN[:-1] + TEST:
        path = osp.join(root, 'images', IMAGES[k][1])
        os.makedirs(osp.dirname(path), exist_ok=True)
        mmcv.imwrite(np.zeros((8, 8, 3), np.uint8), path)
    return root


def _labels_file(root):
    return osp.join(root, 'attributes', 'image_attribute_labels.txt')


@pytest.mark.parametrize('split,positions', [('train', TRAIN), ('test', TEST)])
def test_split(root, split, positions, monkeypatch):
    messages = []
    monkeypatch.setattr('mmlml.datasets.custom_multi_label_dataset.print_log',
                        lambda msg, **kwargs: messages.append(msg))
    dataset = CUBAttributes(data_root=root, split=split)
    assert dataset.metainfo['classes'] == tuple(NAMES)
    assert len(dataset) == len(positions)
    present, _ = _matrices()
    for row, k in enumerate(positions):
        info = dataset.get_data_info(row)
        assert info['img_path'] == osp.join(root, 'images', IMAGES[k][1])
        assert 'gt_label_negative' not in info and 'gt_score' not in info
        assert dataset.get_cat_ids(row) == np.flatnonzero(present[k]).tolist()
        np.testing.assert_array_equal(
            dataset.get_label_states(row),
            np.where(present[k] == 1, 1, -1).astype(np.int8))
    stats = dataset.annotation_statistics()
    num_pos = int(present[positions].sum())
    assert stats['num_images'] == len(positions)
    assert stats['num_classes'] == A
    assert stats['num_positives'] == num_pos
    assert stats['num_negatives'] == len(positions) * A - num_pos
    assert stats['num_unknown'] == 0
    assert stats['num_images_without_positive'] == (split == 'train')
    assert len(messages) == 1
    assert f'CUBAttributes [{split}]: {len(positions)} images' in messages[0]


def test_attributes_file_locations(root):
    outside = osp.join(osp.dirname(root), 'attributes.txt')
    inside = osp.join(root, 'attributes.txt')
    os.rename(outside, inside)
    dataset = CUBAttributes(data_root=root, lazy_init=True)
    assert dataset.attributes_file == inside
    assert dataset.metainfo['classes'] == tuple(NAMES)
    os.remove(inside)
    with pytest.raises(FileNotFoundError) as error:
        CUBAttributes(data_root=root)
    for path in (inside, osp.join(root, 'attributes',
                                  'attributes.txt'), outside):
        assert repr(path) in str(error.value)
    with pytest.raises(FileNotFoundError, match='names.txt'):
        CUBAttributes(data_root=root, attributes_file='names.txt')


def test_attributes_file_errors(root):
    path = osp.join(osp.dirname(root), 'attributes.txt')
    _write(path, ''.join(f'{k + 1} {NAMES[k]}\n' for k in range(200)))
    with pytest.raises(
            ValueError,
            match=r'attributes.txt.* must list the '
            r'312 attributes .* lists 200'):
        CUBAttributes(data_root=root)
    _write(path, '1 has_a\n1 has_b\n')
    with pytest.raises(ValueError, match='Line 2 of .*repeats the attribute'):
        CUBAttributes(data_root=root)
    _write(path, '1 has_a\nx has_b\n')
    with pytest.raises(ValueError, match="Line 2 of .*'x has_b'"):
        CUBAttributes(data_root=root)


def _replace_line(lines, prefix, new):
    """Replace the line that starts with ``prefix``; return its index."""
    k = next(i for i, line in enumerate(lines) if line.startswith(prefix))
    lines[k] = new
    return k


def test_labels_file_errors(root):
    path = _labels_file(root)
    lines = _label_lines()

    # (3, 17) replaced by a second (3, 18): the later of the two is named.
    bad = list(lines)
    k = _replace_line(bad, '3 17 ', '3 18 0 3 1.0')
    k = max(
        k, next(i for i, line in enumerate(lines) if line.startswith('3 18 ')))
    _write_labels(root, bad)
    with pytest.raises(ValueError) as error:
        CUBAttributes(data_root=root)
    assert str(error.value).startswith(
        f'Line {k + 1} of the attribute labels {path!r} repeats the pair '
        '(image_id, attribute_id) = (3, 18)')

    _write_labels(root,
                  [line for line in lines if not line.startswith('5 312 ')])
    with pytest.raises(
            ValueError,
            match=r'have no line for 1 .* '
            r'\(image_id, attribute_id\) = \(5, 312\)'):
        CUBAttributes(data_root=root)

    bad = list(lines)
    k = _replace_line(bad, '2 40 ', '2 40 2 3 1.0')
    _write_labels(root, bad)
    with pytest.raises(
            ValueError,
            match=rf"Line {k + 1} of .* has "
            r"is_present 2.*'2 40 2 3 1.0'"):
        CUBAttributes(data_root=root)

    bad = list(lines)
    k = _replace_line(bad, '4 9 ', '4 9 1')
    _write_labels(root, bad)
    with pytest.raises(
            ValueError,
            match=rf"Line {k + 1} of the attribute "
            r"labels .* but is '4 9 1'"):
        CUBAttributes(data_root=root)

    _write_labels(root, lines + ['7 1 0 3 1.0'])
    with pytest.raises(
            ValueError,
            match=rf'Line {len(lines) + 1} .* '
            r'image id 7, which is not in the image list'):
        CUBAttributes(data_root=root)

    _write_labels(root, lines + ['1 313 0 3 1.0'])
    with pytest.raises(ValueError, match='attribute id 313, which is not'):
        CUBAttributes(data_root=root)

    os.remove(path)
    with pytest.raises(FileNotFoundError, match='image_attribute_labels.txt'):
        CUBAttributes(data_root=root)


def test_duplicate_pair_names_line(root):
    lines = _label_lines()
    k = next(i for i, line in enumerate(lines) if line.startswith('3 18 '))
    _write_labels(root, lines + [lines[k]])
    with pytest.raises(
            ValueError,
            match=rf'Line {len(lines) + 1} of .* '
            r'repeats the pair \(image_id, attribute_id\) = '
            r'\(3, 18\)'):
        CUBAttributes(data_root=root)


def test_image_and_split_file_errors(root):
    split_file = osp.join(root, 'train_test_split.txt')
    _write(split_file, '1 1\n2 0\n5 1\n3 1\n')
    with pytest.raises(
            ValueError,
            match=r'train_test_split.txt.* no line '
            r'for 1 images.* image id 4'):
        CUBAttributes(data_root=root)
    _write(split_file, '1 1\n2 0\n5 1\n3 1\n4 2\n')
    with pytest.raises(ValueError, match='Line 5 .*is_train must be 0 or 1'):
        CUBAttributes(data_root=root)
    _write(split_file, '1 1\n2 0\n5 1\n3 1\n4 0\n9 0\n')
    with pytest.raises(ValueError, match='Line 6 .*image id 9, which is not'):
        CUBAttributes(data_root=root)
    images_file = osp.join(root, 'images.txt')
    _write(images_file, '1 a.jpg\n1 b.jpg\n')
    with pytest.raises(
            ValueError,
            match='Line 2 of the image list .*'
            'repeats the image id 1'):
        CUBAttributes(data_root=root)
    os.remove(images_file)
    with pytest.raises(FileNotFoundError, match='images.txt'):
        CUBAttributes(data_root=root)


def test_min_certainty(root):
    present, certainty = _matrices()
    for split, positions in (('train', TRAIN), ('test', TEST)):
        dataset = CUBAttributes(data_root=root, split=split, min_certainty=3)
        assert dataset.partially_annotated
        unknown = (present == 1) & (certainty < 3)
        for row, k in enumerate(positions):
            expected = np.where(present[k] == 1, 1, -1)
            expected[unknown[k]] = 0
            np.testing.assert_array_equal(
                dataset.get_label_states(row), expected)
            info = dataset.get_data_info(row)
            assert info['gt_label_negative'] == np.flatnonzero(
                present[k] == 0).tolist()
            if split == 'test':  # evaluation target: unknown ignored
                np.testing.assert_array_equal(
                    info['gt_score'], np.where(expected == 0, -1,
                                               expected == 1))
            else:
                assert 'gt_score' not in info
        stats = dataset.annotation_statistics()
        assert stats['num_unknown'] == int(unknown[positions].sum())
    # min_certainty=1 keeps every positive.
    dataset = CUBAttributes(data_root=root, min_certainty=1)
    assert dataset.annotation_statistics()['num_unknown'] == 0
    assert dataset.annotation_statistics()['num_positives'] == int(
        present[TRAIN].sum())

    for value in (0, 5, True, 2.5):
        with pytest.raises(ValueError, match='`min_certainty` must be'):
            CUBAttributes(data_root=root, min_certainty=value)
    with pytest.raises(ValueError, match='`unlisted` follows from'):
        CUBAttributes(data_root=root, unlisted='unknown')

    lines = _label_lines()
    k = _replace_line(lines, '1 5 ', '1 5 1 7 2.0')
    _write_labels(root, lines)
    assert len(CUBAttributes(data_root=root)) == 3  # certainty unused
    with pytest.raises(ValueError, match=rf'Line {k + 1} .* certainty_id 7'):
        CUBAttributes(data_root=root, min_certainty=2)


def test_split_argument(root):
    with pytest.raises(ValueError, match=r"\('train', 'test'\)"):
        CUBAttributes(data_root=root, split='val')


def test_metainfo_argument(root):
    with pytest.raises(ValueError, match='`metainfo` gives other classes'):
        CUBAttributes(data_root=root, metainfo=dict(classes=('a', 'b')))


def test_summary_reports_missing_images(root):
    summary = dataset_summary(CUBAttributes(data_root=root), progress=False)
    assert summary['num_missing_images'] == 1
    assert summary['missing_images'] == [
        osp.join(root, 'images', IMAGES[TRAIN[-1]][1])
    ]


def test_build_and_pipeline(root):
    _, dataset = build_image_dataset(
        dict(type='CUBAttributes', data_root=root))
    sample = dataset[0]
    present, _ = _matrices()
    assert sample['data_samples'].gt_label.tolist() == np.flatnonzero(
        present[0]).tolist()


def test_partial_label_wrapper(root):
    dataset = PartialLabelDataset(
        dataset=dict(type='CUBAttributes', data_root=root),
        mode='single_positive')
    assert len(dataset) == 3
    present, _ = _matrices()
    np.testing.assert_array_equal(dataset.full_labels, present[TRAIN])
    np.testing.assert_array_equal((dataset.observed_labels == 1).sum(1),
                                  [1, 1, 0])


def test_partial_label_wrapper_annotated(root):
    # With min_certainty the annotation has unknowns, which the 'annotated'
    # mode keeps.
    inner = CUBAttributes(data_root=root, min_certainty=3)
    dataset = PartialLabelDataset(dataset=inner, mode='annotated')
    expected = np.stack([inner.get_label_states(i) for i in range(3)])
    assert (expected == 0).any()
    np.testing.assert_array_equal(dataset.observed_labels, expected)
