"""A dataset wrapper that turns a fully labelled dataset into a partial one."""
import copy
import logging
import numbers
import os
import os.path as osp
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

import numpy as np
from mmengine.dataset.base_dataset import force_full_init
from mmengine.logging import print_log

from mmlml.registry import DATASETS
from .partial_labels import (check_mode_ratio, check_seed, make_partial_labels,
                             split_train_val)

__all__ = ['PartialLabelDataset', 'load_label_file']

# Rows converted and checked at a time when reading a label file (about
# 16 M labels, so a float64 file is never copied whole).
_LABELS_PER_CHUNK = 1 << 24


def _first_bad(mask: np.ndarray, block: np.ndarray, start: int) -> str:
    """Describe the first entry of ``block`` where ``mask`` is True."""
    row, col = np.argwhere(mask)[0]
    return f'row {start + row}, class {col}: {block[row, col]!r}'


def load_label_file(path: Union[str, os.PathLike], num_samples: int,
                    num_classes: int, dataset_desc: str) -> np.ndarray:
    """Read a matrix of observed labels from an ``.npy`` file.

    The file holds one ``(num_samples, num_classes)`` array in mmlml's
    encoding: 1 (observed positive), 0 (unannotated) and -1 (observed
    negative). Any integer or boolean dtype is accepted, and a floating
    dtype if it holds exactly these values (Cole et al.'s label files are
    ``float64``). The file is memory-mapped and converted in chunks, so only
    the ``int8`` result is ever held in memory.

    Args:
        path (str or PathLike): The ``.npy`` file.
        num_samples (int): The expected number of rows.
        num_classes (int): The expected number of columns.
        dataset_desc (str): What the rows must align with, for error
            messages.

    Returns:
        np.ndarray: The ``(num_samples, num_classes)`` ``int8`` matrix.

    Raises:
        FileNotFoundError: The file does not exist.
        TypeError: The array's dtype is not integer, boolean or floating.
        ValueError: The file is no ``.npy`` array, has another shape, or
            holds non-finite values or values other than -1, 0 and 1.
    """
    name = f'`label_file` {os.fspath(path)!r}'
    if not osp.isfile(path):
        raise FileNotFoundError(
            f'{name} does not exist (relative paths are relative to the '
            f'working directory {os.getcwd()!r}).')
    try:
        array = np.load(path, mmap_mode='r', allow_pickle=False)
    except (ValueError, OSError) as error:
        raise ValueError(f'{name} is not a readable .npy file holding one '
                         f'numeric array: {error}') from error
    if not isinstance(array, np.ndarray):
        if hasattr(array, 'close'):
            array.close()
        raise ValueError(f'{name} must be an .npy file holding one array, '
                         f'but it is an archive ({type(array).__name__}).')
    expected = (num_samples, num_classes)
    if array.shape != expected:
        raise ValueError(
            f'{name} holds an array of shape {array.shape}, but '
            f'{dataset_desc} needs an N x C = {num_samples} x {num_classes} '
            'matrix: one row per sample of the wrapped dataset, in its '
            'order (all samples, before the train/val split), and one '
            'column per class.')
    is_float = np.issubdtype(array.dtype, np.floating)
    if not (is_float or np.issubdtype(array.dtype, np.integer)
            or np.issubdtype(array.dtype, np.bool_)):
        raise TypeError(f'{name} must hold integers -1, 0 and 1, but its '
                        f'dtype is {array.dtype}.')
    labels = np.empty(expected, dtype=np.int8)
    step = max(1, _LABELS_PER_CHUNK // max(1, num_classes))
    for start in range(0, num_samples, step):
        block = np.asarray(array[start:start + step])
        if is_float:
            bad = ~np.isfinite(block)
            if bad.any():
                raise ValueError(f'{name} holds non-finite values, e.g. at '
                                 f'{_first_bad(bad, block, start)}.')
        bad = (block != -1) & (block != 0) & (block != 1)
        if bad.any():
            raise ValueError(
                f'{name} must hold only -1 (observed negative), 0 '
                '(unannotated) and 1 (observed positive), but got e.g. at '
                f'{_first_bad(bad, block, start)}.')
        labels[start:start + step] = block
    del array
    return labels


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
    - ``'file'``: the observed labels are read from ``label_file`` instead
      of being generated (``ratio`` must be None and ``seed`` is unused).

    The file of the ``'file'`` mode is an ``.npy`` file holding an ``(N,
    C)`` matrix in the same encoding (1, 0, -1), one row per sample of the
    wrapped dataset in its order: all ``N`` samples, before ``split``
    selects its rows, so the training and validation splits of one file
    are the same as for generated labels. Any integer or boolean dtype is
    read, and a floating dtype holding exactly these values; the matrix is
    kept as ``int8``. This is the layout of the observed-label files of
    Cole et al. (``formatted_train_labels_obs.npy``, 0/1 ``float64``, made
    over the whole official training set before their 80/20 split) when the
    wrapped dataset lists the images in Cole et al.'s order (that of their
    ``formatted_train_images.npy``), and of the files written by
    ``tools/pseudo_label.py``. The
    file's observed positives need not be positives of the full labels
    (pseudo-labels can be wrong): the statistics count the observed
    positives that are not, i.e. the precision of the file's positives.

    A sample is made in one place: :meth:`get_data_info` takes the wrapped
    dataset's annotation of the sample, replaces its labels and sets its
    ``sample_idx``, and :meth:`__getitem__` runs the wrapped dataset's
    pipeline (:attr:`pipeline`) on it, so the full labels of a training
    sample never enter the pipeline. A training sample (``split='train'`` or
    None, or ``split='val'`` with ``val_labels='observed'``) carries the
    observed labels in its ``DataSample``: ``gt_score`` is the float vector
    of the three states (which MMPretrain's heads stack into the loss
    target) and ``gt_label`` the indices of the observed positives (which
    ``ClassBalancedDataset`` and the one-hot fallbacks use). A validation
    sample with ``val_labels='clean'`` carries the full labels as a plain
    ``gt_label`` and no ``gt_score`` set by the wrapper, so MMPretrain's
    metrics evaluate it unchanged (any other field of the wrapped
    annotation, e.g. a ``gt_score`` that the wrapped dataset itself emits
    for evaluation, is passed through). In both cases the metainfo
    ``sample_idx`` is the index in this wrapper (``0 .. len - 1``), the key
    of per-sample state. :attr:`full_labels` and :meth:`get_full_label`
    keep the full labels of training samples for diagnostics.

    Label statistics (images, classes, positives per image before and after,
    fraction of positives kept, observed labels that contradict the full
    labels) are logged once by :meth:`full_init` and returned by
    :meth:`statistics`.

    Args:
        dataset (dict or Dataset): The fully labelled dataset to wrap, as a
            config dict (built with ``DATASETS``) or an instance, with a
            ``pipeline`` (any MMEngine ``BaseDataset``), or MMEngine's
            ``ConcatDataset`` of such datasets (each sample then goes
            through the pipeline of its part).
        mode (str): ``'single_positive'``, ``'ratio'``, ``'full'`` or
            ``'file'``. Defaults to ``'single_positive'``.
        ratio (float, optional): The missing ratio :math:`r` in [0, 1] of the
            ``'ratio'`` mode; must be None in the other modes.
            Defaults to None.
        seed (int): The seed of the label generation, an integer (never
            None: every worker and rank must draw the same labels); unused
            in the ``'file'`` mode. Defaults to 1200, the seed of Cole et
            al.
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
        label_file (str or PathLike, optional): The ``.npy`` file of the
            observed labels of every sample of the wrapped dataset, required
            in the ``'file'`` mode and forbidden in the others. A relative
            path is relative to the working directory. Defaults to None.

    Examples:
        >>> train = dict(
        ...     type='PartialLabelDataset',
        ...     dataset=dict(type='MultiLabelDataset', ann_file='ann.json',
        ...                  pipeline=[...]),
        ...     mode='single_positive',
        ...     split='train')
        >>> # The same images with labels from a file (e.g. pseudo-labels).
        >>> train = dict(train, mode='file', label_file='labels.npy')
    """

    MODES = ('single_positive', 'ratio', 'full', 'file')
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
                 lazy_init: bool = False,
                 label_file: Optional[Union[str, os.PathLike]] = None):
        check_mode_ratio(mode, ratio, modes=self.MODES)
        if mode == 'file' and label_file is None:
            raise ValueError("`label_file` is required in the 'file' mode: "
                             'the .npy file of the observed labels.')
        if mode != 'file' and label_file is not None:
            raise ValueError(
                f'`label_file` is read only in the \'file\' mode, but got '
                f'label_file={label_file!r} with mode={mode!r}: set '
                "mode='file' to train on the file's labels.")
        if label_file is not None and not isinstance(label_file,
                                                     (str, os.PathLike)):
            raise TypeError('`label_file` must be a path, but got '
                            f'{label_file!r} of type '
                            f'{type(label_file).__name__}.')
        check_seed(seed)
        check_seed(split_seed, 'split_seed')
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
        has_pipeline = (
            hasattr(dataset, 'pipeline') or hasattr(dataset, 'datasets'))
        if not (has_pipeline and hasattr(dataset, 'get_data_info')
                and hasattr(dataset, 'metainfo')):
            raise TypeError(
                '`dataset` must be a config dict or a dataset with '
                '`get_data_info`, `pipeline` and `metainfo` (e.g. a '
                "MultiLabelDataset, or MMEngine's ConcatDataset of such "
                f'datasets), but got {type(dataset)}.')
        self.dataset = dataset
        self.pipeline = getattr(dataset, 'pipeline', None)
        self.mode = mode
        self.ratio = ratio
        self.seed = seed
        self.label_file = None if label_file is None \
            else os.fspath(label_file)
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

    def _locate(self, inner_idx: int) -> Tuple[Any, int]:
        """The dataset whose pipeline makes sample ``inner_idx`` of the
        wrapped dataset, and its index there (MMEngine's ``ConcatDataset``
        has no pipeline of its own: look through it to the part)."""
        dataset = self.dataset
        while getattr(dataset, 'pipeline', None) is None and hasattr(
                dataset, 'datasets'):
            part, inner_idx = dataset._get_ori_dataset_idx(inner_idx)
            dataset = dataset.datasets[part]
        return dataset, inner_idx

    def full_init(self) -> None:
        """Read the full labels, generate (or read) the observed ones and
        split."""
        if self._fully_initialized:
            return
        if hasattr(self.dataset, 'full_init'):
            self.dataset.full_init()

        num_samples = len(self.dataset)
        full = np.zeros((num_samples, self.num_classes), dtype=np.uint8)
        for i in range(num_samples):
            cat_ids = np.asarray(self._inner_cat_ids(i)).reshape(-1)
            if cat_ids.size and not (np.issubdtype(cat_ids.dtype, np.integer)
                                     and cat_ids.min() >= 0
                                     and cat_ids.max() < self.num_classes):
                raise ValueError(
                    f'Sample {i} of the wrapped dataset has category ids '
                    f'{cat_ids.tolist()}; they must be integers in '
                    f'[0, {self.num_classes}).')
            full[i, cat_ids.astype(np.int64)] = 1

        # Generate over all samples first, then split (Cole et al.'s order).
        if self.mode == 'file':
            observed = load_label_file(
                self.label_file, num_samples, self.num_classes,
                f'the wrapped dataset ({type(self.dataset).__name__} with '
                f'{num_samples} samples and {self.num_classes} classes)')
        elif self.mode == 'full':
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
        if isinstance(idx, bool) or not isinstance(idx, numbers.Integral):
            raise TypeError('PartialLabelDataset indices must be integers, '
                            f'got {idx!r} of type {type(idx).__name__}.')
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
        """Get the annotation of the ``idx``-th sample, the input of the
        pipeline.

        A copy of the wrapped dataset's annotation with ``sample_idx`` set
        to ``idx``, ``gt_label`` set to the positives the sample carries
        (see :meth:`get_cat_ids`) and, for samples with observed labels,
        ``gt_score`` set to the ``float32`` vector of the three states (a
        ``gt_score`` of the wrapped annotation is kept only for clean
        validation samples).

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
            part, _ = self._locate(int(self._indices[info['sample_idx']]))
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
        """Label statistics of the selected samples.

        Returns:
            dict: ``num_images``, ``num_classes``, ``num_positives`` (full
            labels), ``num_observed_positives``, ``num_observed_negatives``,
            ``num_unannotated``, ``positives_per_image``,
            ``observed_positives_per_image``, ``kept_fraction`` (observed
            positives that are full-label positives / full positives),
            ``num_false_observed_positives`` (observed positives that are
            not full-label positives), ``observed_positive_precision``
            (the fraction of observed positives that are full-label
            positives, None without observed positives),
            ``num_false_observed_negatives`` (observed negatives that are
            full-label positives), ``num_images_without_positive`` (in the
            full labels), and the ``mode``, ``ratio``, ``split`` and
            ``label_file``. The generated modes never contradict the full
            labels; the ``'file'`` mode may.
        """
        full = self._full_labels
        observed = self._observed_labels
        num_images = int(full.shape[0])
        num_pos = int(full.sum(dtype=np.int64))
        num_obs_pos = int((observed == 1).sum())
        num_obs_neg = int((observed == -1).sum())
        num_unknown = int((observed == 0).sum())
        num_false_pos = int(((observed == 1) & (full == 0)).sum())
        num_false_neg = int(((observed == -1) & (full == 1)).sum())
        num_true_pos = num_obs_pos - num_false_pos
        precision = num_true_pos / num_obs_pos if num_obs_pos else None
        no_positive = int((self._full_labels.max(axis=1) == 0).sum()) \
            if self.num_classes else num_images
        return dict(
            mode=self.mode,
            ratio=self.ratio,
            split=self.split,
            label_file=self.label_file,
            num_images=num_images,
            num_classes=self.num_classes,
            num_positives=num_pos,
            num_observed_positives=num_obs_pos,
            num_observed_negatives=num_obs_neg,
            num_unannotated=num_unknown,
            positives_per_image=num_pos / num_images if num_images else 0.,
            observed_positives_per_image=(num_obs_pos /
                                          num_images if num_images else 0.),
            kept_fraction=num_true_pos / num_pos if num_pos else 0.,
            num_false_observed_positives=num_false_pos,
            observed_positive_precision=precision,
            num_false_observed_negatives=num_false_neg,
            num_images_without_positive=no_positive)

    def _log_statistics(self) -> None:
        """Log :meth:`statistics` once, in the style of a dataset table."""
        stats = self.statistics()
        if self.mode == 'file':
            setting = f'file {self.label_file}'
        elif self.ratio is not None:
            setting = f'{self.mode} r={self.ratio}'
        else:
            setting = self.mode
        split = 'all' if self.split is None else self.split
        if not self.uses_observed_labels:
            split += ' (clean labels)'
        contradictions = ''
        if (self.mode == 'file' or stats['num_false_observed_positives']
                or stats['num_false_observed_negatives']):
            precision = stats['observed_positive_precision']
            precision = 'n/a' if precision is None \
                else f'{100 * precision:.1f}%'
            contradictions = (
                ' Against the full labels: '
                f'{stats["num_false_observed_positives"]} observed positives '
                f'are not positives (precision {precision}), '
                f'{stats["num_false_observed_negatives"]} observed negatives '
                'are positives.')
        print_log(
            f'PartialLabelDataset [{setting}, split {split}]: '
            f'{stats["num_images"]} images, {stats["num_classes"]} classes, '
            f'positives {stats["num_positives"]} -> '
            f'{stats["num_observed_positives"]} '
            f'({100 * stats["kept_fraction"]:.1f}% kept), per image '
            f'{stats["positives_per_image"]:.2f} -> '
            f'{stats["observed_positives_per_image"]:.2f}, observed '
            f'negatives {stats["num_observed_negatives"]}, images without '
            f'positive {stats["num_images_without_positive"]}.'
            f'{contradictions}',
            logger='current')

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
