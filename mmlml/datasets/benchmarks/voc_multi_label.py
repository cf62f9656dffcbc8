"""PASCAL VOC 2007 / 2012 as a multi-label dataset with an explicit rule for
classes present only as difficult objects."""
import logging
import xml.etree.ElementTree as ET
from typing import Dict, List, Set, Tuple, Union

import numpy as np
from mmengine.dataset.base_dataset import force_full_init
from mmengine.logging import print_log
from mmpretrain.datasets import VOC
from mmpretrain.datasets.categories import VOC2007_CATEGORIES

from mmlml.registry import DATASETS
from ..custom_multi_label_dataset import CustomMultiLabelDataset

__all__ = ['VOCMultiLabel']


@DATASETS.register_module()
class VOCMultiLabel(CustomMultiLabelDataset, VOC):
    """`PASCAL VOC <http://host.robots.ox.ac.uk/pascal/VOC/>`_ 2007 or 2012
    with a chosen meaning for difficult-only classes.

    MMPretrain's :class:`~mmpretrain.datasets.VOC` reads the image ids of
    ``ImageSets/Main/<split>.txt`` and their ``Annotations/<id>.xml``; this
    class keeps its layout, arguments and class order (it is a ``VOC``) and
    adds what the single-positive protocol of Cole et al. (CVPR 2021,
    ``preproc/format_pascal.py``) needs: one explicit rule for a class that
    an image holds *only* as difficult objects (``<difficult>1</difficult>``
    on every object of that class), applied identically to the training
    labels and to every evaluation metric.

    **Labels.** A class with at least one non-difficult object in the image
    is a positive, a class without object a negative. A *difficult-only*
    class is, by ``difficult``:

    - ``'negative'`` (default): a negative. This is Cole et al.'s rule:
      their labels come from the VOC2012 ``<cls>_train.txt`` /
      ``<cls>_val.txt`` flags, of which only ``1`` is a positive while ``0``
      (difficult only) and ``-1`` (absent) are both negatives. The
      annotation is full (``unlisted='negative'``).
    - ``'unknown'``: unknown. The annotation is partial
      (``unlisted='unknown'``): ``gt_label_negative`` lists every class that
      is neither positive nor difficult-only, :meth:`get_label_states` gives
      0 for difficult-only classes and, in an evaluation split
      (``test_mode=True`` or ``split`` ``'val'`` / ``'test'``), each sample
      carries the ``gt_score`` -1 there, which every metric ignores. On
      VOC2007 ``test`` this gives the numbers of MMPretrain's ``VOC`` with
      ``VOCAveragePrecision`` / ``VOCMultiLabelMetric`` at their defaults.
    - ``'positive'``: a positive, in ``gt_label`` like the others.

    **Evaluation.** The rule is applied in the data info itself, so
    MMPretrain's ``AveragePrecision`` and ``MultiLabelMetric`` and its
    ``VOCAveragePrecision`` and ``VOCMultiLabelMetric`` all give the same
    numbers: ``gt_label_difficult`` is always an empty list (the VOC metrics
    read it, so a test pipeline still packs it:
    ``PackInputs(meta_keys=(..., 'gt_label_difficult'))``), and the VOC
    metrics' ``difficult_as_positive`` has nothing left to act on. With
    ``'unknown'``, evaluate on an evaluation split: elsewhere a sample has no
    ``gt_score`` and every metric counts its difficult-only classes as
    negatives. The classes present only as difficult objects are kept in
    each data info as ``difficult_only`` (for every choice), and
    :meth:`get_voc_flags` gives VOC's classification flags.

    **Images without positive.** An image whose objects are all difficult
    has no positive under ``'negative'`` and ``'unknown'``. Such images are
    counted (the log line and ``annotation_statistics()
    ['num_images_without_positive']``) and kept by default, as MMPretrain's
    ``VOC`` keeps every id of the image set; Cole et al. keep only images
    with a flag ``1``, which leaves none out on VOC2012 ``train`` and
    ``val``. ``drop_images_without_positive=True`` leaves them out (their
    number is ``annotation_statistics()['num_images_dropped']``). A kept one
    gets no observed positive in ``PartialLabelDataset``'s
    ``'single_positive'`` and ``'ratio'`` modes: all its labels are
    unannotated, so only losses that use unannotated labels train on it.

    **Order.** Classes: MMPretrain's VOC order, alphabetical (``aeroplane``
    0, ``bicycle`` 1, ..., ``tvmonitor`` 19), which is Cole et al.'s class
    dictionary. Rows: the order of the image set file. The official files
    list the ids sorted, which is the order of Cole et al. (they sort the
    file names ``<id>.jpg``); a file that is not sorted is kept in its order
    with a logged warning.

    After decompression of ``VOCtrainval_11-May-2012.tar`` (or
    ``VOCtrainval_06-Nov-2007.tar`` and ``VOCtest_06-Nov-2007.tar``), the
    dataset directory structure is as follows::

        data/VOCdevkit/VOC2012 (or VOC2007)
        ├── Annotations
        │   ├── 2008_000008.xml
        │   └── ...
        ├── ImageSets
        │   └── Main
        │       ├── train.txt
        │       ├── val.txt
        │       ├── trainval.txt
        │       ├── aeroplane_train.txt  (not read)
        │       └── ...
        └── JPEGImages
            ├── 2008_000008.jpg
            └── ...

    An annotation file is read as VOC writes it: each top-level ``<object>``
    has a ``<name>`` (a VOC class) and a ``<difficult>`` of ``0`` or ``1``
    (``0`` when the tag is absent, as in MMDetection). A name among the 20
    VOC classes but not in ``metainfo['classes']`` (a class subset) is
    skipped, like MMPretrain does; any other name is an error.

    Args:
        data_root (str): The root directory of the VOC2007 or VOC2012 folder.
        split (str): ``'train'``, ``'val'``, ``'trainval'`` or ``'test'``.
            Defaults to ``'trainval'``.
        image_set_path (str): The image set file, relative to
            ``data_root``. Defaults to '', which means
            ``ImageSets/Main/<split>.txt``.
        data_prefix (str | dict): The image and annotation folders relative
            to ``data_root``: ``dict(img_path=..., ann_path=...)``, or a
            string for ``img_path``. Defaults to
            ``dict(img_path='JPEGImages', ann_path='Annotations')``.
        difficult (str): What a difficult-only class is: ``'negative'``,
            ``'unknown'`` or ``'positive'``, see above. Defaults to
            ``'negative'``.
        drop_images_without_positive (bool): Whether to leave out the images
            without any positive (after ``difficult`` is applied). Defaults
            to False.
        **kwargs: Other keyword arguments of MMPretrain's ``VOC`` and
            ``BaseDataset`` (``pipeline``, ``test_mode``, ``lazy_init``,
            which loads the annotation only on ``full_init``, ``metainfo``,
            ``indices``...). ``unlisted`` is set by the class from
            ``difficult``.

    Raises:
        FileNotFoundError: The image set file or an annotation file does not
            exist (the message names its path).
        ValueError: A line of the image set file holds more than an id or
            repeats one, or an annotation file is not valid XML or has an
            object without name, of an unknown class or with a
            ``<difficult>`` other than 0 or 1 (path and offending text).

    Examples:
        >>> from mmlml.datasets import VOCMultiLabel
        >>> train = VOCMultiLabel(data_root='data/VOCdevkit/VOC2012',
        ...                       split='train')
        >>> len(train)
        5717
        >>> test = dict(type='VOCMultiLabel',
        ...             data_root='data/VOCdevkit/VOC2012', split='val',
        ...             difficult='negative', pipeline=[...])
    """

    METAINFO = {'classes': VOC2007_CATEGORIES}
    #: The splits (image set files) of the official layout.
    SPLITS = ('train', 'val', 'trainval', 'test')
    #: The choices of ``difficult``.
    DIFFICULT = ('negative', 'unknown', 'positive')

    def __init__(self,
                 data_root: str,
                 split: str = 'trainval',
                 image_set_path: str = '',
                 data_prefix: Union[str, dict] = dict(
                     img_path='JPEGImages', ann_path='Annotations'),
                 difficult: str = 'negative',
                 drop_images_without_positive: bool = False,
                 **kwargs):
        self.check_split(split)
        if difficult not in self.DIFFICULT:
            raise ValueError(f'`difficult` must be one of {self.DIFFICULT}, '
                             f'but got {difficult!r}.')
        if not isinstance(drop_images_without_positive, bool):
            raise TypeError('`drop_images_without_positive` must be a bool, '
                            f'but got {drop_images_without_positive!r}.')
        self.refuse_unlisted(
            kwargs, "from `difficult`: 'unknown' for difficult='unknown', "
            "else 'negative'")
        if not data_prefix:
            data_prefix = dict(img_path='JPEGImages')
        elif isinstance(data_prefix, str):
            data_prefix = dict(img_path=data_prefix)
        if not isinstance(data_prefix,
                          dict) or not data_prefix.get('img_path'):
            raise ValueError('`data_prefix` must be a folder name or a dict '
                             f'with `img_path`, but got {data_prefix!r}.')
        data_prefix = dict(data_prefix)
        if 'ann_path' not in data_prefix:
            data_prefix['ann_path'] = 'Annotations'
        if not data_prefix['ann_path']:
            raise ValueError(
                f'{type(self).__name__} reads the labels from the annotation '
                "folder: `data_prefix['ann_path']` must be set, but got "
                f'{data_prefix["ann_path"]!r}.')
        self.difficult = difficult
        self.drop_images_without_positive = drop_images_without_positive
        self._num_dropped = 0
        super().__init__(
            data_root=data_root,
            split=split,
            image_set_path=image_set_path,
            data_prefix=data_prefix,
            unlisted='unknown' if difficult == 'unknown' else 'negative',
            **kwargs)

    # ------------------------------------------------------------ loading
    def _read_image_set(self) -> List[str]:
        """The image ids of the image set file, in its order."""
        path = self.image_set_path
        if not self.backend.exists(path):
            raise FileNotFoundError(
                f'The image set file {path!r} of {type(self).__name__} '
                f'(split {self.split!r}) does not exist.')
        ids: List[str] = []
        first_line: Dict[str, int] = {}
        for lineno, line in enumerate(
                self.backend.get_text(path).splitlines(), 1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != 1:
                raise ValueError(
                    f'Line {lineno} of the image set file {path!r} must hold '
                    f'one image id, but is {line!r} (a per-class file '
                    '`<class>_<split>.txt` is not an image set file).')
            img_id = fields[0]
            if img_id in first_line:
                raise ValueError(
                    f'The image set file {path!r} lists {img_id!r} twice, on '
                    f'lines {first_line[img_id]} and {lineno}.')
            first_line[img_id] = lineno
            ids.append(img_id)
        if not ids:
            raise ValueError(f'The image set file {path!r} lists no image.')
        return ids

    def _get_labels_from_xml(self, img_id: str) -> Tuple[List[int], List[int]]:
        """Read ``<ann_path>/<img_id>.xml``.

        Returns:
            tuple: As MMPretrain's ``VOC``: the sorted indices of the classes
            with a non-difficult object and those of the classes with a
            difficult object (a class can be in both).
        """
        xml_path = self.backend.join_path(self.ann_prefix, f'{img_id}.xml')
        try:
            content = self.backend.get(xml_path)
        except FileNotFoundError:
            raise FileNotFoundError(
                f'The annotation file {xml_path!r} of image {img_id!r} '
                f'(listed in {self.image_set_path!r}) does not exist.'
            ) from None
        try:
            root = ET.fromstring(content)
        except ET.ParseError as e:
            raise ValueError(f'The annotation file {xml_path!r} is not valid '
                             f'XML: {e}.') from None
        class_index = getattr(self, '_class_index', None) or self.class_to_idx
        labels: Set[int] = set()
        labels_difficult: Set[int] = set()
        for k, obj in enumerate(root.findall('object'), 1):
            name = (obj.findtext('name') or '').strip()
            if not name:
                raise ValueError(f'Object {k} of {xml_path!r} has no '
                                 '<name>.')
            if name not in class_index:
                if name in VOC2007_CATEGORIES:
                    continue  # a VOC class outside the chosen subset
                raise ValueError(
                    f'Object {k} of {xml_path!r} is a {name!r}, which is '
                    f'not one of the classes {tuple(class_index)}.')
            flag = obj.findtext('difficult')
            flag = '0' if flag is None else flag.strip()
            if flag not in ('0', '1'):
                raise ValueError(
                    f'Object {k} ({name}) of {xml_path!r} has '
                    f'<difficult>{flag}</difficult>; expected 0 or 1.')
            (labels_difficult if flag == '1' else labels).add(
                class_index[name])
        return sorted(labels), sorted(labels_difficult)

    def _check_order(self, ids: List[str]) -> None:
        names = [f'{img_id}.jpg' for img_id in ids]
        if names != sorted(names):
            print_log(
                f'{type(self).__name__}: the image set file '
                f'{self.image_set_path} is not sorted; the rows follow its '
                'order, while Cole et al. sort the file names (the order of '
                "the official files), so the partial-label generators' draws "
                'differ from theirs.',
                logger='current',
                level=logging.WARNING)

    def load_data_list(self) -> List[dict]:
        """Read the image set file and the annotation of each image."""
        ids = self._read_image_set()
        self._check_order(ids)
        self._class_index = self.class_to_idx
        num_classes = len(self._class_index)
        data_list, dropped = [], 0
        try:
            for img_id in ids:
                pos, diff = self._get_labels_from_xml(img_id)
                difficult_only = sorted(set(diff) - set(pos))
                info = dict(
                    img_path=self.backend.join_path(self.img_prefix,
                                                    f'{img_id}.jpg'),
                    image_id=img_id,
                    gt_label=pos,
                    gt_label_difficult=[],
                    difficult_only=difficult_only)
                if self.difficult == 'positive':
                    info['gt_label'] = sorted(pos + difficult_only)
                elif self.difficult == 'unknown':
                    info['gt_label_negative'] = sorted(
                        set(range(num_classes)) - set(pos) -
                        set(difficult_only))
                if self.drop_images_without_positive and not info['gt_label']:
                    dropped += 1
                    continue
                data_list.append(info)
        finally:
            del self._class_index
        self._num_dropped = dropped
        return data_list

    def filter_data(self) -> List[dict]:
        """Check the labels (see :class:`CustomMultiLabelDataset`) and count
        the difficult-only labels and the images left out."""
        data_list = super().filter_data()
        self._loaded_statistics().update(
            num_difficult_only=sum(
                len(item['difficult_only']) for item in data_list),
            num_images_dropped=self._num_dropped)
        return data_list

    def full_init(self) -> None:
        """Load the annotation and log its counts."""
        if self._fully_initialized:
            return
        super().full_init()
        stats = self._loaded_statistics()
        if self.drop_images_without_positive:
            images = f'{self._num_dropped} (left out)'
        else:
            images = f'{stats["num_images_without_positive"]} (kept)'
        print_log(
            f'{type(self).__name__} [{self.split}]: difficult-only labels '
            f'{stats["num_difficult_only"]} (difficult={self.difficult!r}), '
            f'images without positive {images}.',
            logger='current')

    # ------------------------------------------------------------- access
    @force_full_init
    def get_voc_flags(self, idx: int) -> np.ndarray:
        """VOC's classification flags of a sample, as in the official
        ``ImageSets/Main/<class>_<split>.txt`` files.

        Args:
            idx (int): The sample index.

        Returns:
            np.ndarray: A ``(C,)`` ``int8`` vector: 1 for a class with a
            non-difficult object, 0 for a difficult-only class, -1 for a
            class without object. It does not depend on ``difficult``.
        """
        info = self._raw_data_info(idx)
        flags = np.full(len(self.metainfo['classes']), -1, dtype=np.int8)
        difficult_only = np.asarray(info['difficult_only'], dtype=np.int64)
        positives = np.setdiff1d(
            np.asarray(info['gt_label'], dtype=np.int64), difficult_only)
        flags[difficult_only] = 0
        flags[positives] = 1
        return flags

    @force_full_init
    def annotation_statistics(self) -> Dict[str, Union[int, float]]:
        """Counts of the annotation.

        Returns:
            dict: The counts of
            :meth:`CustomMultiLabelDataset.annotation_statistics`, plus
            ``num_difficult_only`` (the (image, class) pairs of a
            difficult-only class) and ``num_images_dropped`` (images left out
            by ``drop_images_without_positive``).
        """
        return dict(self._loaded_statistics())

    def extra_repr(self) -> List[str]:
        """The extra repr information of the dataset."""
        return super().extra_repr() + [
            f'Difficult-only classes: \t{self.difficult}',
        ]
