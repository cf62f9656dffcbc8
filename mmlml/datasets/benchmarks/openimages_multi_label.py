"""OpenImages V6 with its human-verified image-level labels: a genuinely
partially labelled multi-label dataset.

The official files are read by :mod:`.openimages_files` and the converted
``.npz`` file by :mod:`.openimages_npz`; their public names are importable
from here too.
"""
import logging
import os.path as osp
from typing import Dict, List, Optional, Tuple, Union

from mmengine.fileio import join_path
from mmengine.logging import print_log
from mmengine.utils import is_abs

from mmlml.registry import DATASETS
from ..custom_multi_label_dataset import CustomMultiLabelDataset
from .openimages_files import (CLASS_DESCRIPTIONS_FILE, HUMAN_LABEL_FILES,
                               OpenImagesLabels, class_display_names,
                               read_class_descriptions, read_class_subset,
                               read_human_labels)
from .openimages_npz import NPZ_FORMAT, load_labels, save_labels

__all__ = [
    'OpenImagesMultiLabel', 'OpenImagesLabels', 'HUMAN_LABEL_FILES',
    'CLASS_DESCRIPTIONS_FILE', 'NPZ_FORMAT', 'read_class_subset',
    'read_class_descriptions', 'class_display_names', 'read_human_labels',
    'save_labels', 'load_labels'
]


