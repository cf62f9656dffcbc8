"""A dataset wrapper that turns a fully labelled dataset into a partial one
(described in ``docs/partial_labels.md``)."""
import copy
import logging
import os
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

import numpy as np
from mmengine.dataset.base_dataset import force_full_init
from mmengine.logging import print_log

from mmlml.registry import DATASETS
from ..checks import check_annotation_files, check_index, check_packed_pipeline
from ..label_files import load_label_file
from ..label_states import annotation_states, evaluation_target
from .matrices import (STOCK_VOC_WARNING, any_equal, image_names, locate,
                       read_label_matrices, read_label_states_per_sample,
                       select_samples)
from .protocol import (MODES, SPLITS, VAL_LABELS, PartialLabelProtocol,
                       SampleSplit)
from .statistics import (no_positive_warning, partial_label_statistics,
                         statistics_summary)

__all__ = ['PartialLabelDataset', 'refuse_unexpected']

#: Arguments of the wrapped dataset that end up in the wrapper's config
#: when a config overrides a base config's dataset without ``_delete_``.
_INNER_DATASET_KEYS = ('ann_file', 'data_root', 'data_prefix', 'pipeline',
                       'metainfo', 'test_mode', 'filter_cfg', 'indices',
                       'serialize_data', 'max_refetch', 'num_samples',
                       'num_classes', 'img_size', 'image_list', 'label_dir',
                       'ann_format', 'difficult', 'unlisted', 'classes_file',
                       'image_set_path')


def refuse_unexpected(kwargs: dict) -> None:
    """Raise the ``TypeError`` of arguments that ``PartialLabelDataset``
    does not take, explaining the usual cause: a config that replaces a base
    config's dataset by a ``PartialLabelDataset`` without ``_delete_=True``,
    so that MMEngine merges the base dataset's arguments into the
    wrapper's."""
    names = ', '.join(sorted(map(repr, kwargs)))
    message = f'PartialLabelDataset got unexpected argument(s) {names}.'
    inner = sorted(set(kwargs) & set(_INNER_DATASET_KEYS))
    if inner:
        message += (
            f' {", ".join(map(repr, inner))} belong to the wrapped dataset. '
            'If a config replaces the `dataset` of a base config by a '
            'PartialLabelDataset, MMEngine merges the base dataset\'s '
            'arguments into the wrapper: write dataset=dict(_delete_=True, '
            "type='PartialLabelDataset', dataset=dict(...), ...) to "
            'replace it instead, and give these arguments to the inner '
            '`dataset`.')
    raise TypeError(message)


def _read_only(part: str, name: str, doc: str) -> property:
    """A read-only property that reads ``name`` of the wrapper's ``part``
    (its protocol or its sample split), documented by ``doc``."""
    return property(lambda self: getattr(getattr(self, part), name), doc=doc)


