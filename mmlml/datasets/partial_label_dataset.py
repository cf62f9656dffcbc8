"""A dataset wrapper that turns a fully labelled dataset into a partial one."""
import copy
import logging
from typing import Any, Dict, List, Optional, Union

import numpy as np
import torch
from mmengine.dataset.base_dataset import force_full_init
from mmengine.logging import print_log

from mmlml.registry import DATASETS
from .partial_labels import (_check_mode_ratio, make_partial_labels,
                             split_train_val)

__all__ = ['PartialLabelDataset']


@DATASETS.register_module()
class PartialLabelDataset:
    """A wrapper that hides labels of a fully labelled multi-label dataset.

    The wrapped dataset must be fully labelled and expose ``get_cat_ids``
    (the indices of the positives of a sample) and ``metainfo['classes']``,
    as MMPretrain's ``MultiLabelDataset`` and ``VOC`` do; a dataset
    without ``get_cat_ids`` (MMEngine's ``ConcatDataset``) is read through
    the ``gt_label`` of ``get_data_info``. Its full ``(N, C)`` label matrix
    is read once this way (no image is loaded) and the observed labels are
    generated over all of its ``N`` samples, deterministically from
    ``seed``; then ``split`` selects the training or validation rows of the
    split of :func:`~mmlml.datasets.split_train_val`. This is the order of
    Cole et al. (CVPR 2021): generate over the official training set, then
    hold out 20% of it for validation. Everything is computed in
    :meth:`full_init`, so every dataloader worker and every rank sees the
    same labels.

    The observed labels follow mmlml's convention: 1 for an observed
    positive, 0 for an unannotated label and -1 for an observed negative.
    The modes are:

    - ``'single_positive'``: one positive per image, chosen exactly as in
      Cole et al.'s generator (see :func:`make_partial_labels`), all other
      labels unannotated.
    - ``'ratio'``: :math:`\\lfloor n (1 - r) \\rfloor + 1` of the :math:`n`
      positives of each image, with :math:`r` = ``ratio``, all other labels
      unannotated (Zhang et al.'s missing-ratio protocol).
    - ``'full'``: every positive observed and every other label an observed
      negative (-1): the fully labelled oracle.

    A training sample (``split='train'`` or None, or ``split='val'`` with
    ``val_labels='observed'``) carries the observed labels in its
    ``DataSample``: ``gt_score`` is the float vector of the three states
    (which MMPretrain's heads stack into the loss target) and ``gt_label``
    the indices of the observed positives (which ``ClassBalancedDataset``
    and the one-hot fallbacks use). A validation sample with
    ``val_labels='clean'`` carries the full labels as a plain ``gt_label``
    and no ``gt_score`` set by the wrapper, so MMPretrain's metrics evaluate
    it unchanged (any other field of the wrapped sample, e.g. a
    ``gt_score`` that the wrapped dataset itself emits for evaluation, is
    passed through). In both cases the metainfo ``sample_idx`` is set to
    the index in this wrapper (``0 .. len - 1``), the key of per-sample
    state. The full labels of training samples never enter the
    ``DataSample``; :attr:`full_labels` and :meth:`get_full_label` keep them
    for diagnostics.

    Label statistics (images, classes, positives per image before and after,
    fraction of positives kept) are logged once by :meth:`full_init` and
    returned by :meth:`statistics`.

    Args:
        dataset (dict or Dataset): The fully labelled dataset to wrap, as a
            config dict (built with ``DATASETS``) or an instance.
        mode (str): ``'single_positive'``, ``'ratio'`` or ``'full'``.
            Defaults to ``'single_positive'``.
        ratio (float, optional): The missing ratio :math:`r` in [0, 1] of the
            ``'ratio'`` mode; must be None in the other modes.
            Defaults to None.
        seed (int): The seed of the label generation. Defaults to 1200, the
            seed of Cole et al.
        split (str, optional): ``'train'``, ``'val'`` or None (all samples).
            Defaults to None.
        val_frac (float): The fraction of samples in the validation split.
            Defaults to 0.2.
        split_seed (int): The seed of the train/validation split.
            Defaults to 1200.
        val_labels (str): The labels of the ``'val'`` split: ``'clean'``
            (the full labels, Cole et al.'s default) or ``'observed'`` (the
            partial labels, like the training split). Defaults to
            ``'clean'``.
        lazy_init (bool): Whether to defer reading the labels until
            :meth:`full_init` (called by the first access otherwise).
            Defaults to False.

    Examples:
        >>> train = dict(
        ...     type='PartialLabelDataset',
        ...     dataset=dict(type='MultiLabelDataset', ann_file='ann.json',
        ...                  pipeline=[...]),
        ...     mode='single_positive',
        ...     split='train')
    """

    MODES = ('single_positive', 'ratio', 'full')
    SPLITS = ('train', 'val')
    VAL_LABELS = ('clean', 'observed')

    def __init__(self,
                 dataset: Union[dict, Any],
                 mode: str = 'single_positive',
                 ratio: Optional[float] = None,
                 seed: int = 1200,
                 split: Optional[str] = None,
                 val_frac: float = 0.2,
                 split_seed: int = 1200,
                 val_labels: str = 'clean',
                 lazy_init: bool = False):
        if mode not in self.MODES:
            raise ValueError(f'`mode` must be one of {self.MODES}, but got '
                             f'{mode!r}.')
        if mode == 'full':
            if ratio is not None:
                raise ValueError("`ratio` must be None in the 'full' mode, "
                                 f'but got {ratio!r}.')
        else:
            _check_mode_ratio(mode, ratio)
        if split is not None and split not in self.SPLITS:
            raise ValueError(f'`split` must be one of {self.SPLITS} or None, '
                             f'but got {split!r}.')
        if val_labels not in self.VAL_LABELS:
            raise ValueError(f'`val_labels` must be one of {self.VAL_LABELS}, '
                             f'but got {val_labels!r}.')
        if split is not None:
            # Fail at construction, not at the first access.
            split_train_val(0, val_frac, split_seed)

        if isinstance(dataset, dict):
            dataset = DATASETS.build(dataset)
        has_labels = (
            hasattr(dataset, 'get_cat_ids')
            or hasattr(dataset, 'get_data_info'))
        if not (has_labels and hasattr(dataset, '__getitem__')
                and hasattr(dataset, 'metainfo')):
            raise TypeError(
                '`dataset` must be a config dict or a dataset with '
                '`get_cat_ids` (or `get_data_info`), `__getitem__` and '
                '`metainfo` (e.g. a MultiLabelDataset), but got '
                f'{type(dataset)}.')
        self.dataset = dataset
        self.mode = mode
        self.ratio = ratio
        self.seed = seed
        self.split = split
        self.val_frac = val_frac
        self.split_seed = split_seed
        self.val_labels = val_labels
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

    @property
    def uses_observed_labels(self) -> bool:
        """bool: Whether the samples carry the observed (partial) labels
        rather than the clean full labels."""
        return self.split != 'val' or self.val_labels == 'observed'

    def full_init(self) -> None:
        """Read the full labels, generate the observed ones and split."""
        if self._fully_initialized:
            return
        if hasattr(self.dataset, 'full_init'):
            self.dataset.full_init()

        num_samples = len(self.dataset)
        full = np.zeros((num_samples, self.num_classes), dtype=np.uint8)
        for i in range(num_samples):
            cat_ids = np.asarray(self._inner_cat_ids(i), dtype=np.int64)
            if cat_ids.size and (cat_ids.min() < 0
                                 or cat_ids.max() >= self.num_classes):
                raise ValueError(
                    f'Sample {i} of the wrapped dataset has category ids '
                    f'{cat_ids.tolist()} outside [0, {self.num_classes}).')
            full[i, cat_ids] = 1

        # Generate over all samples first, then split (Cole et al.'s order).
        if self.mode == 'full':
            observed = np.where(full == 1, 1, -1).astype(np.int8)
        else:
            observed = make_partial_labels(
                full, self.mode, ratio=self.ratio,
                seed=self.seed).astype(np.int8)

        if self.split is None:
            indices = np.arange(num_samples, dtype=np.int64)
        else:
            train_idx, val_idx = split_train_val(num_samples, self.val_frac,
                                                 self.split_seed)
            indices = train_idx if self.split == 'train' else val_idx

        self._indices = indices
        self._full_labels = full[indices]
        self._observed_labels = observed[indices]
        self._fully_initialized = True
        self._log_statistics()

    def _inner_cat_ids(self, inner_idx: int) -> List[int]:
        """The positives of a sample of the wrapped dataset, from its
        ``get_cat_ids`` or else from the ``gt_label`` of its
        ``get_data_info`` (MMEngine's ``ConcatDataset`` has only the
        latter)."""
        if hasattr(self.dataset, 'get_cat_ids'):
            return self.dataset.get_cat_ids(inner_idx)
        return self.dataset.get_data_info(inner_idx)['gt_label']

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
    def observed_labels(self) -> np.ndarray:
        """np.ndarray: The observed labels of the selected samples, an
        ``(len(self), C)`` ``int8`` matrix of 1 (observed positive), 0
        (unannotated) and -1 (observed negative)."""
        return self._observed_labels

    def _check_index(self, idx: int) -> int:
        """Turn ``idx`` into a non-negative Python int or raise."""
        length = len(self._indices)
        idx = int(idx)
        if not -length <= idx < length:
            raise IndexError(f'Index {idx} out of range for a '
                             f'PartialLabelDataset of length {length}.')
        return idx + length if idx < 0 else idx

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
        """Get the annotation of the ``idx``-th sample.

        The wrapped dataset's annotation, with ``sample_idx`` set to
        ``idx``, ``gt_label`` set to the positives the sample carries (see
        :meth:`get_cat_ids`) and, for samples with observed labels,
        ``gt_score`` set to the ``float32`` vector of the three states.

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
        if self.uses_observed_labels:
            info['gt_score'] = self._observed_labels[idx].astype(np.float32)
        return info

    def __getitem__(self, idx: int) -> dict:
        """Get the ``idx``-th sample through the wrapped dataset's pipeline,
        with the labels and ``sample_idx`` of this wrapper.

        Args:
            idx (int): The index in this wrapper.

        Returns:
            dict: The packed sample, ``inputs`` and ``data_samples``.
        """
        if not self._fully_initialized:
            print_log(
                'Please call `full_init` method manually to accelerate '
                'the speed.',
                logger='current',
                level=logging.WARNING)
            self.full_init()

        idx = self._check_index(idx)
        data = self.dataset[int(self._indices[idx])]
        data_sample = data.get('data_samples', None) \
            if isinstance(data, dict) else None
        if data_sample is None or not hasattr(data_sample, 'set_gt_label'):
            raise TypeError(
                'PartialLabelDataset expects the wrapped pipeline to end '
                "with PackInputs (a dict with a DataSample in "
                f"'data_samples'), but got {type(data)}.")

        if self.uses_observed_labels:
            observed = self._observed_labels[idx]
            data_sample.set_gt_score(
                torch.from_numpy(observed.astype(np.float32)))
            data_sample.set_gt_label(
                torch.from_numpy(np.flatnonzero(observed == 1)))
        else:
            full = self._full_labels[idx]
            data_sample.set_gt_label(
                torch.from_numpy(np.flatnonzero(full == 1)))
            if 'num_classes' not in data_sample:
                data_sample.set_metainfo({'num_classes': self.num_classes})
        data_sample.set_metainfo({'sample_idx': idx})
        return data

    @force_full_init
    def __len__(self) -> int:
        return len(self._indices)

    @force_full_init
    def statistics(self) -> Dict[str, Union[int, float, str, None]]:
        """Label statistics of the selected samples.

        Returns:
            dict: ``num_images``, ``num_classes``, ``num_positives`` (full
            labels), ``num_observed_positives``, ``num_observed_negatives``,
            ``num_unannotated``, ``positives_per_image``,
            ``observed_positives_per_image``, ``kept_fraction`` (observed
            positives / full positives), ``num_images_without_positive``
            (in the full labels), and the ``mode``, ``ratio`` and
            ``split``.
        """
        num_images = int(self._full_labels.shape[0])
        num_pos = int(self._full_labels.sum(dtype=np.int64))
        num_obs_pos = int((self._observed_labels == 1).sum())
        num_obs_neg = int((self._observed_labels == -1).sum())
        num_unknown = int((self._observed_labels == 0).sum())
        no_positive = int((self._full_labels.max(axis=1) == 0).sum()) \
            if self.num_classes else num_images
        return dict(
            mode=self.mode,
            ratio=self.ratio,
            split=self.split,
            num_images=num_images,
            num_classes=self.num_classes,
            num_positives=num_pos,
            num_observed_positives=num_obs_pos,
            num_observed_negatives=num_obs_neg,
            num_unannotated=num_unknown,
            positives_per_image=num_pos / num_images if num_images else 0.,
            observed_positives_per_image=(num_obs_pos /
                                          num_images if num_images else 0.),
            kept_fraction=num_obs_pos / num_pos if num_pos else 0.,
            num_images_without_positive=no_positive)

    def _log_statistics(self) -> None:
        """Log :meth:`statistics` once, in the style of a dataset table."""
        stats = self.statistics()
        setting = self.mode if self.ratio is None \
            else f'{self.mode} r={self.ratio}'
        split = 'all' if self.split is None else self.split
        if not self.uses_observed_labels:
            split += ' (clean labels)'
        print_log(
            f'PartialLabelDataset [{setting}, split {split}]: '
            f'{stats["num_images"]} images, {stats["num_classes"]} classes, '
            f'positives {stats["num_positives"]} -> '
            f'{stats["num_observed_positives"]} '
            f'({100 * stats["kept_fraction"]:.1f}% kept), per image '
            f'{stats["positives_per_image"]:.2f} -> '
            f'{stats["observed_positives_per_image"]:.2f}, observed '
            f'negatives {stats["num_observed_negatives"]}, images without '
            f'positive {stats["num_images_without_positive"]}.',
            logger='current')

    def __repr__(self) -> str:
        head = f'Dataset {self.__class__.__name__}'
        body = [
            f'Mode: {self.mode}', f'Ratio: {self.ratio}',
            f'Split: {self.split}', f'Val labels: {self.val_labels}',
            f'Wrapped dataset: {type(self.dataset).__name__}'
        ]
        if self._fully_initialized:
            body.insert(0, f'Number of samples: {len(self)}')
        else:
            body.insert(0, "Haven't been initialized")
        return '\n'.join([head] + ['    ' + line for line in body])