@DATASETS.register_module()
class OpenImagesMultiLabel(CustomMultiLabelDataset):
    """`OpenImages V6 <https://storage.googleapis.com/openimages/web/
    index.html>`_ with its human-verified image-level labels, a genuinely
    partially labelled multi-label dataset.

    The labels of a split are the rows of its official human-verified
    image-level label file (``ImageID,Source,LabelName,Confidence``):
    ``Confidence`` 1 is a verified positive, 0 a verified negative, and a
    class that the file does not list for an image is **unknown**
    (``unlisted='unknown'``, set by the class; nothing is made up for
    them). Read as:

    - **Classes**: the MIDs of ``classes_file`` (one a line, or CSV rows
      whose first column is the MID), in the order of that file; labels of
      other classes are ignored. The class names are the MIDs' display
      names in ``class_descriptions`` (a display name that repeats within
      the subset gets its MID appended: ``'Bat (/m/01h44)'``), or the MIDs
      if no descriptions are read. ``metainfo['classes']`` and the
      attribute :attr:`class_mids` (the MIDs in class order) are set when
      the annotation is loaded.
    - **Rows**: by default the images with at least one verified positive
      in the subset (``drop_images_without_positive=True``); with False,
      every image with at least one verified label (positive or negative)
      in the subset. An image without any verified label of the subset is
      never a row. The number of images left out for having only
      negatives is ``annotation_statistics()['num_images_dropped']``.
    - **Row order**: ``ImageID`` sorted as strings (the IDs are lower-case
      hexadecimal, so this is also their numeric order), whatever the order
      of the file. The partial-label generators of
      :class:`PartialLabelDataset` draw in row order.
    - **Repeated rows**: an image and class listed twice with the same
      confidence count once; listed as positive and as negative, they are a
      **positive** (the pair was verified present at least once). Both are
      counted (``num_duplicate_labels``, ``num_conflicting_labels`` in
      :meth:`annotation_statistics`) and conflicts are logged.
    - **Machine labels**: a fractional confidence or the Source
      ``machine`` is an error: the ``*-machine-imagelabels.csv`` files are
      no ground truth.

    The label states (:meth:`get_label_states`, mmlml's training encoding)
    are 1 for a verified positive, -1 for a verified negative and 0 for an
    unknown label. The ``'validation'`` and ``'test'`` splits are evaluation
    splits: their samples carry MMPretrain's evaluation ``gt_score`` (1
    positive, 0 negative, -1 unknown, which ``AveragePrecision`` and
    ``MultiLabelMetric`` ignore), so mAP is computed over verified labels
    only. Each data info holds ``img_path``, ``gt_label`` and
    ``gt_label_negative`` (ascending class indices) and ``image_id``.

    ``ann_file`` is either the official CSV (read directly; fine for the
    validation and test files, a minute or more for the train file of tens
    of millions of rows) or the ``.npz`` file that
    ``tools/dataset_converters/openimages.py`` writes from it, which loads
    in seconds. Both give the same dataset. The ``.npz`` holds the class
    subset it was made with: ``classes_file`` may be omitted, and if given
    must list the same MIDs in the same order; ``class_descriptions`` is
    not read (the names are in the file).

    The dataset directory structure is as follows (the images of a split
    named ``<ImageID>.jpg``)::

        data/openimages
        ├── annotations
        │   ├── oidv6-class-descriptions.csv
        │   ├── oidv6-train-annotations-human-imagelabels.csv
        │   ├── validation-annotations-human-imagelabels.csv
        │   ├── test-annotations-human-imagelabels.csv
        │   ├── classes_567.txt            (a class-subset file)
        │   └── train_567.npz              (converted, optional)
        ├── train
        │   ├── 000002b66c9c498e.jpg
        │   └── ...
        ├── validation
        │   └── ...
        └── test
            └── ...

    Args:
        data_root (str): The root directory of the dataset (``ann_file``,
            ``classes_file``, ``class_descriptions`` and ``data_prefix`` are
            relative to it unless absolute). Defaults to ''.
        split (str): ``'train'``, ``'validation'`` or ``'test'``.
            Defaults to ``'train'``.
        ann_file (str): The official label CSV (``.csv``) or a converted
            file (``.npz``). Defaults to '', which means
            ``annotations/<official file of the split>``.
        classes_file (str, optional): The class-subset file. Required with a
            CSV ``ann_file``; optional with an ``.npz``. Defaults to None.
        class_descriptions (str, optional): The class descriptions CSV for
            the class names. '' (default) means
            ``annotations/oidv6-class-descriptions.csv`` if it exists (the
            MIDs otherwise); None means the MIDs; a path must exist.
        data_prefix (str | dict): The image folder, relative to
            ``data_root``: a string or ``dict(img_path=...)``. Defaults to
            '', which means the split name.
        drop_images_without_positive (bool): Whether to leave out the images
            whose verified labels in the subset are all negatives.
            Defaults to True.
        **kwargs: Other keyword arguments of :class:`CustomMultiLabelDataset`
            and MMPretrain's ``BaseDataset`` (``pipeline``, ``test_mode``,
            ``lazy_init``, which defers reading the annotation to
            ``full_init``, ``metainfo``, ``indices``...).

    Raises:
        FileNotFoundError: A file does not exist (its path is named).
        ValueError: A file is malformed (path, line and text), the
            class-subset file repeats a MID or names one the descriptions
            lack (path and line), the label file holds machine labels, or a
            converted file was made for another split or class subset.

    Examples:
        >>> from mmlml.datasets import OpenImagesMultiLabel
        >>> val = OpenImagesMultiLabel(
        ...     data_root='data/openimages', split='validation',
        ...     classes_file='annotations/classes_567.txt')
        >>> train = dict(
        ...     type='PartialLabelDataset', mode='annotated',
        ...     dataset=dict(type='OpenImagesMultiLabel',
        ...                  data_root='data/openimages', split='train',
        ...                  ann_file='annotations/train_567.npz',
        ...                  pipeline=[...]))
    """

    #: The splits.
    SPLITS = tuple(HUMAN_LABEL_FILES)

    def __init__(self,
                 data_root: str = '',
                 split: str = 'train',
                 ann_file: str = '',
                 classes_file: Optional[str] = None,
                 class_descriptions: Optional[str] = '',
                 data_prefix: Union[str, dict] = '',
                 drop_images_without_positive: bool = True,
                 **kwargs):
        self.check_split(split)
        self.refuse_unlisted(
            kwargs, "'unknown': a class an image does not list is unverified")
        self.split = split
        self.drop_images_without_positive = bool(drop_images_without_positive)
        if not ann_file:
            ann_file = join_path('annotations', HUMAN_LABEL_FILES[split])
        ann_lower = str(ann_file).lower()
        if not ann_lower.endswith(('.csv', '.npz')):
            raise ValueError(
                f'`ann_file` must be the official label CSV (.csv) or a file '
                'converted by tools/dataset_converters/openimages.py (.npz), '
                f'but got {ann_file!r}.')
        self._converted = ann_lower.endswith('.npz')
        if classes_file is None and not self._converted:
            raise ValueError(
                f'{type(self).__name__} needs `classes_file` (the MIDs of '
                'the class subset, one a line) to read the official label '
                f'CSV {ann_file!r}.')

        def under_root(path):
            if path and not is_abs(path) and data_root:
                return join_path(data_root, path)
            return path

        self.classes_file = under_root(classes_file)
        self._descriptions_required = bool(class_descriptions)
        if class_descriptions == '':
            class_descriptions = join_path('annotations',
                                           CLASS_DESCRIPTIONS_FILE)
        self.class_descriptions = under_root(class_descriptions)
        if not data_prefix:
            data_prefix = dict(img_path=split)
        elif isinstance(data_prefix, dict) and not data_prefix.get('img_path'):
            data_prefix = dict(data_prefix, img_path=split)
        self._counts: Dict[str, int] = {}
        self._num_dropped = 0
        #: tuple[str]: The MIDs of the classes, in class order (set when the
        #: annotation is loaded; not in ``metainfo``, which MMEngine
        #: deep-copies on every access).
        self.class_mids: Optional[Tuple[str, ...]] = None
        super().__init__(
            ann_file=ann_file,
            data_root=data_root,
            data_prefix=data_prefix,
            unlisted='unknown',
            **kwargs)

    # ------------------------------------------------------------ loading
    def _class_subset(self) -> Tuple[Tuple[str, ...], Tuple[str, ...]]:
        """The MIDs and names of the classes of ``classes_file``."""
        subset = read_class_subset(self.classes_file)
        descriptions = None
        path = self.class_descriptions
        if path and (self._descriptions_required or osp.isfile(path)):
            descriptions = read_class_descriptions(path)
        elif path:
            print_log(
                f'{type(self).__name__}: no class descriptions file {path!r}; '
                'the class names are the MIDs.',
                logger='current')
        names = class_display_names(subset, self.classes_file, descriptions,
                                    path or '')
        return tuple(mid for _, mid in subset), names

    def _read_labels(self) -> OpenImagesLabels:
        path = self.ann_file
        if not self._converted:
            mids, names = self._class_subset()
            return read_human_labels(path, mids, names, split=self.split)
        labels = load_labels(path)
        if labels.split and labels.split != self.split:
            raise ValueError(
                f'The converted file {path!r} holds the {labels.split!r} '
                f'split ({labels.source}), but {type(self).__name__} was '
                f'given split={self.split!r}.')
        if self.classes_file is not None:
            mids = tuple(mid
                         for _, mid in read_class_subset(self.classes_file))
            if mids != labels.class_mids:
                raise ValueError(
                    f'The class-subset file {self.classes_file!r} '
                    f'({len(mids)} classes) is not the class subset of the '
                    f'converted file {path!r} ({len(labels.class_mids)} '
                    'classes, or another order): convert again with this '
                    'file, or omit `classes_file`.')
        return labels

    def load_data_list(self) -> List[dict]:
        """Read the labels into one item per image, sorted by ``ImageID``."""
        labels = self._read_labels()
        given = self._metainfo.get('classes')
        if given is not None and tuple(given) != labels.class_names:
            raise ValueError(
                f'The classes given in `metainfo` ({len(given)}) differ from '
                f'the {len(labels.class_names)} classes of the class subset; '
                f'{type(self).__name__} takes its classes from '
                '`classes_file`.')
        self._metainfo['classes'] = labels.class_names
        self.class_mids = labels.class_mids
        self._counts = dict(labels.counts)

        pos_ptr = labels.pos_indptr.tolist()
        neg_ptr = labels.neg_indptr.tolist()
        pos = labels.pos_indices.tolist()
        neg = labels.neg_indices.tolist()
        image_ids = labels.image_ids.astype(str).tolist()
        del labels
        # The image folder with its separator: one join, not one per image.
        head = join_path(self.img_prefix, '')
        drop = self.drop_images_without_positive
        data_list: List[dict] = []
        append = data_list.append
        for i, image_id in enumerate(image_ids):
            start, end = pos_ptr[i], pos_ptr[i + 1]
            if start == end and drop:
                continue
            append(
                dict(
                    img_path=head + image_id + '.jpg',
                    gt_label=pos[start:end],
                    gt_label_negative=neg[neg_ptr[i]:neg_ptr[i + 1]],
                    image_id=image_id))
        self._num_dropped = len(image_ids) - len(data_list)
        return data_list

    def filter_data(self) -> List[dict]:
        """Check and count the labels (see :class:`CustomMultiLabelDataset`),
        adding the counts of the CSV's repeats and conflicts."""
        data_list = super().filter_data()
        self._loaded_statistics().update(
            num_images_dropped=self._num_dropped,
            num_duplicate_labels=self._counts['num_duplicate_labels'],
            num_conflicting_labels=self._counts['num_conflicting_labels'])
        return data_list

    def full_init(self) -> None:
        """Load the annotation and log its counts."""
        if self._fully_initialized:
            return
        super().full_init()
        counts = self._counts
        print_log(
            f'{type(self).__name__} [{self.split}]: {counts["num_rows"]} '
            f'rows in {self.ann_file} ({counts["num_rows_outside_subset"]} '
            'of classes outside the subset, ignored); '
            f'{self._num_dropped} images with only negatives in the subset ' +
            ('left out.' if self.drop_images_without_positive else '(kept).'),
            logger='current')
        if counts['num_conflicting_labels'] or counts['num_duplicate_labels']:
            print_log(
                f'{type(self).__name__} [{self.split}]: '
                f'{counts["num_duplicate_labels"]} rows repeat an image and '
                f'class; {counts["num_conflicting_labels"]} image and class '
                'pairs are listed both as positive and as negative and are '
                'taken as positive.',
                logger='current',
                level=logging.WARNING
                if counts['num_conflicting_labels'] else logging.INFO)

    def extra_repr(self) -> List[str]:
        """The extra repr information of the dataset."""
        return [
            f'Split: \t{self.split}',
            f'Annotation file: \t{self.ann_file}',
            f'Class-subset file: \t{self.classes_file}',
            f'Prefix of images: \t{self.img_prefix}',
        ]
