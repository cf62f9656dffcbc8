"""CUB-200-2011 as a multi-label dataset of its 312 binary attributes."""
import os.path as osp
import warnings
from typing import Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
from mmengine.fileio import get_file_backend
from mmpretrain.datasets.base_dataset import expanduser

from mmlml.registry import DATASETS
from ..custom_multi_label_dataset import CustomMultiLabelDataset
from ..file_utils import read_lines

__all__ = ['CUBAttributes']

#: The number of attributes of CUB-200-2011.
NUM_ATTRIBUTES = 312


def _read_table(path: str,
                what: str,
                columns: Sequence[str],
                last_is_text: bool = False) -> List[Tuple[int, list]]:
    """Read a file of ``<int> <value>...`` lines.

    Returns:
        list[tuple[int, list]]: ``(line number, fields)`` for each non-empty
        line; the integer fields are ``int``, a last text field (with
        ``last_is_text``) is kept as it is, spaces included.
    """
    rows = []
    for number, line in enumerate(read_lines(path, what), 1):
        if not line.strip():
            continue
        if last_is_text:
            parts = line.strip().split(None, len(columns) - 1)
        else:
            parts = line.split()
        try:
            if len(parts) != len(columns):
                raise ValueError
            ints = parts[:-1] if last_is_text else parts
            fields = [int(p) for p in ints] + (
                parts[-1:] if last_is_text else [])
        except ValueError:
            raise ValueError(
                f'Line {number} of {what} {path!r} must be '
                f'"{" ".join(f"<{c}>" for c in columns)}", but is '
                f'{line!r}.') from None
        rows.append((number, fields))
    return rows


