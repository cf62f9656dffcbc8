"""A multi-label dataset whose annotation may list negatives and unknowns."""
import gc
import itertools
import logging
import numbers
from collections import Counter
from typing import Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
from mmengine.dataset.base_dataset import force_full_init
from mmengine.logging import print_log
from mmpretrain.datasets import MultiLabelDataset

from mmlml.registry import DATASETS
from mmlml.utils.hyperparameters import Choice, check_settings
from .checks import check_index
from .file_utils import load_annotation, quote
from .label_lists import (LabelLists, compact_indices, row_pointers,
                          subset_rows, take_rows)
from .label_states import (UNLISTED, check_label_indices, evaluation_target,
                           label_matrices, label_states)
from .summary import annotation_counts

__all__ = ['CustomMultiLabelDataset', 'NoKnownNegative']


def _describe(value, key: str) -> str:
    """What an annotation file holds instead of an object with ``key``."""
    if isinstance(value, dict):
        if key in value:
            return f'a `{key}` of type {type(value[key]).__name__}'
        return f'an object with the keys {quote(sorted(value))}'
    return f'a {type(value).__name__}'


class NoKnownNegative(ValueError):
    """An evaluation split of a partial annotation with no known negative:
    every known label is a positive, so any predictor scores 100."""


@DATASETS.register_module()
class CustomMultiLabelDataset(MultiLabelDataset):
    """MMPretrain's ``MultiLabelDataset`` with observed negatives and unknown
    labels.

    The annotation file is MMPretrain's annotation JSON (``metainfo`` with
    the ``classes``, and a ``data_list``). Each item has an ``img_path``, a
    ``gt_label`` (the indices of the positives) and, optionally, a
    ``gt_label_negative`` (the indices of the observed negatives)::

        {"metainfo": {"classes": ["cat", "dog", "car"]},
         "data_list": [
            {"img_path": "a.jpg", "gt_label": [0], "gt_label_negative": [2]},
            {"img_path": "b.jpg", "gt_label": [1, 2]}]}

    ``unlisted`` says what a class in neither list is: a negative
    (``'negative'``, a fully labelled annotation: MMPretrain's meaning of
    ``gt_label``) or unknown (``'unknown'``, a partial annotation such as
    OpenImages' human-verified labels). The label states of a sample, in
    mmlml's training encoding (1 positive, 0 unknown, -1 negative), are
    :meth:`get_label_states`, and those of every sample at once
    :meth:`get_label_matrices` (made from the label lists kept when the
    annotation is loaded, without reading the samples one by one);
    :class:`PartialLabelDataset` reads them (its ``'annotated'`` mode
    trains on them as they are).

    Unknown labels and the two encodings:

    - In an *evaluation split* (``test_mode=True`` or a ``split`` among
      :attr:`EVALUATION_SPLITS`) of a partial annotation, every sample also
      carries a ``gt_score`` in MMPretrain's evaluation convention (1
      positive, 0 negative, -1 unknown, which ``AveragePrecision`` and
      ``MultiLabelMetric`` ignore), so mAP and F1 are computed over known
      labels only. Such a split needs a known negative: one whose every
      known label is a positive (a fully labelled file read with
      ``unlisted='unknown'``) is refused when it is loaded
      (:class:`NoKnownNegative`), since every predictor would score 100.
    - Otherwise a sample carries only ``gt_label``: a model trained on this
      dataset directly sees the positives and treats everything else as
      unannotated (mmlml's 0), so its verified negatives are unused; train
      through ``PartialLabelDataset(mode='annotated')`` to use them. A
      warning says so at the first sample.

    The label lists are checked when the annotation is loaded (integers in
    ``[0, C)``, no repeats, no class both positive and negative), and a
    summary (:meth:`annotation_statistics`) is logged.

    Args:
        *args: Positional arguments of ``MultiLabelDataset``.
        unlisted (str): ``'negative'`` or ``'unknown'``, see above.
            Defaults to ``'negative'``.
        **kwargs: Keyword arguments of ``MultiLabelDataset`` (``ann_file``,
            ``data_root``, ``data_prefix``, ``pipeline``, ``test_mode``,
            ``metainfo``, ...).

    Examples:
        >>> train = dict(
        ...     type='PartialLabelDataset', mode='annotated',
        ...     dataset=dict(type='CustomMultiLabelDataset',
        ...                  ann_file='train.json', unlisted='unknown',
        ...                  data_prefix='images/', pipeline=[...]))
    """

    #: Splits whose samples carry evaluation targets.
    EVALUATION_SPLITS = ('val', 'validation', 'test')

    @classmethod
    def check_split(cls, split: str) -> None:
        """Raise ``ValueError`` unless ``split`` is one of ``cls.SPLITS``
        (the splits of a benchmark dataset class)."""
        if split not in cls.SPLITS:
            raise ValueError(f'`split` must be one of {cls.SPLITS}, but got '
                             f'{split!r}.')

    @classmethod
    def refuse_unlisted(cls, kwargs: dict, reason: str) -> None:
        """Raise ``TypeError`` if ``unlisted`` is among ``kwargs``: a class
        whose annotation fixes it (``reason`` says how) sets it itself."""
        if 'unlisted' in kwargs:
            raise TypeError(f'{cls.__name__} sets `unlisted` itself '
                            f'({reason}); do not pass it.')

    #: The setting this class adds to ``MultiLabelDataset``'s (the
    #: benchmark subclasses take it from here).
    hyperparameters = dict(unlisted=Choice('negative', options=UNLISTED))

    def __init__(self, *args, unlisted: str = 'negative', **kwargs):
        self.unlisted = unlisted
        check_settings(self)
        self._warned_direct_training = False
        self._statistics: Optional[Dict[str, Union[int, float]]] = None
        # The label lists of the samples, for get_label_matrices.
        self._label_lists: Optional[LabelLists] = None
        super().__init__(*args, **kwargs)

    # ------------------------------------------------------------ loading
    def _annotation_source(self) -> str:
        """The annotation, as error messages name it."""
        ann_file = getattr(self, 'ann_file', '')
        return repr(ann_file) if ann_file else type(self).__name__

    def load_data_list(self) -> List[dict]:
        """Read MMPretrain's annotation file (``ann_file``), with errors
        that name the file and the item.

        The file (JSON or YAML, read by safe parsers; a pickle is
        refused, as loading one can run any code it names) holds an
        object with a ``data_list`` list of items, each an object with the
        keys of ``data_prefix`` (``img_path``), and optionally a
        ``metainfo`` object (the ``classes``). An image listed twice is
        two samples; a warning says so.

        Returns:
            list[dict]: The items, with the prefixes joined.
        """
        path = self.ann_file
        annotations = load_annotation(path, 'The annotation file')
        data_list = annotations.get('data_list') if isinstance(
            annotations, dict) else None
        if not isinstance(data_list, list):
            raise ValueError(
                f'The annotation file {path!r} must hold an object with a '
                '`data_list` list of items (and a `metainfo` object with the '
                '`classes`), but it holds '
                f'{_describe(annotations, "data_list")}.')
        metainfo = annotations.get('metainfo', {})
        if not isinstance(metainfo, dict):
            raise ValueError(f'The `metainfo` of the annotation file {path!r} '
                             f'must be an object, but is {quote(metainfo)}.')
        for key, value in metainfo.items():
            self._metainfo.setdefault(key, value)
        prefix_keys = tuple(self.data_prefix)
        first_item: Dict[str, int] = {}
        repeats: List[Tuple[int, int, str]] = []
        items = []
        for i, raw in enumerate(data_list):
            missing = [
                key for key in prefix_keys
                if not isinstance(raw, dict) or key not in raw
            ]
            if missing:
                raise ValueError(
                    f'Item {i} of the annotation file {path!r} must be an '
                    f'object with the key(s) {prefix_keys} of `data_prefix` '
                    f'and `gt_label`, but is {quote(raw)}.')
            if 'img_path' in raw:
                image = raw['img_path']
                if not isinstance(image, str):
                    raise ValueError(
                        f'Item {i} of the annotation file {path!r} has the '
                        f'`img_path` {quote(image)}; it must be a string.')
                if first_item.setdefault(image, i) != i:
                    repeats.append((first_item[image], i, image))
            info = self.parse_data_info(raw)
            items.extend(info if isinstance(info, list) else [info])
        if repeats:
            first, again, image = repeats[0]
            print_log(
                f'The annotation file {path!r} lists {len(repeats)} images '
                f'more than once (e.g. items {first} and {again} are both '
                f'{image!r}): each repetition is a sample of its own, drawn '
                'as often as any other, with the labels of its own item.',
                logger='current',
                level=logging.WARNING)
        return items

    def filter_data(self) -> List[dict]:
        """Check every item's labels (and apply MMEngine's ``filter_cfg``)."""
        data_list = super().filter_data()
        classes = self.metainfo.get('classes') or ()
        num_classes = len(classes)
        if not num_classes:
            raise ValueError(
                f'{type(self).__name__} needs the class names: give '
                "`metainfo=dict(classes=...)` or a `metainfo.classes` in "
                f'the annotation file {self._annotation_source()}.')
        if isinstance(classes, str) or len(set(classes)) != num_classes:
            repeated = [c for c, n in Counter(classes).items() if n > 1]
            raise ValueError(
                f'The classes of {self._annotation_source()} must be a list '
                f'of distinct names, but got {quote(classes)} (repeated: '
                f'{quote(repeated[:3])}).')
        if not data_list:
            split = getattr(self, 'split', None)
            raise ValueError(
                f'{self._annotation_source()} lists no image'
                f'{"" if split is None else f" of the split {split!r}"}: '
                'check the annotation file, the split and `filter_cfg`.')
        pos_len, pos_flat = self._flatten(data_list, 'gt_label')
        neg_len, neg_flat = self._flatten(data_list, 'gt_label_negative')
        # All items are checked at once; the first bad item, if any, is
        # then checked alone for a precise message.
        rows = np.arange(len(data_list), dtype=np.int64)
        pos_rows = np.repeat(rows, pos_len)
        neg_rows = np.repeat(rows, neg_len)
        out = np.concatenate([
            pos_rows[(pos_flat < 0) | (pos_flat >= num_classes)],
            neg_rows[(neg_flat < 0) | (neg_flat >= num_classes)]
        ])
        if out.size:
            self._check_item(data_list, int(out.min()), num_classes)
        # A class twice in one list, or in both lists, of one item.
        pos_key = pos_rows * num_classes + pos_flat
        neg_key = neg_rows * num_classes + neg_flat
        for key in (pos_key, neg_key, np.concatenate([pos_key, neg_key])):
            key = np.sort(key)
            repeated = key[1:][key[1:] == key[:-1]]
            if repeated.size:
                self._check_item(data_list,
                                 int(repeated.min()) // num_classes,
                                 num_classes)
        self._label_lists = LabelLists(
            row_pointers(pos_len), compact_indices(pos_flat, num_classes),
            row_pointers(neg_len), compact_indices(neg_flat, num_classes))
        partial = self.partially_annotated
        self._statistics = annotation_counts(
            len(data_list),
            num_classes,
            pos_flat.size,
            neg_flat.size if partial else None,
            no_positive=int((pos_len == 0).sum()),
            no_label=int(
                ((pos_len == 0) & (neg_len == 0)).sum()) if partial else 0)
        return data_list

    def _flatten(self, data_list: List[dict],
                 key: str) -> Tuple[np.ndarray, np.ndarray]:
        """The lengths and the concatenation of every item's ``key`` list
        (as plain lists of ints), checked to hold integers only."""
        lists = []
        for i, item in enumerate(data_list):
            labels = item.get(key, ())
            if key == 'gt_label' and 'gt_label' not in item:
                self._check_item(data_list, i, 0)
            if isinstance(labels, (str, bytes, dict, numbers.Number)):
                self._check_item(data_list, i, 0)
            if labels is None or isinstance(labels, np.ndarray):
                labels = [] if labels is None else labels.tolist()
                if key in item:
                    item[key] = labels
            lists.append(labels)
        lengths = np.fromiter(map(len, lists), np.int64, len(lists))
        values = list(itertools.chain.from_iterable(lists))
        # Only Python's and numpy's integers (not bool: True would be class
        # 1), each of int64's range; else the first item that has another
        # is checked alone, for its message (file, item, values).
        if not set(map(type, values)) <= {int, np.int64, np.int32}:
            for i, labels in enumerate(lists):
                if not all(
                        isinstance(c, numbers.Integral)
                        and not isinstance(c, (bool, np.bool_))
                        for c in labels):
                    self._check_item(data_list, i, 0)
        try:
            flat = np.array(values, dtype=np.int64)
        except OverflowError:  # an index beyond int64, e.g. 10**30
            for i, labels in enumerate(lists):
                if any(not -2**63 <= c < 2**63 for c in labels):
                    self._check_item(data_list, i, 0)
            raise
        return lengths, flat

    def _check_item(self, data_list: List[dict], i: int,
                    num_classes: int) -> None:
        """Raise the error that explains what is wrong with item ``i``."""
        item = data_list[i]
        where = f'{self._annotation_source()}, item {i} ' \
            f'({item.get("img_path", "no img_path")})'
        if 'gt_label' not in item:
            raise ValueError(f'{where} has no `gt_label` (the list of its '
                             'positive classes).')
        num_classes = num_classes or len(self._metainfo['classes'])
        pos = check_label_indices(item['gt_label'], num_classes, where,
                                  'gt_label')
        neg = check_label_indices(
            item.get('gt_label_negative'), num_classes, where,
            'gt_label_negative')
        both = np.intersect1d(pos, neg)
        if both.size:
            raise ValueError(f'{where}: classes {both.tolist()} are both '
                             'in `gt_label` and in `gt_label_negative`.')
        raise AssertionError(f'{where} was found wrong but passes the check.')

    def full_init(self) -> None:
        """Load the annotation, then log :meth:`annotation_statistics`."""
        if self._fully_initialized:
            return
        # Building (and serialising) millions of small dicts and lists sets
        # off the cyclic garbage collector over and over, which takes most
        # of the time of a large annotation; none of them is in a cycle.
        enabled = gc.isenabled()
        gc.disable()
        try:
            super().full_init()
        finally:
            if enabled:
                gc.enable()
        if self._indices is not None:
            # MMEngine kept the samples of `indices` after filter_data.
            self._subset_label_lists(self._indices)
        stats = self._loaded_statistics()
        problem = self.evaluation_label_problem()
        if problem:
            raise NoKnownNegative(problem)
        split = getattr(self, 'split', None)
        print_log(
            f'{type(self).__name__}'
            f'{"" if split is None else f" [{split}]"}: '
            f'{stats["num_images"]} images, {stats["num_classes"]} classes, '
            f'{stats["positives_per_image"]:.2f} positives per image, '
            f'{stats["num_negatives"]} negatives, {stats["num_unknown"]} '
            'unknown labels, images without positive '
            f'{stats["num_images_without_positive"]}.',
            logger='current')

    def prepare_data(self, idx: int):
        """Run the pipeline on a sample (warning once if a partial
        annotation is used for training directly, not through
        ``PartialLabelDataset``, which runs the pipeline itself)."""
        if (self.partially_annotated and not self.is_evaluation_split
                and not self._warned_direct_training):
            self._warned_direct_training = True
            print_log(
                f'{type(self).__name__}: the annotation has unknown labels, '
                'but a training sample of this dataset carries only its '
                'positives (everything else unannotated). Wrap it in '
                "PartialLabelDataset(mode='annotated') to train on its "
                'observed negatives too.',
                logger='current',
                level=logging.WARNING)
        return super().prepare_data(idx)

    # ------------------------------------------------------------- access
    @property
    def partially_annotated(self) -> bool:
        """bool: Whether a class in neither list is unknown."""
        return self.unlisted == 'unknown'

    def evaluation_label_problem(self,
                                 evaluated: Optional[bool] = None
                                 ) -> Optional[str]:
        """Why this split cannot be evaluated, or None: a partial
        annotation whose known labels are all positives (no negative,
        listed or implied) gives every predictor mAP 100 on its known
        labels.

        Args:
            evaluated (bool, optional): Judge the split as an evaluation
                split (or not); defaults to :attr:`is_evaluation_split`.
        """
        if evaluated is None:
            evaluated = self.is_evaluation_split
        stats = self._statistics or {}
        if not (evaluated and self.partially_annotated
                and stats.get('num_positives') and not stats['num_negatives']):
            return None
        return (f'{type(self).__name__} ({self.ann_file}) is evaluated on '
                'its known labels, but none is a negative: every known label '
                'is a positive, so any predictor would score mAP 100. For a '
                "fully labelled file set unlisted='negative' (a class not "
                'listed in `gt_label` is a negative); for a partial one, list '
                'the observed negatives in `gt_label_negative`.')

    @property
    def is_evaluation_split(self) -> bool:
        """bool: Whether samples carry MMPretrain's evaluation targets:
        ``test_mode`` or a ``split`` in :attr:`EVALUATION_SPLITS`."""
        return bool(self.test_mode) or getattr(self, 'split',
                                               None) in self.EVALUATION_SPLITS

    def _raw_data_info(self, idx: int) -> dict:
        """The annotation item, without the evaluation target (``idx`` is
        checked: an integer in ``[-len, len)``, negative from the end)."""
        idx = check_index(idx, len(self), type(self).__name__)
        return super().get_data_info(idx)

    @force_full_init
    def get_label_states(self, idx: int) -> np.ndarray:
        """The labels of a sample in mmlml's training encoding.

        Args:
            idx (int): The sample index.

        Returns:
            np.ndarray: A ``(C,)`` ``int8`` vector: 1 positive, 0 unknown, -1
            negative.
        """
        info = self._raw_data_info(idx)
        return label_states(info['gt_label'], info.get('gt_label_negative'),
                            len(self._metainfo['classes']), self.unlisted)

    @force_full_init
    def get_label_matrices(self) -> Tuple[np.ndarray, Optional[np.ndarray]]:
        """The labels of every sample at once: :meth:`get_label_states` of
        all samples, as two matrices.

        They are made from the label lists checked when the annotation was
        loaded, without reading the samples one by one.

        Returns:
            Tuple[np.ndarray, np.ndarray or None]: The ``(N, C)`` ``uint8``
            matrix of the positives (1; row ``i`` is
            ``get_label_states(i) == 1``) and the ``(N, C)`` boolean matrix
            of the unknown labels (``get_label_states(i) == 0``), None if no
            label is unknown. Every other label is a negative. Both are new
            arrays that the caller may modify.
        """
        lists = self._label_lists
        if lists is None or len(lists.pos_indptr) != len(self) + 1:
            # The data list was changed after filter_data: read it again.
            lists = self._read_label_lists()
        return label_matrices(lists.pos_indptr, lists.pos_indices,
                              lists.neg_indptr, lists.neg_indices,
                              len(self._metainfo['classes']), self.unlisted)

    def _read_label_lists(self) -> LabelLists:
        """The label lists of the samples, read one by one."""
        infos = [self._raw_data_info(i) for i in range(len(self))]
        pos_len, pos_flat = self._flatten(infos, 'gt_label')
        neg_len, neg_flat = self._flatten(infos, 'gt_label_negative')
        return LabelLists(
            row_pointers(pos_len), pos_flat, row_pointers(neg_len), neg_flat)

    def _subset_label_lists(self, indices: Union[int, Sequence[int]]) -> None:
        """Keep the label lists of the samples that MMEngine's
        ``get_subset_(indices)`` keeps."""
        lists = self._label_lists
        if lists is None:
            return
        rows = subset_rows(indices, len(lists.pos_indptr) - 1)
        self._label_lists = LabelLists(
            *take_rows(lists.pos_indptr, lists.pos_indices, rows),
            *take_rows(lists.neg_indptr, lists.neg_indices, rows))

    def get_subset_(self, indices: Union[int, Sequence[int]]) -> None:
        """MMEngine's ``get_subset_``, keeping the label lists of
        :meth:`get_label_matrices` in step."""
        super().get_subset_(indices)
        self._subset_label_lists(indices)

    def get_subset(self, indices: Union[int, Sequence[int]]):
        """MMEngine's ``get_subset``, keeping the label lists of
        :meth:`get_label_matrices` in step."""
        subset = super().get_subset(indices)
        subset._label_lists = self._label_lists
        subset._subset_label_lists(indices)
        return subset

    def get_data_info(self, idx: int) -> dict:
        """The annotation of a sample, with the evaluation ``gt_score`` in an
        evaluation split of a partial annotation."""
        info = self._raw_data_info(idx)
        if self.partially_annotated and self.is_evaluation_split:
            states = label_states(info['gt_label'],
                                  info.get('gt_label_negative'),
                                  len(self._metainfo['classes']),
                                  self.unlisted)
            info['gt_score'] = evaluation_target(states)
        return info

    @force_full_init
    def annotation_statistics(self) -> Dict[str, Union[int, float]]:
        """Counts of the annotation.

        Returns:
            dict: ``num_images``, ``num_classes``, ``num_positives``,
            ``num_negatives`` (listed or, with ``unlisted='negative'``,
            implied), ``num_unknown``, ``positives_per_image``,
            ``num_images_without_positive`` and ``num_images_without_label``
            (no positive and no negative: nothing is known of them).
        """
        return dict(self._loaded_statistics())

    def _loaded_statistics(self) -> Dict[str, Union[int, float]]:
        """The counts of the loaded annotation (made as it is loaded)."""
        if self._statistics is None:
            raise RuntimeError(f'{type(self).__name__}: the annotation is '
                               'not loaded yet (full_init).')
        return self._statistics
