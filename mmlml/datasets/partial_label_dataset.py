"""A dataset wrapper that turns a fully labelled dataset into a partial one."""
import copy
import logging
import os
import os.path as osp
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

import numpy as np
from mmengine.dataset.base_dataset import force_full_init
from mmengine.logging import print_log
from mmpretrain.datasets import VOC

from mmlml.registry import DATASETS
from .checks import check_index
from .label_files import load_label_file
from .label_states import EVAL_UNKNOWN, evaluation_target
from .partial_labels import (_check_binary_matrix, check_mode_ratio,
                             check_seed, make_partial_labels, split_train_val)

__all__ = ['PartialLabelDataset']


def _annotation_states(full: np.ndarray,
                       unknown: Optional[np.ndarray]) -> np.ndarray:
    """The training-encoding states (1, 0, -1) of positives ``full`` (0/1)
    and ``unknown`` labels, every other label a negative: a new ``int8``
    array, made without temporaries of its size."""
    states = np.asarray(full).astype(np.int8)
    states *= 2
    states -= 1
    if unknown is not None:
        np.copyto(states, 0, where=unknown)
    return states


#: Entries of a label matrix handled per step by the chunked passes.
_CHUNK_ENTRIES = 1 << 22


def _row_steps(matrix: np.ndarray) -> range:
    """The first rows of chunks of about :data:`_CHUNK_ENTRIES` entries."""
    num_rows, num_cols = matrix.shape
    return range(0, num_rows, max(1, _CHUNK_ENTRIES // max(1, num_cols)))


def _select_rows(matrix: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``matrix[rows]`` for sorted, distinct ``rows``, made in place.

    Row ``rows[j] >= j`` moves up to row ``j``, a chunk at a time (each
    chunk's sources lie at or after its destination and after every earlier
    destination), then the matrix is shrunk to ``len(rows)`` rows. The
    matrix is consumed: pass only an array that nothing else holds.
    """
    num = len(rows)
    if num == len(matrix):
        return matrix  # every row, in order
    step = _row_steps(matrix).step
    for start in range(0, num, step):
        stop = min(start + step, num)
        matrix[start:stop] = matrix[rows[start:stop]]
    if matrix.flags.owndata and matrix.flags.c_contiguous:
        matrix.resize((num, ) + matrix.shape[1:], refcheck=False)
        return matrix
    return matrix[:num].copy()


def _own(matrix: np.ndarray) -> np.ndarray:
    """``matrix``, or a copy of it if it is a view or read-only (the rows
    of the matrices of :meth:`PartialLabelDataset.full_init` are selected in
    place)."""
    if matrix.flags.owndata and matrix.flags.writeable:
        return matrix
    return matrix.copy()


def _any_equal(matrix: np.ndarray, value) -> bool:
    """Whether any entry of ``matrix`` equals ``value`` (in chunks)."""
    steps = _row_steps(matrix)
    return any(
        bool((matrix[start:start + steps.step] == value).any())
        for start in steps)


#: Arguments of the wrapped dataset that end up in the wrapper's config
#: when a config overrides a base config's dataset without ``_delete_``.
_INNER_DATASET_KEYS = ('ann_file', 'data_root', 'data_prefix', 'pipeline',
                       'metainfo', 'test_mode', 'filter_cfg', 'indices',
                       'serialize_data', 'max_refetch', 'num_samples',
                       'num_classes', 'img_size', 'image_list', 'label_dir',
                       'ann_format', 'difficult', 'unlisted', 'classes_file',
                       'image_set_path')


def _refuse_unexpected(kwargs: dict) -> None:
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


@DATASETS.register_module()
class PartialLabelDataset:
    """A wrapper that hides labels of a fully labelled multi-label dataset.

    The wrapped dataset must be fully labelled and expose ``get_cat_ids``
    (the indices of the positives of a sample) and ``metainfo['classes']``,
    as MMPretrain's ``MultiLabelDataset`` and ``VOC`` do; a dataset
    without ``get_cat_ids`` (MMEngine's ``ConcatDataset``) is read through
    the ``gt_label`` of ``get_data_info``. Its full ``(N, C)`` label matrix
    is read once, without loading any image: at once from
    ``get_label_matrices`` if the wrapped dataset has it
    (:class:`CustomMultiLabelDataset` and the benchmark datasets,
    :class:`SyntheticShapes`), else sample by sample this way. The observed
    labels are generated over all of its ``N`` samples, deterministically
    from ``seed``; then ``split`` selects the training or validation rows of
    the split of :func:`~mmlml.datasets.split_train_val` (in place: the
    matrices of all ``N`` samples are not kept). This is the order of Cole
    et al. (CVPR 2021): generate over the official training set, then hold
    out 20% of it for validation. Everything is computed in
    :meth:`full_init`, so every dataloader worker and every rank sees the
    same labels.

    The observed labels follow mmlml's convention: 1 for an observed
    positive, 0 for an unannotated label and -1 for an observed negative.
    The wrapped dataset's own annotation may itself be partial: a dataset
    with ``get_label_states`` (:class:`CustomMultiLabelDataset`,
    ``OpenImagesMultiLabel``, ``VOCMultiLabel`` with
    ``difficult='unknown'``) gives observed negatives and unknown labels;
    any other dataset is fully labelled (every non-positive a negative).
    The modes are:

    - ``'single_positive'``: one positive per image, chosen exactly as in
      Cole et al.'s generator (see :func:`make_partial_labels`), all other
      labels unannotated.
    - ``'ratio'``: :math:`\\lfloor n (1 - r) \\rfloor + 1` of the :math:`n`
      positives of each image, with :math:`r` = ``ratio``, all other labels
      unannotated (Zhang et al.'s missing-ratio protocol).
    - ``'full'``: every positive observed and every other label an observed
      negative (-1): the fully labelled oracle. An annotation with unknown
      labels is refused (use ``'annotated'``).
    - ``'annotated'``: the wrapped dataset's own annotation, as it is:
      its positives, its observed negatives (OpenImages' human-verified
      negatives) and its unknowns. On a fully labelled dataset this equals
      ``'full'``.
    - ``'file'``: the observed labels are read from ``label_file`` instead
      of being generated (``ratio`` must be None and ``seed`` is unused).

    The file of the ``'file'`` mode is either

    - an ``.npy`` file holding an ``(N, C)`` matrix in the same encoding
      (1, 0, -1), one row per sample of the wrapped dataset in its order:
      all ``N`` samples, before ``split`` selects its rows, so the training
      and validation splits of one file are the same as for generated
      labels. Any integer or boolean dtype is read, and a floating dtype
      holding exactly these values; the matrix is kept as ``int8``. This is
      the layout of the observed-label files of Cole et al.
      (``formatted_train_labels_obs.npy``, 0/1 ``float64``, made over the
      whole official training set before their 80/20 split) when the
      wrapped dataset lists the images in Cole et al.'s order (that of
      their ``formatted_train_images.npy``), and of the files written by
      ``tools/pseudo_label.py``; or
    - a ``.txt`` file with one line ``<file name>,<class indices>`` per
      image, matched to the samples by file name: Zhang et al.'s COCO
      files (``coco_train_0.75left.txt`` is r = 0.5, ``0.4left`` r = 0.8,
      ``singlelabel`` r = 1), see :func:`load_text_label_file`.

    The file's observed positives need not be positives of the full labels
    (pseudo-labels can be wrong): the statistics count the observed
    positives that are not, i.e. the precision of the file's positives.

    A sample is made in one place: :meth:`get_data_info` takes the wrapped
    dataset's annotation of the sample, replaces its labels and sets its
    ``sample_idx``, and :meth:`__getitem__` runs the wrapped dataset's
    pipeline (:attr:`pipeline`) on it, so the full labels of a training
    sample never enter the pipeline. Two label encodings meet here, and no
    sample that reaches an evaluator carries the training one:

    - A training sample (``split='train'`` or None) carries the observed
      labels in its ``DataSample``: ``gt_score`` is the float vector of the
      three training states (which MMPretrain's heads stack into the loss
      target) and ``gt_label`` the indices of the observed positives (which
      ``ClassBalancedDataset`` and the one-hot fallbacks use).
    - A validation sample carries MMPretrain's evaluation encoding (1
      positive, 0 negative, -1 ignored): with ``val_labels='clean'`` the
      full labels as a plain ``gt_label`` (and, if the annotation has
      unknowns, a ``gt_score`` that ignores them); with
      ``val_labels='observed'`` the observed positives as ``gt_label`` and
      a ``gt_score`` in which unknown labels are ignored or count as
      negatives (``val_unknown``). mAP and F1 are then computed over known
      labels only.

    The metainfo ``sample_idx`` is the index in this wrapper (``0 .. len -
    1``), the key of per-sample state. :attr:`full_labels` and
    :meth:`get_full_label` keep the full labels (the annotation's
    positives) of training samples for diagnostics, :meth:`get_annotation`
    the annotation with its unknowns.

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
        mode (str): ``'single_positive'``, ``'ratio'``, ``'full'``,
            ``'annotated'`` or ``'file'``. Defaults to
            ``'single_positive'``.
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
        label_file (str or PathLike, optional): The ``.npy`` or ``.txt``
            file of the observed labels of every sample of the wrapped
            dataset, required in the ``'file'`` mode and forbidden in the
            others. A relative path is relative to the working directory.
            Defaults to None.
        val_unknown (str, optional): How the evaluation targets of the
            ``'val'`` split with ``val_labels='observed'`` treat unknown
            labels: ``'ignore'`` (known labels only, OpenImages' protocol)
            or ``'negative'`` (Cole et al.'s observed validation set, which
            has no observed negative). None chooses ``'ignore'`` when the
            split has observed negatives and ``'negative'`` otherwise;
            ``'ignore'`` without any observed negative is refused (every
            predictor would score 100). Defaults to None.
        **kwargs: None is taken. Any other argument raises a ``TypeError``
            that names it; arguments of the wrapped dataset (``data_root``,
            ``ann_file``, ``pipeline``, ...) come from a config that
            replaced a base config's dataset without ``_delete_=True``,
            and the error says so.

    Examples:
        >>> train = dict(
        ...     type='PartialLabelDataset',
        ...     dataset=dict(type='MultiLabelDataset', ann_file='ann.json',
        ...                  pipeline=[...]),
        ...     mode='single_positive',
        ...     split='train')
        >>> # The same images with labels from a file (e.g. pseudo-labels).
        >>> train = dict(train, mode='file', label_file='labels.npy')
        >>> # Zhang et al.'s COCO file with 50% of the positives missing.
        >>> train = dict(train, mode='file',
        ...              label_file='data/coco/coco_train_0.75left.txt')
        >>> # OpenImages: its verified positives and negatives as they are.
        >>> train = dict(
        ...     type='PartialLabelDataset', mode='annotated', split='train',
        ...     dataset=dict(type='OpenImagesMultiLabel', ...))
    """

    MODES = ('single_positive', 'ratio', 'full', 'file', 'annotated')
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
                 label_file: Optional[Union[str, os.PathLike]] = None,
                 val_unknown: Optional[str] = None,
                 **kwargs):
        if kwargs:
            _refuse_unexpected(kwargs)
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
        seed = check_seed(seed)
        split_seed = check_seed(split_seed, 'split_seed')
        if split is not None and split not in self.SPLITS:
            raise ValueError(f'`split` must be one of {self.SPLITS} or None, '
                             f'but got {split!r}.')
        if val_labels not in self.VAL_LABELS:
            raise ValueError(f'`val_labels` must be one of {self.VAL_LABELS}, '
                             f'but got {val_labels!r}.')
        if val_unknown is not None and val_unknown not in EVAL_UNKNOWN:
            raise ValueError(f'`val_unknown` must be one of {EVAL_UNKNOWN} '
                             f'or None, but got {val_unknown!r}.')
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
        self.val_unknown = val_unknown
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
                image_names=lambda: self._image_names(num_samples))
        elif self.mode in ('full', 'annotated'):
            observed = _annotation_states(full, unknown)
        else:
            observed = make_partial_labels(
                full, self.mode, ratio=self.ratio, seed=self.seed)

        if self.split is None:
            indices = np.arange(num_samples, dtype=np.int64)
        else:
            train_idx, val_idx = split_train_val(num_samples, self.val_frac,
                                                 self.split_seed)
            indices = train_idx if self.split == 'train' else val_idx

        # The matrices are this method's own: select their rows in place.
        self._indices = indices
        self._full_labels = _select_rows(full, indices)
        del full
        self._unknown = None if unknown is None \
            else _select_rows(unknown, indices)
        del unknown
        # make_partial_labels gives 0/1 uint8: the same bytes as int8.
        self._observed_labels = _select_rows(observed, indices).view(np.int8)
        del observed
        self._eval_unknown = self._resolve_val_unknown()
        self._fully_initialized = True
        self._log_statistics()

    def _read_annotation(
            self, num_samples: int) -> Tuple[np.ndarray, Optional[np.ndarray]]:
        """Read the wrapped dataset's annotation: its positives, and its
        unknown labels if it has any.

        A wrapped dataset with ``get_label_matrices``
        (:class:`CustomMultiLabelDataset` and the benchmark datasets,
        :class:`SyntheticShapes`) gives them at once. Otherwise they are
        read sample by sample (:meth:`_read_annotation_per_sample`).

        ``get_label_matrices()`` returns the ``(N, C)`` positives (0/1) and
        the ``(N, C)`` boolean unknown labels or None, as new arrays that
        the caller owns: :meth:`full_init` selects their rows in place.

        Returns:
            tuple: The ``(N, C)`` ``uint8`` matrix of positives and the
            ``(N, C)`` boolean matrix of unknown labels, None if there are
            none. Both are new arrays.
        """
        getter = getattr(self.dataset, 'get_label_matrices', None)
        if getter is None or hasattr(self.dataset, 'datasets'):
            return self._read_annotation_per_sample(num_samples)
        full, unknown = getter()
        desc = f'get_label_matrices() of {type(self.dataset).__name__}'
        full = _own(np.asarray(full))
        expected = (num_samples, self.num_classes)
        if full.shape != expected:
            raise ValueError(
                f'The positives of {desc} have shape {full.shape}; expected '
                f'{expected}.')
        if full.dtype != np.uint8:
            full = _check_binary_matrix(full, 'positives').astype(np.uint8)
        if unknown is not None:
            unknown = np.asarray(unknown)
            if unknown.shape != expected or unknown.dtype != np.bool_:
                raise ValueError(
                    f'The unknown labels of {desc} must be a boolean matrix '
                    f'of shape {expected}, but got {unknown.dtype} of shape '
                    f'{unknown.shape}.')
            unknown = _own(unknown) if _any_equal(unknown, True) else None
        return full, unknown

    def _read_annotation_per_sample(
            self, num_samples: int) -> Tuple[np.ndarray, Optional[np.ndarray]]:
        """Read the annotation as :meth:`_read_annotation` does, one sample
        at a time.

        A dataset (or part of a ``ConcatDataset``) with ``get_label_states``
        gives the states of each sample (1 positive, 0 unknown, -1
        negative); any other dataset is fully labelled and gives its
        positives through ``get_cat_ids`` or the ``gt_label`` of
        ``get_data_info``.
        """
        full = np.zeros((num_samples, self.num_classes), dtype=np.uint8)
        unknown = None
        stock_voc = False
        for i in range(num_samples):
            part, j = self._locate(i)
            stock_voc |= isinstance(
                part, VOC) and not hasattr(part, 'get_label_states')
            if hasattr(part, 'get_label_states'):
                states = np.asarray(part.get_label_states(j))
                if states.shape != (self.num_classes, ):
                    raise ValueError(
                        f'Sample {i} of the wrapped dataset has label states '
                        f'of shape {states.shape}; expected '
                        f'({self.num_classes},).')
                full[i] = states == 1
                if (states == 0).any():
                    if unknown is None:
                        unknown = np.zeros(full.shape, dtype=bool)
                    unknown[i] = states == 0
                continue
            if hasattr(part, 'get_cat_ids'):
                cat_ids = part.get_cat_ids(j)
            else:
                cat_ids = part.get_data_info(j)['gt_label']
            cat_ids = np.asarray(cat_ids)
            valid = cat_ids.ndim <= 1 and (
                cat_ids.size == 0 or np.issubdtype(cat_ids.dtype, np.integer)
                and 0 <= cat_ids.min() and cat_ids.max() < self.num_classes)
            if not valid:
                raise ValueError(
                    f'Sample {i} of the wrapped dataset has category ids '
                    f'{cat_ids.tolist()}; they must be a flat list of '
                    f'integers in [0, {self.num_classes}) (a float or a '
                    'string is not truncated or parsed).')
            cat_ids = cat_ids.reshape(-1)
            full[i, cat_ids.astype(np.int64)] = 1
        if stock_voc:
            print_log(
                "PartialLabelDataset wraps MMPretrain's VOC: a class that an "
                'image holds only as difficult objects is a negative here, '
                "while MMPretrain's VOC metrics ignore it by default. Wrap "
                "VOCMultiLabel(difficult='negative' | 'unknown' | "
                "'positive') instead to make one choice for both.",
                logger='current',
                level=logging.WARNING)
        return full, unknown

    def _image_names(self, num_samples: int) -> List[str]:
        """The file name of each sample of the wrapped dataset (text label
        files name their images this way)."""
        names = []
        for i in range(num_samples):
            path = self.dataset.get_data_info(i).get('img_path')
            if path is None:
                raise ValueError(
                    'A text `label_file` names images by file name, but '
                    f'sample {i} of the wrapped dataset has no `img_path`.')
            names.append(osp.basename(os.fspath(path)))
        return names

    def _resolve_val_unknown(self) -> Optional[str]:
        """How the evaluation targets of an observed validation split treat
        unknown labels; None for other splits."""
        if self.split != 'val' or self.val_labels != 'observed':
            return None
        has_negative = _any_equal(self._observed_labels, -1)
        if self.val_unknown is None:
            return 'ignore' if has_negative else 'negative'
        if self.val_unknown == 'ignore' and not has_negative:
            raise ValueError(
                "val_unknown='ignore' evaluates on known labels only, but "
                'the observed labels of the validation split have no '
                'negative: every known label is a positive, so any predictor '
                "would score 100. Use val_unknown='negative' (unknown labels "
                "count as negatives, Cole et al.'s observed validation set), "
                "val_labels='clean', or labels with observed negatives.")
        return self.val_unknown

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
        return _annotation_states(self._full_labels[idx], unknown)

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
        pipeline.

        A copy of the wrapped dataset's annotation with ``sample_idx`` set
        to ``idx``, ``gt_label`` set to the positives the sample carries
        (see :meth:`get_cat_ids`) and ``gt_score`` set to:

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
        elif self.val_labels == 'observed':
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
            full labels), ``num_images_without_observed_positive``,
            ``num_annotated_unknown`` (labels unknown in the wrapped
            dataset's own annotation), and the ``mode``, ``ratio``,
            ``split`` and ``label_file``. The generated modes never
            contradict the full labels; the ``'file'`` mode may.
        """
        full = self._full_labels
        observed = self._observed_labels
        num_images = int(full.shape[0])
        num_pos = num_obs_pos = num_obs_neg = num_false_pos = 0
        num_false_neg = no_positive = no_observed = annotated_unknown = 0
        steps = _row_steps(full)
        for start in steps:
            rows = slice(start, start + steps.step)
            block, obs = full[rows], observed[rows]
            num_pos += int(np.count_nonzero(block))
            positive, negative = obs == 1, obs == -1
            num_obs_pos += int(np.count_nonzero(positive))
            num_obs_neg += int(np.count_nonzero(negative))
            positive &= block == 0
            num_false_pos += int(np.count_nonzero(positive))
            negative &= block == 1
            num_false_neg += int(np.count_nonzero(negative))
            if self.num_classes:
                no_positive += int(np.count_nonzero(block.max(axis=1) == 0))
                no_observed += int(np.count_nonzero(obs.max(axis=1) < 1))
            if self._unknown is not None:
                annotated_unknown += int(np.count_nonzero(self._unknown[rows]))
        if not self.num_classes:
            no_positive = no_observed = num_images
        num_unknown = num_images * self.num_classes - num_obs_pos - \
            num_obs_neg
        num_true_pos = num_obs_pos - num_false_pos
        precision = num_true_pos / num_obs_pos if num_obs_pos else None
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
            num_images_without_positive=no_positive,
            num_images_without_observed_positive=no_observed,
            num_annotated_unknown=annotated_unknown)

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
        elif self._eval_unknown is not None:
            split += f' (observed labels, unknown: {self._eval_unknown})'
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
            f'positive {stats["num_images_without_positive"]}, unknown in '
            f'the annotation {stats["num_annotated_unknown"]}.'
            f'{contradictions}',
            logger='current')
        no_positive = stats['num_images_without_observed_positive']
        if self.uses_observed_labels and no_positive:
            print_log(
                f'PartialLabelDataset [{setting}, split {split}]: '
                f'{no_positive} images carry no observed positive '
                f'({stats["num_images_without_positive"]} have no positive '
                'in the annotation at all, e.g. NUS-WIDE rows without a '
                'concept or VOC images whose objects are all difficult). '
                'They stay in the set: a loss that assumes negatives trains '
                'them as all-negative images, one that ignores unknowns '
                'takes nothing from them.',
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
