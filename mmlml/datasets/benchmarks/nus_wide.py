"""NUS-WIDE (81 concepts), from its official files, Cole et al.'s formatted
arrays (read by :mod:`.formatted_arrays`) or the CSV of its re-crawl."""
import ast
import csv
import os.path as osp
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np
from mmengine.fileio import get_file_backend
from mmpretrain.datasets.base_dataset import expanduser

from mmlml.registry import DATASETS
from ..custom_multi_label_dataset import CustomMultiLabelDataset
from ..file_utils import check_file, read_lines
from .formatted_arrays import load_formatted_arrays

__all__ = ['NUSWide', 'NUS_WIDE_CONCEPTS', 'load_formatted_arrays']

#: The 81 concepts of NUS-WIDE in the order of ``Concepts81.txt``
#: (alphabetical): the class order of every NUS-WIDE protocol.
NUS_WIDE_CONCEPTS = (
    'airport', 'animal', 'beach', 'bear', 'birds', 'boats', 'book', 'bridge',
    'buildings', 'cars', 'castle', 'cat', 'cityscape', 'clouds', 'computer',
    'coral', 'cow', 'dancing', 'dog', 'earthquake', 'elk', 'fire', 'fish',
    'flags', 'flowers', 'food', 'fox', 'frost', 'garden', 'glacier', 'grass',
    'harbor', 'horses', 'house', 'lake', 'leaf', 'map', 'military', 'moon',
    'mountain', 'nighttime', 'ocean', 'person', 'plane', 'plants', 'police',
    'protest', 'railroad', 'rainbow', 'reflection', 'road', 'rocks', 'running',
    'sand', 'sign', 'sky', 'snow', 'soccer', 'sports',
    'statue', 'street', 'sun', 'sunset', 'surf', 'swimmers', 'tattoo',
    'temple', 'tiger', 'tower', 'town', 'toy', 'train', 'tree', 'valley',
    'vehicle', 'water', 'waterfall', 'wedding', 'whales', 'window', 'zebra')


def _positives(labels: np.ndarray) -> List[List[int]]:
    """The column indices of the ones of each row of a 0/1 matrix."""
    rows, cols = np.nonzero(labels)
    ends = np.cumsum(np.bincount(rows, minlength=len(labels))).tolist()
    columns = cols.tolist()
    return [columns[start:end] for start, end in zip([0] + ends[:-1], ends)]