@DATASETS.register_module()
class PartialLabelDataset:
    """A wrapper that hides labels of a fully labelled multi-label dataset.

    The wrapped dataset's labels are read once in :meth:`full_init`, without
    loading any image: its ``(N, C)`` positives and, if its own annotation
    is partial (``get_label_states``: :class:`CustomMultiLabelDataset`,
    ``OpenImagesMultiLabel``, ``VOCMultiLabel`` with
    ``difficult='unknown'``), its observed negatives and unknown labels.
    The observed labels (1 observed positive, 0 unannotated, -1 observed
    negative) are generated over all ``N`` samples, deterministically from
    ``seed``, or read from ``label_file``; then ``split`` selects the
    training or validation rows of :func:`~mmlml.datasets.split_train_val`
    (Cole et al.'s order), so every dataloader worker and every rank sees
    the same labels (a wrapped dataset built for one such split,
    :class:`~mmlml.datasets.DigitCanvases`, checks it first through its
    ``check_train_val_split``). Training samples carry the observed labels;
    validation samples carry MMPretrain's evaluation encoding of the full
    labels (``val_labels='clean'``) or of the observed ones. Label
    statistics are logged once and returned by :meth:`statistics`.

    ``docs/partial_labels.md`` describes the modes, the label files, the
    two label encodings, the statistics and the configs.

    The arguments that fix the labels (``mode``, ``ratio``, ``seed``,
    ``label_file``) make :attr:`protocol`, a
    :class:`~mmlml.datasets.partial.protocol.PartialLabelProtocol`, and
    those that fix the samples and their labels (``split``, ``val_frac``,
    ``split_seed``, ``val_labels``, ``val_unknown``) :attr:`samples`, a
    :class:`~mmlml.datasets.partial.protocol.SampleSplit`: both are frozen
    and checked when they are built, before the wrapped dataset is; the
    wrapper's attributes of the same names read them.

    Args:
        dataset (dict or Dataset): The fully labelled dataset to wrap, as a
            config dict (built with ``DATASETS``) or an instance, with a
            ``pipeline`` (any MMEngine ``BaseDataset``), or MMEngine's
            ``ConcatDataset`` of such datasets (each sample then goes
            through the pipeline of its part). Its pipeline must contain
            ``PackInputs`` (or be empty, to read labels only), and no
            dataset of it may have a pickle ``ann_file`` (nor a YAML one
            read by MMEngine's loader): both are refused before the
            dataset is built (:func:`~mmlml.datasets.checks.\
check_annotation_files`).
        mode, ratio, seed, label_file: Which labels are observed: see
            :class:`~mmlml.datasets.partial.protocol.PartialLabelProtocol`
            (defaults ``'single_positive'``, None, 1200 and None). A
            relative ``label_file`` is relative to the working directory.
        split, val_frac, split_seed, val_labels, val_unknown: Which samples,
            and the labels the validation samples carry: see
            :class:`~mmlml.datasets.partial.protocol.SampleSplit`
            (defaults None, 0.2, 1200, ``'clean'`` and None).
        lazy_init (bool): Whether to defer reading the labels until
            :meth:`full_init` (called by the first access otherwise).
            Defaults to False.
        **unexpected: None is taken: any other argument raises a
            ``TypeError`` that names it and explains the usual cause
            (:func:`refuse_unexpected`).
    """

    MODES = MODES
    SPLITS = SPLITS
    VAL_LABELS = VAL_LABELS

    def __init__(self,
                 dataset: Union[dict, Any],
                 *,
                 mode: str = PartialLabelProtocol.mode,
                 ratio: Optional[float] = PartialLabelProtocol.ratio,
                 seed: int = PartialLabelProtocol.seed,
                 split: Optional[str] = SampleSplit.split,
                 val_frac: float = SampleSplit.val_frac,
                 split_seed: int = SampleSplit.split_seed,
                 val_labels: str = SampleSplit.val_labels,
                 lazy_init: bool = False,
                 label_file: Optional[Union[str, os.PathLike]] = (
                     PartialLabelProtocol.label_file),
                 val_unknown: Optional[str] = SampleSplit.val_unknown,
                 **unexpected):
        if unexpected:
            refuse_unexpected(unexpected)
        #: The labels kept and the samples selected, checked here once.
        self.protocol = PartialLabelProtocol(
            mode=mode, ratio=ratio, seed=seed, label_file=label_file)
        self.samples = SampleSplit(
            split=split,
            val_frac=val_frac,
            split_seed=split_seed,
            val_labels=val_labels,
            val_unknown=val_unknown)

        # Before the wrapped dataset reads its annotation file.
        check_annotation_files(dataset)
        if isinstance(dataset, dict):
            dataset = DATASETS.build(dataset)
        has_pipeline = (
            hasattr(dataset, 'pipeline') or hasattr(dataset, 'datasets'))
        if not (has_pipeline and hasattr(dataset, 'get_data_info')
                and hasattr(dataset, 'metainfo')):
            raise TypeError(
                '`dataset` must be a config dict or a dataset with '
                '`get_data_info`, `pipeline` and `metainfo` (e.g. a '
                "MultiLabelDataset, or MMEngine's ConcatDataset of such "
                f'datasets), but got {type(dataset)}.')
        check_packed_pipeline(dataset, 'PartialLabelDataset')
        self.dataset = dataset
        self.pipeline = getattr(dataset, 'pipeline', None)
        self._metainfo = self.dataset.metainfo
        classes = self._metainfo.get('classes', None)
        if classes is None:
            raise ValueError('The wrapped dataset must define '
                             "metainfo['classes'], but its metainfo is "
                             f'{self._metainfo}.')
        self.num_classes = len(classes)

        self._fully_initialized = False
        if not lazy_init:
            self.full_init()

    @property
    def metainfo(self) -> dict:
        """dict: A copy of the meta information of the wrapped dataset."""
        return copy.deepcopy(self._metainfo)

    # The arguments, read-only: the protocol and the split are fixed once
    # the labels are drawn.
    mode = _read_only('protocol', 'mode', 'str: The mode.')
    ratio = _read_only('protocol', 'ratio', 'float or None: The ratio.')
    seed = _read_only('protocol', 'seed', 'int: The generation seed.')
    label_file = _read_only('protocol', 'label_file',
                            "str or None: The label file of the 'file' mode.")
    split = _read_only('samples', 'split', 'str or None: The split.')
    val_frac = _read_only(
        'samples', 'val_frac',
        'float: The fraction of samples in the validation split.')
    split_seed = _read_only('samples', 'split_seed', 'int: The split seed.')
    val_labels = _read_only('samples', 'val_labels',
                            "str: The labels of the 'val' split.")
    val_unknown = _read_only(
        'samples', 'val_unknown',
        'str or None: The argument val_unknown (see eval_unknown).')

    def over_split(self, split: Optional[str]) -> 'PartialLabelDataset':
        """A wrapper of the same dataset with the same protocol (so the
        same observed labels) over another ``split`` of its samples
        (``None``: all of them), drawn with the same ``val_frac`` and
        ``split_seed``; ``val_labels`` and ``val_unknown`` at their
        defaults. The tools that score other rows than training use it."""
        return PartialLabelDataset(
            self.dataset,
            mode=self.mode,
            ratio=self.ratio,
            seed=self.seed,
            label_file=self.label_file,
            split=split,
            val_frac=self.val_frac,
            split_seed=self.split_seed)

    @property
    def uses_observed_labels(self) -> bool:
        """bool: Whether the samples carry the observed (partial) labels
        rather than the clean full labels."""
        return self.samples.uses_observed_labels

    @property
    def pipeline(self) -> Optional[Callable]:
        """The pipeline :meth:`__getitem__` runs on :meth:`get_data_info`:
        the wrapped dataset's, or None for a ``ConcatDataset`` (each sample
        then goes through its part's pipeline). It can be replaced, as
        MMPretrain's ``tools/visualization/browse_dataset.py`` does."""
        return self._pipeline

    @pipeline.setter
    def pipeline(self, pipeline: Optional[Callable]) -> None:
        self._pipeline = pipeline

    def full_init(self) -> None:
        """Read the full labels, generate (or read) the observed ones and
        split."""
        if self._fully_initialized:
            return
        if hasattr(self.dataset, 'full_init'):
            self.dataset.full_init()

        num_samples = len(self.dataset)
        full, unknown = self._read_annotation(num_samples)
        desc = (f'the wrapped dataset ({type(self.dataset).__name__} with '
                f'{num_samples} samples and {self.num_classes} classes)')
        if self.mode == 'full' and unknown is not None:
            raise ValueError(
                f"mode='full' observes every label of a fully labelled "
                f'dataset, but {int(unknown.sum())} labels of {desc} are '
                'unknown in its own annotation (e.g. OpenImages labels that '
                "nobody verified, VOC difficult objects with difficult="
                "'unknown'). Use mode='annotated' to train on the annotation "
                'as it is, its unknowns unannotated.')

        # Generate over all samples first, then split (Cole et al.'s order).
        if self.mode == 'file':
            observed = load_label_file(
                self.label_file,
                num_samples,
                self.num_classes,
                desc,
                image_names=lambda: image_names(self.dataset, num_samples))
        elif self.mode in ('full', 'annotated'):
            observed = annotation_states(full, unknown)
        else:
            observed = self.protocol.generate(full)

        # A dataset built for one split (DigitCanvases draws its validation
        # images from other digit scans) checks it is this one.
        check_split = getattr(self.dataset, 'check_train_val_split', None)
        if self.split is not None and check_split is not None:
            check_split(num_samples, self.val_frac, self.split_seed)
        indices = self.samples.indices(num_samples)

        # The matrices are this method's own: their rows are selected in
        # place.
        self._indices = indices
        self._full_labels, self._unknown, observed = select_samples(
            indices, full, unknown, observed)
        del full, unknown
        # The generators give 0/1 uint8: the same bytes as int8.
        self._observed_labels = observed.view(np.int8)
        del observed
        # How the targets of an observed validation split treat unknowns.
        self._eval_unknown = None
        if self.samples.observed_validation:
            self._eval_unknown = self.samples.eval_unknown(
                any_equal(self._observed_labels, -1))
        self._fully_initialized = True
        self._log_statistics()

    def _read_annotation(
            self, num_samples: int) -> Tuple[np.ndarray, Optional[np.ndarray]]:
        """Read the wrapped dataset's annotation: its ``(N, C)`` ``uint8``
        positives and ``(N, C)`` boolean unknown labels (None if there are
        none), new arrays. A wrapped dataset with ``get_label_matrices``
        gives them at once (:func:`read_label_matrices`), and so does a
        ``ConcatDataset`` of such datasets, part by part; any other is read
        sample by sample (:meth:`_read_annotation_per_sample`)."""
        parts = getattr(self.dataset, 'datasets', None)
        if parts is not None and parts and all(
                hasattr(part, 'get_label_matrices') for part in parts) \
                and sum(len(part) for part in parts) == num_samples:
            # A ConcatDataset of datasets that read at once: part by part.
            read = [
                read_label_matrices(part, len(part), self.num_classes)
                for part in parts
            ]
            full = np.concatenate([f for f, _ in read])
            if all(u is None for _, u in read):
                return full, None
            return full, np.concatenate([
                np.zeros(f.shape, dtype=bool) if u is None else u
                for f, u in read
            ])
        getter = getattr(self.dataset, 'get_label_matrices', None)
        if getter is None or parts is not None:
            return self._read_annotation_per_sample(num_samples)
        return read_label_matrices(self.dataset, num_samples, self.num_classes)

    def _read_annotation_per_sample(
            self, num_samples: int) -> Tuple[np.ndarray, Optional[np.ndarray]]:
        """Read the annotation as :meth:`_read_annotation` does, one sample
        at a time (:func:`read_label_states_per_sample`), warning if
        MMPretrain's ``VOC`` is wrapped."""
        full, unknown, stock_voc = read_label_states_per_sample(
            self.dataset, num_samples, self.num_classes)
        if stock_voc:
            print_log(
                STOCK_VOC_WARNING, logger='current', level=logging.WARNING)
        return full, unknown

    @property
    @force_full_init
    def indices(self) -> np.ndarray:
        """np.ndarray: The ``int64`` indices in the wrapped dataset of the
        selected samples, sorted."""
        return self._indices

    @property
    @force_full_init
    def full_labels(self) -> np.ndarray:
        """np.ndarray: The full labels of the selected samples, an
        ``(len(self), C)`` ``uint8`` matrix of 0 and 1."""
        return self._full_labels

    @property
    @force_full_init
    def annotation_unknown(self) -> Optional[np.ndarray]:
        """np.ndarray or None: The labels of the selected samples that the
        wrapped dataset's own annotation leaves unknown, an ``(len(self),
        C)`` boolean matrix, or None when it leaves none (a fully labelled
        annotation): with :attr:`full_labels`, the known labels that judge
        other labels (:func:`~.statistics.known_label_quality`)."""
        return self._unknown

    @property
    @force_full_init
    def observed_labels(self) -> np.ndarray:
        """np.ndarray: The observed labels of the selected samples, an
        ``(len(self), C)`` ``int8`` matrix of 1 (observed positive), 0
        (unannotated) and -1 (observed negative)."""
        return self._observed_labels

    def _check_index(self, idx: int) -> int:
        """Turn ``idx`` into a non-negative Python int or raise."""
        return check_index(idx, len(self._indices), 'PartialLabelDataset')

    @force_full_init
    def get_inner_index(self, idx: int) -> int:
        """Get the index in the wrapped dataset of the ``idx``-th sample.

        Args:
            idx (int): The index in this wrapper.

        Returns:
            int: The index in the wrapped dataset.
        """
        return int(self._indices[self._check_index(idx)])

    @force_full_init
    def get_full_label(self, idx: int) -> np.ndarray:
        """Get the full labels of a sample, for diagnostics only.

        Args:
            idx (int): The index in this wrapper.

        Returns:
            np.ndarray: A ``(C,)`` ``uint8`` vector of 0 and 1.
        """
        return self._full_labels[self._check_index(idx)].copy()

    @force_full_init
    def get_annotation(self, idx: int) -> np.ndarray:
        """Get the wrapped dataset's own labels of a sample.

        These are the full labels of a fully labelled dataset, and the
        annotation with its unknowns (OpenImages, VOC difficult objects with
        ``difficult='unknown'``) otherwise.

        Args:
            idx (int): The index in this wrapper.

        Returns:
            np.ndarray: A ``(C,)`` ``int8`` vector of 1 (positive), 0
            (unknown) and -1 (negative).
        """
        idx = self._check_index(idx)
        unknown = None if self._unknown is None else self._unknown[idx]
        return annotation_states(self._full_labels[idx], unknown)

    @property
    @force_full_init
    def annotation_has_unknowns(self) -> bool:
        """bool: Whether the wrapped dataset's own annotation of the
        selected samples has unknown labels (then :attr:`full_labels` are
        its positives, not complete labels)."""
        return self._unknown is not None

    @property
    @force_full_init
    def eval_unknown(self) -> Optional[str]:
        """str or None: How the evaluation targets of the validation split
        with ``val_labels='observed'`` treat unknown labels: ``'ignore'`` or
        ``'negative'`` (``val_unknown``, or its default); None for other
        splits."""
        return self._eval_unknown

    @force_full_init
    def get_observed_label(self, idx: int) -> np.ndarray:
        """Get the observed labels of a sample.

        Args:
            idx (int): The index in this wrapper.

        Returns:
            np.ndarray: A ``(C,)`` ``int8`` vector of 1, 0 and -1.
        """
        return self._observed_labels[self._check_index(idx)].copy()

    @force_full_init
    def get_cat_ids(self, idx: int) -> List[int]:
        """Get the positives that the ``idx``-th sample carries.

        These are the observed positives, or the full positives in the
        ``'val'`` split with ``val_labels='clean'``, so that
        ``ClassBalancedDataset`` can wrap this dataset.

        Args:
            idx (int): The index in this wrapper.

        Returns:
            List[int]: The category indices of the positives.
        """
        idx = self._check_index(idx)
        if self.uses_observed_labels:
            row = self._observed_labels[idx]
        else:
            row = self._full_labels[idx]
        return np.flatnonzero(row == 1).tolist()

    @force_full_init
    def get_data_info(self, idx: int) -> dict:
        """Get the annotation of the ``idx``-th sample, the input of the
        pipeline: a copy of the wrapped dataset's, with ``sample_idx`` set to
        ``idx``, ``gt_label`` to the positives the sample carries (see
        :meth:`get_cat_ids`) and ``gt_score`` to:

        - a training sample (``split`` 'train' or None): the ``float32``
          vector of the observed labels in the training encoding (1, 0,
          -1), the loss target;
        - a validation sample with ``val_labels='observed'``: the observed
          labels in MMPretrain's evaluation encoding (1 positive, 0
          negative, -1 ignored; unknown labels -1 or 0 as
          :attr:`eval_unknown` says);
        - a validation sample with ``val_labels='clean'``: the full
          annotation in the evaluation encoding if it has unknown labels
          (ignored), else nothing (``gt_label`` holds every positive, and a
          ``gt_score`` of the wrapped annotation is kept).

        Args:
            idx (int): The index in this wrapper.

        Returns:
            dict: The annotation.
        """
        idx = self._check_index(idx)
        info = copy.deepcopy(
            self.dataset.get_data_info(int(self._indices[idx])))
        info['sample_idx'] = idx
        info['gt_label'] = self.get_cat_ids(idx)
        if self.split != 'val':
            info['gt_score'] = self._observed_labels[idx].astype(np.float32)
        elif self._eval_unknown is not None:  # observed validation labels
            info['gt_score'] = evaluation_target(self._observed_labels[idx],
                                                 self._eval_unknown)
        elif self._unknown is not None:
            info['gt_score'] = evaluation_target(self.get_annotation(idx))
        return info

    def __getitem__(self, idx: int) -> dict:
        """Get the ``idx``-th sample: :meth:`get_data_info` through
        :attr:`pipeline`.

        Args:
            idx (int): The index in this wrapper.

        Returns:
            dict: The pipeline's output, ``inputs`` and ``data_samples``
            with PackInputs.
        """
        if not self._fully_initialized:
            print_log(
                'Please call `full_init` method manually to accelerate '
                'the speed.',
                logger='current',
                level=logging.WARNING)
            self.full_init()
        info = self.get_data_info(idx)
        pipeline = self.pipeline
        if pipeline is None:
            part, _ = locate(self.dataset,
                             int(self._indices[info['sample_idx']]))
            pipeline = part.pipeline
        data = pipeline(info)
        if data is None:
            raise RuntimeError(
                f'The pipeline of the wrapped dataset returned None for '
                f'sample {idx} ({info.get("img_path", "no img_path")}): '
                'PartialLabelDataset does not replace samples that fail to '
                'load, because the labels of each index are fixed. Check '
                'the image file and the pipeline.')
        return data

    @force_full_init
    def __len__(self) -> int:
        return len(self._indices)

    @force_full_init
    def statistics(self) -> Dict[str, Union[int, float, str, None]]:
        """Label statistics of the selected samples: the ``mode``,
        ``ratio``, ``split`` and ``label_file``, then the counts of
        :func:`partial_label_statistics` (positives before and after,
        observed labels that contradict the full labels...). The generated
        modes never contradict the full labels; the ``'file'`` mode may."""
        return dict(
            mode=self.mode,
            ratio=self.ratio,
            split=self.split,
            label_file=self.label_file,
            **partial_label_statistics(self._full_labels,
                                       self._observed_labels, self._unknown))

    def _log_statistics(self) -> None:
        """Log :meth:`statistics` once, in the style of a dataset table."""
        stats = self.statistics()
        split = 'all' if self.split is None else self.split
        if not self.uses_observed_labels:
            split += ' (clean labels)'
        elif self._eval_unknown is not None:
            split += f' (observed labels, unknown: {self._eval_unknown})'
        where = f'{self.protocol.describe()}, split {split}'
        print_log(statistics_summary(stats, where), logger='current')
        if (self.uses_observed_labels
                and stats['num_images_without_observed_positive']):
            print_log(
                no_positive_warning(stats, where),
                logger='current',
                level=logging.WARNING)

    def __repr__(self) -> str:
        head = f'Dataset {self.__class__.__name__}'
        body = [
            f'Mode: {self.mode}', f'Ratio: {self.ratio}',
            f'Split: {self.split}', f'Val labels: {self.val_labels}',
            f'Wrapped dataset: {type(self.dataset).__name__}'
        ]
        if self.label_file is not None:
            body.insert(2, f'Label file: {self.label_file}')
        if self._fully_initialized:
            body.insert(0, f'Number of samples: {len(self)}')
        else:
            body.insert(0, "Haven't been initialized")
        return '\n'.join([head] + ['    ' + line for line in body])