def _positions(table: np.ndarray,
               ids: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """The position in ``table`` (distinct ids, in any order) of each of
    ``ids``, and the indices of the ``ids`` that ``table`` lacks (their
    positions are meaningless)."""
    order = np.argsort(table)
    ordered = table[order]
    pos = np.minimum(np.searchsorted(ordered, ids), len(table) - 1)
    return order[pos], np.flatnonzero(ordered[pos] != ids)


@DATASETS.register_module()
class CUBAttributes(CustomMultiLabelDataset):
    """`CUB-200-2011 <https://www.vision.caltech.edu/datasets/cub_200_2011/>`_
    as a multi-label dataset of its 312 binary attributes.

    The protocol of Cole et al. (CVPR 2021): the labels of an image are the
    ``is_present`` column of ``attributes/image_attribute_labels.txt``
    (1 positive, 0 negative; the certainty is not used by default), the
    classes are the 312 attributes in the id order of ``attributes.txt``
    (names such as ``has_bill_shape::curved_(up_or_down)``), the split is
    the official one of ``train_test_split.txt`` (``is_train`` 1:
    ``'train'``, 5,994 images; 0: ``'test'``, 5,794 images) and the rows are
    in the order of ``images.txt``, the order in which Cole et al.'s label
    generation and validation split draw them. Their validation set is 20%
    of ``'train'`` (``PartialLabelDataset(split=...)`` makes it).

    ``image_attribute_labels.txt`` holds one line ``<image_id>
    <attribute_id> <is_present> <certainty_id> <time>`` per (image,
    attribute) pair. A line is split on whitespace and its first four fields
    are read (some lines of the release carry extra tokens), and it is
    keyed by its (image id, attribute id), not by its position in the file:
    every pair of an image of ``images.txt`` and an attribute of
    ``attributes.txt`` must occur exactly once.

    ``attributes.txt`` lies at the root of the ``CUB_200_2011.tgz`` archive,
    next to the ``CUB_200_2011/`` folder that is ``data_root``; it is looked
    for there and inside ``data_root`` (see ``attributes_file``).

    Expected directory structure (``data/cub``, the extracted archive)::

        data/cub
        ├── attributes.txt              # <attribute_id> <name>, 312 lines
        └── CUB_200_2011                # data_root
            ├── images.txt              # <image_id> <relative path>
            ├── train_test_split.txt    # <image_id> <is_train>
            ├── attributes
            │   ├── image_attribute_labels.txt
            │   └── certainties.txt
            └── images
                ├── 001.Black_footed_Albatross
                │   ├── Black_Footed_Albatross_0001_796111.jpg
                │   └── ...
                └── ...

    Args:
        data_root (str): The ``CUB_200_2011/`` folder; every relative path
            below is relative to it.
        split (str): ``'train'`` or ``'test'``. Defaults to ``'train'``.
        data_prefix (str | dict): The image folder (``str`` or
            ``dict(img_path=...)``); an image's path is this folder joined
            with its ``images.txt`` path. Defaults to ``'images'``.
        images_file (str): The image list. Defaults to ``'images.txt'``.
        split_file (str): The split. Defaults to
            ``'train_test_split.txt'``.
        labels_file (str): The attribute labels. Defaults to
            ``'attributes/image_attribute_labels.txt'``.
        attributes_file (str, optional): The attribute names. Defaults to
            None: the first that exists of ``attributes.txt``,
            ``attributes/attributes.txt`` and ``../attributes.txt``.
        min_certainty (int, optional): None (Cole et al.'s protocol: every
            ``is_present`` 1 is a positive) or a certainty from 1 to 4 (1 not
            visible, 2 guessing, 3 probably, 4 definitely): an attribute
            marked present with a lower certainty becomes *unknown*. The
            annotation is then partial (``unlisted='unknown'``, the absent
            attributes listed in ``gt_label_negative``), so that the
            ``'test'`` split carries an evaluation ``gt_score`` in which
            these labels are ignored. ``PartialLabelDataset(mode=
            'annotated')`` trains on them as unknown, and its generating
            modes (``'single_positive'``, ``'ratio'``) draw the observed
            positives among the remaining positives only.
            Defaults to None.
        **kwargs: Other keyword arguments of :class:`CustomMultiLabelDataset`
            and MMPretrain's ``BaseDataset`` (``pipeline``, ``test_mode``,
            ``lazy_init``, which defers reading the labels: the attribute
            names are read at construction in any case). ``unlisted``
            follows from ``min_certainty`` and need not be given.

    Examples:
        >>> from mmlml.datasets import CUBAttributes
        >>> train = CUBAttributes(data_root='data/cub/CUB_200_2011',
        ...                       split='train')
        >>> len(train), len(train.metainfo['classes'])
        (5994, 312)
        >>> train.metainfo['classes'][0]
        'has_bill_shape::curved_(up_or_down)'
        >>> # Cole et al.'s single-positive training split, as a config.
        >>> train_dataset = dict(
        ...     type='PartialLabelDataset', mode='single_positive',
        ...     split='train',
        ...     dataset=dict(type='CUBAttributes',
        ...                  data_root='data/cub/CUB_200_2011',
        ...                  split='train', pipeline=[...]))
    """

    SPLITS = ('train', 'test')
    #: Where ``attributes.txt`` is looked for, relative to ``data_root``.
    ATTRIBUTES_FILES = ('attributes.txt', 'attributes/attributes.txt',
                        '../attributes.txt')
    #: The certainties of ``attributes/certainties.txt``.
    CERTAINTIES = (1, 2, 3, 4)

    def __init__(self,
                 data_root: str,
                 split: str = 'train',
                 data_prefix: Union[str, dict] = 'images',
                 images_file: str = 'images.txt',
                 split_file: str = 'train_test_split.txt',
                 labels_file: str = 'attributes/image_attribute_labels.txt',
                 attributes_file: Optional[str] = None,
                 min_certainty: Optional[int] = None,
                 metainfo: Optional[dict] = None,
                 **kwargs):
        self.check_split(split)
        if min_certainty is not None and (isinstance(
                min_certainty, bool) or min_certainty not in self.CERTAINTIES):
            raise ValueError('`min_certainty` must be None or one of '
                             f'{self.CERTAINTIES}, but got '
                             f'{min_certainty!r}.')
        unlisted = 'negative' if min_certainty is None else 'unknown'
        if kwargs.get('unlisted', unlisted) != unlisted:
            raise ValueError(
                f'`unlisted` follows from `min_certainty` ({unlisted!r} '
                f'with min_certainty={min_certainty!r}), but got '
                f'{kwargs["unlisted"]!r}.')
        kwargs['unlisted'] = unlisted

        self.split = split
        self.min_certainty = min_certainty
        data_root = expanduser(data_root)
        root = data_root or ''
        self.images_file = osp.join(root, expanduser(images_file))
        self.split_file = osp.join(root, expanduser(split_file))
        self.labels_file = osp.join(root, expanduser(labels_file))
        if attributes_file is not None:
            candidates = [osp.join(root, expanduser(attributes_file))]
        else:
            candidates = [
                osp.normpath(osp.join(root, name))
                for name in self.ATTRIBUTES_FILES
            ]
        found = [p for p in candidates if osp.isfile(p)]
        if not found:
            raise FileNotFoundError(
                'The attribute names (attributes.txt, at the root of '
                'CUB_200_2011.tgz next to the CUB_200_2011/ folder) were not '
                f'found; tried {candidates}.')
        self.attributes_file = found[0]
        self._attribute_ids, names = self._read_attributes()

        metainfo = dict(metainfo or {})
        if 'classes' in metainfo and tuple(metainfo['classes']) != names:
            raise ValueError(
                'The classes of CUBAttributes are the attributes of '
                f'{self.attributes_file!r}; `metainfo` gives other classes.')
        metainfo['classes'] = names

        super().__init__(
            ann_file='',
            metainfo=metainfo,
            data_root=data_root,
            data_prefix=data_prefix,
            **kwargs)

    # ------------------------------------------------------------ loading
    def _annotation_source(self) -> str:
        """The annotation, as error messages name it."""
        return repr(self.labels_file)

    def _read_attributes(self) -> Tuple[np.ndarray, Tuple[str, ...]]:
        """The attribute ids (ascending) and names of ``attributes.txt``."""
        path, what = self.attributes_file, 'the attribute names'
        rows = _read_table(
            path, what, ('attribute_id', 'name'), last_is_text=True)
        by_id: Dict[int, str] = {}
        for number, (attr_id, name) in rows:
            if attr_id in by_id:
                raise ValueError(f'Line {number} of {what} {path!r} repeats '
                                 f'the attribute id {attr_id}.')
            by_id[attr_id] = name.strip()
        if len(by_id) != NUM_ATTRIBUTES:
            raise ValueError(f'{what.capitalize()} {path!r} must list the '
                             f'{NUM_ATTRIBUTES} attributes of CUB-200-2011, '
                             f'but lists {len(by_id)}.')
        ids = np.array(sorted(by_id), dtype=np.int64)
        return ids, tuple(by_id[i] for i in ids.tolist())

    def _read_images(self) -> Tuple[np.ndarray, List[str], np.ndarray]:
        """The image ids and paths of ``images.txt`` in its order, and
        whether each is a training image."""
        path, what = self.images_file, 'the image list'
        ids, paths, seen = [], [], set()
        for number, (image_id, rel_path) in _read_table(
                path, what, ('image_id', 'path'), last_is_text=True):
            if image_id in seen:
                raise ValueError(f'Line {number} of {what} {path!r} repeats '
                                 f'the image id {image_id}.')
            seen.add(image_id)
            ids.append(image_id)
            paths.append(rel_path.strip())

        path, what = self.split_file, 'the split file'
        is_train: Dict[int, int] = {}
        for number, (image_id, flag) in _read_table(path, what,
                                                    ('image_id', 'is_train')):
            if flag not in (0, 1):
                raise ValueError(f'Line {number} of {what} {path!r}: '
                                 f'is_train must be 0 or 1, but is {flag}.')
            if image_id not in seen:
                raise ValueError(f'Line {number} of {what} {path!r} names '
                                 f'the image id {image_id}, which is not in '
                                 f'the image list {self.images_file!r}.')
            if image_id in is_train:
                raise ValueError(f'Line {number} of {what} {path!r} repeats '
                                 f'the image id {image_id}.')
            is_train[image_id] = flag
        missing = [i for i in ids if i not in is_train]
        if missing:
            raise ValueError(f'The split file {path!r} has no line for '
                             f'{len(missing)} images of the image list '
                             f'{self.images_file!r}, e.g. image id '
                             f'{missing[0]}.')
        if not ids:
            raise ValueError(f'The image list {self.images_file!r} is '
                             'empty.')
        flags = np.array([is_train[i] for i in ids], dtype=bool)
        return np.array(ids, dtype=np.int64), paths, flags

    def _line_numbers(self) -> List[Tuple[int, str]]:
        """``(line number, text)`` of every non-empty line of the labels file,
        for error messages (rows of ``np.loadtxt`` skip empty lines)."""
        return [(n, line) for n, line in enumerate(
            read_lines(self.labels_file, 'The attribute labels'), 1)
                if line.strip()]

    def _read_label_rows(self) -> np.ndarray:
        """The first four fields of every line of the labels file, an ``(M,
        4)`` ``int64`` array."""
        path = self.labels_file
        if not osp.isfile(path):
            raise FileNotFoundError(f'The attribute labels {path!r} do not '
                                    'exist.')
        try:
            with warnings.catch_warnings():
                warnings.simplefilter('ignore')  # an empty file
                rows = np.loadtxt(
                    path,
                    dtype=np.int64,
                    usecols=(0, 1, 2, 3),
                    comments=None,
                    ndmin=2,
                    encoding='utf-8-sig')
        except ValueError as error:
            for number, line in self._line_numbers():
                parts = line.split()
                if len(parts) < 4 or not all(
                        p.lstrip('+-').isdigit() for p in parts[:4]):
                    raise ValueError(
                        f'Line {number} of the attribute labels {path!r} '
                        'must be "<image_id> <attribute_id> <is_present> '
                        f'<certainty_id> <time>", but is {line!r}.') from error
            raise ValueError(f'The attribute labels {path!r} could not be '
                             f'read: {error}') from error
        return rows.reshape(-1, 4)

    def _bad_line(self, row: int, message: str) -> ValueError:
        """An error about row ``row`` of the labels file, with its line."""
        number, line = self._line_numbers()[row]
        return ValueError(f'Line {number} of the attribute labels '
                          f'{self.labels_file!r} {message}: {line!r}.')

    def _read_labels(self,
                     image_ids: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """The ``is_present`` and ``certainty_id`` matrices, ``(N, 312)``
        ``uint8``, rows in the order of ``image_ids`` and columns in the
        attribute id order."""
        rows = self._read_label_rows()
        attr_ids = self._attribute_ids
        num_images, num_attrs = len(image_ids), len(attr_ids)

        image_index, unknown = _positions(image_ids, rows[:, 0])
        if unknown.size:
            raise self._bad_line(
                unknown[0], f'names the image id {rows[unknown[0], 0]}, '
                f'which is not in the image list {self.images_file!r}')
        attr_index, unknown = _positions(attr_ids, rows[:, 1])
        if unknown.size:
            raise self._bad_line(
                unknown[0], f'names the attribute id {rows[unknown[0], 1]}, '
                f'which is not in {self.attributes_file!r}')

        key = image_index * num_attrs + attr_index
        counts = np.bincount(key, minlength=num_images * num_attrs)
        if (counts > 1).any():
            first = np.zeros(len(key), dtype=bool)
            first[np.unique(key, return_index=True)[1]] = True
            row = int(np.flatnonzero(~first)[0])
            raise self._bad_line(
                row, 'repeats the pair (image_id, attribute_id) = '
                f'({rows[row, 0]}, {rows[row, 1]})')
        missing = np.flatnonzero(counts == 0)
        if missing.size:
            i, a = divmod(int(missing[0]), num_attrs)
            raise ValueError(
                f'The attribute labels {self.labels_file!r} have no line for '
                f'{missing.size} (image, attribute) pairs, e.g. the pair '
                f'(image_id, attribute_id) = ({image_ids[i]}, '
                f'{attr_ids[a]}); every image of {self.images_file!r} needs '
                f'one line for every attribute of {self.attributes_file!r}.')

        bad = np.flatnonzero((rows[:, 2] != 0) & (rows[:, 2] != 1))
        if bad.size:
            raise self._bad_line(
                bad[0], 'has is_present '
                f'{rows[bad[0], 2]}; it must be 0 or 1')
        present = np.zeros((num_images, num_attrs), dtype=np.uint8)
        certainty = np.zeros((num_images, num_attrs), dtype=np.uint8)
        present[image_index, attr_index] = rows[:, 2]
        if self.min_certainty is not None:
            bad = np.flatnonzero(~np.isin(rows[:, 3], self.CERTAINTIES))
            if bad.size:
                raise self._bad_line(
                    bad[0], f'has certainty_id {rows[bad[0], 3]}; it must '
                    f'be one of {self.CERTAINTIES}')
            certainty[image_index, attr_index] = rows[:, 3]
        return present, certainty

    def load_data_list(self) -> List[dict]:
        """Read the images of ``split`` in the order of ``images.txt`` and
        their attributes."""
        image_ids, rel_paths, is_train = self._read_images()
        present, certainty = self._read_labels(image_ids)
        keep = is_train if self.split == 'train' else ~is_train
        backend = get_file_backend(
            self.img_prefix or '.', enable_singleton=True)
        data_list = []
        for i in np.flatnonzero(keep).tolist():
            info = dict(
                img_path=backend.join_path(self.img_prefix, rel_paths[i]))
            if self.min_certainty is None:
                info['gt_label'] = np.flatnonzero(present[i]).tolist()
            else:
                sure = certainty[i] >= self.min_certainty
                info['gt_label'] = np.flatnonzero(present[i] & sure).tolist()
                info['gt_label_negative'] = np.flatnonzero(
                    present[i] == 0).tolist()
            data_list.append(info)
        return data_list

    def extra_repr(self) -> List[str]:
        """The extra repr information of the dataset."""
        return [
            f'Prefix of dataset: \t{self.data_root}',
            f'Split: \t{self.split}',
            f'Image list: \t{self.images_file}',
            f'Attribute labels: \t{self.labels_file}',
            f'Attribute names: \t{self.attributes_file}',
            f'Minimum certainty: \t{self.min_certainty}',
            f'Prefix of images: \t{self.img_prefix}',
        ]