@DATASETS.register_module()
class NUSWide(CustomMultiLabelDataset):
    """`NUS-WIDE <https://lms.comp.nus.edu.sg/wp-content/uploads/2019/
    research/nuswide/NUS-WIDE.html>`_: 81 concepts, multi-label.

    The classes are the 81 concepts in the order of ``Concepts81.txt``
    (alphabetical, :data:`NUS_WIDE_CONCEPTS`); when a ``Concepts81.txt`` is
    found (``concepts_file``) it must list them in this order. The labels are
    complete: a concept that is not a positive is a negative. Three
    annotations of three different versions of the images are read
    (``ann_format``); their image sets are **not interchangeable**:

    - ``'official'``: the NUS-WIDE release. ``ImageList/TrainImagelist.txt``
      and ``ImageList/TestImagelist.txt`` (161,789 / 107,859 lines) list the
      images as Windows paths (``C:\\ImageData\\Flickr\\actor\\0001_2124494
      179.jpg`` or ``actor\\0001_2124494179.jpg``): the last two components
      (folder and file) are the image path under the image prefix,
      ``Flickr/`` by default (``Flickr/actor/0001_2124494179.jpg``).
      ``Groundtruth/TrainTestLabels/Labels_<concept>_{Train,Test}.txt``
      hold one 0 or 1 per line, line ``i`` the label of image ``i`` of the
      list. Rows are in the order of the list. ``split`` is ``'train'`` or
      ``'test'``.
    - ``'cole'``: Cole et al.'s formatted arrays (CVPR 2021), read by
      :func:`load_formatted_arrays`: ``formatted_{train,val}_images.npy``
      (image paths relative to the ``Flickr/`` folder of the images, which
      Cole et al.'s code joins with ``data/nuswide/Flickr``; so the image
      prefix is ``Flickr/`` by default) and ``formatted_{train,val}_labels
      .npy`` (``N x 81``, 0/1). They are the images still online in a 2020
      re-crawl, official train and test concatenated, permuted and cut into
      150,000 ``'train'`` and 60,260 ``'val'`` rows. Their ``'val'`` arrays
      are their **test** set; their validation set is 20% of ``'train'``
      (``PartialLabelDataset(split=...)`` makes it). Rows are in the order
      of the arrays, which Cole et al.'s label generation and split follow.
    - ``'csv'``: the re-crawl of ASL (Ridnik et al.) and of Zhang et al.'s
      missing-ratio protocol: ``nus_wid_data.csv`` with the header
      ``filepath,label,split_name``, ``label`` a Python list literal of
      concept names (``"['clouds', 'sky']"``) and ``split_name`` ``train``
      or ``val`` (119,103 / 50,720 images in Zhang et al.'s copy).
      ``filepath`` is joined with the image prefix, ``data_root`` by
      default. Rows are in the file's order. ``split`` is ``'train'`` or
      ``'val'``.

    Images without any positive concept (about 22% of the rows of Cole et
    al.'s arrays, 33,410 of 150,000 and 13,412 of 60,260) are kept as
    all-negative rows, as in Cole et al.'s protocol. They are counted in
    ``annotation_statistics()['num_images_without_positive']`` and in the
    summary logged at loading. Downstream,
    ``PartialLabelDataset(mode='single_positive')`` gives them no observed
    positive (all their labels are unannotated), and a fully labelled
    evaluation counts them as negatives of every class.

    Expected directory structure (``data/nuswide``)::

        data/nuswide
        ├── Flickr                      # images (Flickr.zip)
        │   ├── actor
        │   │   ├── 0001_2124494179.jpg
        │   │   └── ...
        │   └── ...
        ├── Concepts81.txt              # optional, checked when present
        ├── ImageList                   # 'official'
        │   ├── TrainImagelist.txt
        │   └── TestImagelist.txt
        ├── Groundtruth                 # 'official'
        │   └── TrainTestLabels
        │       ├── Labels_airport_Train.txt
        │       ├── Labels_airport_Test.txt
        │       └── ...
        ├── formatted_train_images.npy  # 'cole'
        ├── formatted_train_labels.npy
        ├── formatted_val_images.npy
        ├── formatted_val_labels.npy
        └── nus_wid_data.csv            # 'csv' (with its images/ folder)

    Args:
        data_root (str): The root of the dataset; every relative path below
            is relative to it.
        split (str): ``'train'`` or ``'test'`` (``'official'``),
            ``'train'`` or ``'val'`` (``'cole'``, ``'csv'``).
            Defaults to ``'train'``.
        ann_format (str): ``'official'``, ``'cole'`` or ``'csv'``.
            Defaults to ``'official'``.
        data_prefix (str | dict, optional): The image folder (``str`` or
            ``dict(img_path=...)``). Defaults to None: ``'Flickr'`` for the
            ``'official'`` and ``'cole'`` formats, ``''`` (``data_root``)
            for ``'csv'``.
        image_list (str, optional): ``'official'`` only: the image list.
            Defaults to ``ImageList/TrainImagelist.txt`` or
            ``ImageList/TestImagelist.txt``.
        label_dir (str, optional): ``'official'`` only: the folder of the
            ``Labels_<concept>_{Train,Test}.txt`` files. Defaults to
            ``Groundtruth/TrainTestLabels``.
        images_file (str, optional): ``'cole'`` only: the images array.
            Defaults to ``formatted_{split}_images.npy``.
        labels_file (str, optional): ``'cole'`` only: the labels array.
            Defaults to ``formatted_{split}_labels.npy``.
        allow_pickle (bool): ``'cole'`` only: whether the images array may
            be an object array, read by unpickling (only for a trusted
            file; Cole et al.'s arrays need no pickle). Defaults to False.
        csv_file (str, optional): ``'csv'`` only: the CSV file. Defaults to
            ``nus_wid_data.csv``.
        concepts_file (str, optional): A ``Concepts81.txt`` to check the
            class order against; it must exist. Defaults to None: the first
            of ``Concepts81.txt`` and ``ConceptsList/Concepts81.txt`` that
            exists is checked, and none is required.
        **kwargs: Other keyword arguments of :class:`CustomMultiLabelDataset`
            and MMPretrain's ``BaseDataset`` (``pipeline``, ``test_mode``,
            ``lazy_init``, which defers reading the annotation,
            ``metainfo``, ``indices``...). ``unlisted`` is always
            ``'negative'``.

    Examples:
        >>> from mmlml.datasets import NUSWide
        >>> train = NUSWide(data_root='data/nuswide', ann_format='cole',
        ...                 split='train')
        >>> len(train), len(train.metainfo['classes'])
        (150000, 81)
        >>> train.annotation_statistics()['num_images_without_positive']
        33410
        >>> # Cole et al.'s single-positive training split, as a config.
        >>> train_dataset = dict(
        ...     type='PartialLabelDataset', mode='single_positive',
        ...     split='train',
        ...     dataset=dict(type='NUSWide', data_root='data/nuswide',
        ...                  ann_format='cole', split='train',
        ...                  pipeline=[...]))
    """

    METAINFO = {'classes': NUS_WIDE_CONCEPTS}

    #: The annotation formats and their splits.
    ANN_FORMATS: Dict[str, Tuple[str, ...]] = {
        'official': ('train', 'test'),
        'cole': ('train', 'val'),
        'csv': ('train', 'val'),
    }
    #: Where a ``Concepts81.txt`` is looked for (relative to ``data_root``).
    CONCEPTS_FILES = ('Concepts81.txt', 'ConceptsList/Concepts81.txt')
    #: The header of the ``'csv'`` format.
    CSV_COLUMNS = ('filepath', 'label', 'split_name')

    def __init__(self,
                 data_root: str,
                 split: str = 'train',
                 ann_format: str = 'official',
                 data_prefix: Union[str, dict, None] = None,
                 image_list: Optional[str] = None,
                 label_dir: Optional[str] = None,
                 images_file: Optional[str] = None,
                 labels_file: Optional[str] = None,
                 allow_pickle: bool = False,
                 csv_file: Optional[str] = None,
                 concepts_file: Optional[str] = None,
                 **kwargs):
        if ann_format not in self.ANN_FORMATS:
            raise ValueError(f'`ann_format` must be one of '
                             f'{tuple(self.ANN_FORMATS)}, but got '
                             f'{ann_format!r}.')
        splits = self.ANN_FORMATS[ann_format]
        if split not in splits:
            note = (" (Cole et al.'s 'val' arrays are their test set)"
                    if ann_format == 'cole' else '')
            raise ValueError(f'`split` must be one of {splits} with '
                             f"ann_format={ann_format!r}{note}, but got "
                             f'{split!r}.')
        if kwargs.get('unlisted', 'negative') != 'negative':
            raise ValueError('NUS-WIDE is fully labelled: `unlisted` must be '
                             f"'negative', but got {kwargs['unlisted']!r}.")
        kwargs.pop('unlisted', None)

        used: Dict[str, Dict[str, Any]] = dict(
            official=dict(image_list=image_list, label_dir=label_dir),
            cole=dict(
                images_file=images_file,
                labels_file=labels_file,
                allow_pickle=allow_pickle or None),
            csv=dict(csv_file=csv_file))
        for fmt, args in used.items():
            for name, value in args.items():
                if fmt != ann_format and value is not None:
                    raise ValueError(f'`{name}` is read only with '
                                     f"ann_format={fmt!r}, but "
                                     f'ann_format={ann_format!r}.')

        self.split = split
        self.ann_format = ann_format
        self.allow_pickle = allow_pickle
        data_root = expanduser(data_root)
        root = data_root or ''

        def _path(name: Optional[str], default: str) -> str:
            return osp.join(root, expanduser(name or default))

        capital = split.capitalize()
        self.image_list = self.label_dir = None
        self.images_file = self.labels_file = self.csv_file = None
        if ann_format == 'official':
            self.image_list = _path(image_list,
                                    f'ImageList/{capital}Imagelist.txt')
            self.label_dir = _path(label_dir, 'Groundtruth/TrainTestLabels')
        elif ann_format == 'cole':
            self.images_file = _path(images_file,
                                     f'formatted_{split}_images.npy')
            self.labels_file = _path(labels_file,
                                     f'formatted_{split}_labels.npy')
        else:
            self.csv_file = _path(csv_file, 'nus_wid_data.csv')
        self.concepts_file = None if concepts_file is None else _path(
            concepts_file, '')

        if data_prefix is None:
            data_prefix = '' if ann_format == 'csv' else 'Flickr'
        super().__init__(
            ann_file='',
            data_root=data_root,
            data_prefix=data_prefix,
            **kwargs)

    # ------------------------------------------------------------ loading
    def _file(self, name: str) -> str:
        """The annotation file ``name``, which ``ann_format`` reads."""
        path = getattr(self, name)
        if path is None:
            raise ValueError(f'{name} is not set (ann_format='
                             f'{self.ann_format!r} reads it).')
        return path

    def _annotation_files(self) -> List[str]:
        if self.ann_format == 'official':
            return [self._file('image_list'), self._file('label_dir')]
        if self.ann_format == 'cole':
            return [self._file('images_file'), self._file('labels_file')]
        return [self._file('csv_file')]

    def _annotation_source(self) -> str:
        """The annotation, as error messages name it."""
        return ' and '.join(repr(f) for f in self._annotation_files())

    def _check_concepts_file(self) -> None:
        """Check the class order against ``Concepts81.txt`` if there is
        one."""
        path = self.concepts_file
        if path is not None:
            check_file(path, 'The concept list')
        else:
            candidates = [
                osp.join(self.data_root or '', name)
                for name in self.CONCEPTS_FILES
            ]
            path = next((p for p in candidates if osp.isfile(p)), None)
            if path is None:
                return
        names = [
            line.strip() for line in read_lines(path, 'The concept '
                                                'list')
        ]
        classes = tuple(self.metainfo['classes'])
        if tuple(names) != classes:
            mismatch = next(
                (i for i, (a, b) in enumerate(zip(names, classes)) if a != b),
                min(len(names), len(classes)))
            found = names[mismatch] if mismatch < len(names) else '(none)'
            wanted = classes[mismatch] if mismatch < len(classes) \
                else '(none)'
            raise ValueError(
                f'The concept list {path!r} ({len(names)} lines) does not '
                f'list the {len(classes)} classes of {type(self).__name__} '
                f'in their order: line {mismatch + 1} is {found!r}, '
                f'expected {wanted!r}.')

    def load_data_list(self) -> List[dict]:
        """Read the image paths and labels of ``split`` in the protocol's row
        order."""
        self._check_concepts_file()
        self._backend = get_file_backend(
            self.img_prefix or '.', enable_singleton=True)
        labels: Union[np.ndarray, List[List[int]]]
        if self.ann_format == 'official':
            paths, labels = self._load_official()
        elif self.ann_format == 'cole':
            rel_paths, labels = load_formatted_arrays(
                self._file('images_file'),
                self._file('labels_file'),
                num_classes=len(self.metainfo['classes']),
                allow_pickle=self.allow_pickle)
            paths = [self._join(p) for p in rel_paths]
        else:
            paths, labels = self._load_csv()
        if isinstance(labels, np.ndarray):
            labels = _positives(labels)
        return [
            dict(img_path=path, gt_label=label)
            for path, label in zip(paths, labels)
        ]

    def _join(self, *parts: str) -> str:
        """An image path: the image prefix joined with ``parts``."""
        return self._backend.join_path(self.img_prefix, *parts)

    def _load_official(self) -> Tuple[List[str], np.ndarray]:
        """The ``'official'`` format: the image list and 81 label files."""
        lines = read_lines(self._file('image_list'), 'The image list')
        paths = []
        for i, line in enumerate(lines, 1):
            parts = line.strip().replace('\\', '/').split('/')
            if len(parts) < 2 or not parts[-1] or not parts[-2]:
                raise ValueError(
                    f'Line {i} of the image list {self.image_list!r} is not '
                    'an image path with a folder and a file name (such as '
                    f'C:\\ImageData\\Flickr\\actor\\0001_2124494179.jpg): '
                    f'{line!r}.')
            paths.append(self._join(parts[-2], parts[-1]))

        capital = self.split.capitalize()
        labels = np.zeros((len(paths), len(self.metainfo['classes'])),
                          dtype=np.uint8)
        for c, concept in enumerate(self.metainfo['classes']):
            path = osp.join(
                self._file('label_dir'), f'Labels_{concept}_{capital}.txt')
            labels[:, c] = self._read_label_file(path, len(paths))
        return paths, labels

    def _read_label_file(self, path: str, num_images: int) -> np.ndarray:
        """Read a ``Labels_<concept>_<Split>.txt`` file: one 0 or 1 per line,
        ``num_images`` lines."""
        check_file(path, 'The label file')
        with open(path, 'rb') as f:
            tokens = f.read().split()
        if len(tokens) == num_images:
            values = np.array(tokens)
            ones, zeros = values == b'1', values == b'0'
            if (ones | zeros).all():
                return ones.astype(np.uint8)
        # Find what is wrong, with its line number.
        lines = read_lines(path, 'The label file')
        for i, line in enumerate(lines, 1):
            if line.strip() not in ('0', '1'):
                raise ValueError(f'Line {i} of the label file {path!r} must '
                                 f'be 0 or 1, but is {line!r}.')
        raise ValueError(f'The label file {path!r} has {len(lines)} lines '
                         f'but the image list {self.image_list!r} has '
                         f'{num_images}; they must be aligned line by line.')

    def _load_csv(self) -> Tuple[List[str], List[List[int]]]:
        """The ``'csv'`` format: ``filepath,label,split_name`` rows."""
        csv_file = self._file('csv_file')
        check_file(csv_file, 'The CSV file')
        class_to_idx = {c: i for i, c in enumerate(self.metainfo['classes'])}
        splits = self.ANN_FORMATS['csv']
        paths, labels = [], []
        with open(csv_file, encoding='utf-8-sig', newline='') as f:
            reader = csv.reader(f)
            header = next(reader, None)
            if header is None or tuple(
                    h.strip() for h in header[:3]) != self.CSV_COLUMNS:
                raise ValueError(
                    f'The CSV file {self.csv_file!r} must start with the '
                    f'header {",".join(self.CSV_COLUMNS)}, but starts with '
                    f'{header!r}.')
            for row in reader:
                if not row:
                    continue
                where = f'Line {reader.line_num} of the CSV file ' \
                    f'{self.csv_file!r}'
                if len(row) < 3:
                    raise ValueError(f'{where} must have the columns '
                                     f'{",".join(self.CSV_COLUMNS)}: {row!r}.')
                filepath, label, split_name = (v.strip() for v in row[:3])
                if split_name not in splits:
                    raise ValueError(f'{where} has split_name '
                                     f'{split_name!r}; expected one of '
                                     f'{splits}.')
                if split_name != self.split:
                    continue
                names = self._parse_label_list(label, where)
                unknown = [n for n in names if n not in class_to_idx]
                if unknown:
                    raise ValueError(f'{where} lists unknown concepts '
                                     f'{unknown} (label {label!r}).')
                paths.append(self._join(filepath))
                labels.append(sorted(class_to_idx[n] for n in names))
        return paths, labels

    @staticmethod
    def _parse_label_list(text: str, where: str) -> List[str]:
        """Parse a Python list literal of concept names."""
        try:
            names = ast.literal_eval(text)
        except (ValueError, SyntaxError) as error:
            raise ValueError(f'{where}: the label {text!r} is not a Python '
                             'list of concept names.') from error
        if not isinstance(names, (list, tuple)) or not all(
                isinstance(n, str) for n in names):
            raise ValueError(f'{where}: the label {text!r} is not a Python '
                             'list of concept names.')
        return list(names)

    def extra_repr(self) -> List[str]:
        """The extra repr information of the dataset."""
        body = [
            f'Prefix of dataset: \t{self.data_root}',
            f'Annotation format: \t{self.ann_format}',
            f'Split: \t{self.split}',
        ]
        body += [f'Annotation: \t{f}' for f in self._annotation_files()]
        body.append(f'Prefix of images: \t{self.img_prefix}')
        return body
