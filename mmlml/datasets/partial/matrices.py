"""The label matrices of :class:`~mmlml.datasets.PartialLabelDataset`.

The wrapper keeps ``(N, C)`` matrices of its samples: the positives of the
wrapped dataset's annotation (``uint8`` 0/1), its unknown labels (boolean,
or None when there are none) and the observed labels (``int8`` 1, 0, -1).
The functions here read the first two from the wrapped dataset, at once or
sample by sample, and keep the rows of a split in place. The passes over a
whole matrix go in chunks of rows (:func:`row_steps`), so that their
temporaries stay small at any scale.
"""
import os
import os.path as osp
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
from mmpretrain.datasets import VOC

from ..label_states import label_lists
from .draws import check_binary_matrix, row_steps

__all__ = [
    'STOCK_VOC_WARNING', 'any_equal', 'select_samples', 'locate',
    'read_label_matrices', 'read_label_states_per_sample', 'image_names'
]

#: The warning for MMPretrain's ``VOC`` read sample by sample (the last
#: value of :func:`read_label_states_per_sample`).
STOCK_VOC_WARNING = (
    "PartialLabelDataset wraps MMPretrain's VOC: a class that an image "
    'holds only as difficult objects is a negative here, while '
    "MMPretrain's VOC metrics ignore it by default. Wrap "
    "VOCMultiLabel(difficult='negative' | 'unknown' | 'positive') instead "
    'to make one choice for both.')


def any_equal(matrix: np.ndarray, value) -> bool:
    """Whether any entry of ``matrix`` equals ``value`` (in chunks)."""
    steps = row_steps(matrix)
    return any(
        bool((matrix[start:start + steps.step] == value).any())
        for start in steps)


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
    step = row_steps(matrix).step
    for start in range(0, num, step):
        stop = min(start + step, num)
        matrix[start:stop] = matrix[rows[start:stop]]
    if matrix.flags.owndata and matrix.flags.c_contiguous:
        matrix.resize((num, ) + matrix.shape[1:], refcheck=False)
        return matrix
    return matrix[:num].copy()


def select_samples(
    indices: np.ndarray, full: np.ndarray, unknown: Optional[np.ndarray],
    observed: np.ndarray
) -> Tuple[np.ndarray, Optional[np.ndarray], np.ndarray]:
    """Keep the rows ``indices`` (sorted, distinct) of the matrices of all
    samples: the positives ``full``, the ``unknown`` labels (or None) and
    the ``observed`` labels.

    The rows are selected in place: the matrices are consumed, so pass only
    arrays that nothing else holds (those of :func:`read_label_matrices`,
    :func:`read_label_states_per_sample` and the label generators).

    Returns:
        tuple: The three matrices of the selected rows, in the same order.
    """
    full = _select_rows(full, indices)
    if unknown is not None:
        unknown = _select_rows(unknown, indices)
    return full, unknown, _select_rows(observed, indices)


def _own(matrix: np.ndarray) -> np.ndarray:
    """``matrix``, or a copy of it if it is a view or read-only (the rows
    of the matrices are selected in place)."""
    if matrix.flags.owndata and matrix.flags.writeable:
        return matrix
    return matrix.copy()


def locate(dataset: Any, inner_idx: int) -> Tuple[Any, int]:
    """The dataset whose pipeline makes sample ``inner_idx`` of ``dataset``,
    and its index there (MMEngine's ``ConcatDataset`` has no pipeline of
    its own: look through it to the part)."""
    while getattr(dataset, 'pipeline', None) is None and hasattr(
            dataset, 'datasets'):
        part, inner_idx = dataset._get_ori_dataset_idx(inner_idx)
        dataset = dataset.datasets[part]
    return dataset, inner_idx


def read_label_matrices(
        dataset: Any, num_samples: int,
        num_classes: int) -> Tuple[np.ndarray, Optional[np.ndarray]]:
    """Read the annotation of a dataset with ``get_label_matrices``
    (:class:`~mmlml.datasets.CustomMultiLabelDataset` and the benchmark
    datasets, :class:`~mmlml.datasets.SyntheticShapes`) at once.

    ``get_label_matrices()`` returns the ``(N, C)`` positives (0/1) and the
    ``(N, C)`` boolean unknown labels or None, as new arrays that the
    caller owns (a view or a read-only array is copied here).

    Args:
        dataset: The wrapped dataset.
        num_samples (int): Its number of samples ``N``.
        num_classes (int): Its number of classes ``C``.

    Returns:
        tuple: The ``(N, C)`` ``uint8`` matrix of positives and the
        ``(N, C)`` boolean matrix of unknown labels, None if there are
        none. Both are arrays of their own.

    Raises:
        ValueError: A matrix has another shape, the positives hold values
            other than 0 and 1, or the unknown labels are not boolean.
    """
    full, unknown = dataset.get_label_matrices()
    desc = f'get_label_matrices() of {type(dataset).__name__}'
    full = _own(np.asarray(full))
    expected = (num_samples, num_classes)
    if full.shape != expected:
        raise ValueError(
            f'The positives of {desc} have shape {full.shape}; expected '
            f'{expected}.')
    if full.dtype != np.uint8:
        full = check_binary_matrix(full, 'positives').astype(np.uint8)
    if unknown is not None:
        unknown = np.asarray(unknown)
        if unknown.shape != expected or unknown.dtype != np.bool_:
            raise ValueError(
                f'The unknown labels of {desc} must be a boolean matrix '
                f'of shape {expected}, but got {unknown.dtype} of shape '
                f'{unknown.shape}.')
        unknown = _own(unknown) if any_equal(unknown, True) else None
    return full, unknown


def _check_cat_ids(cat_ids: Any, sample: int, num_classes: int) -> None:
    """Refuse category ids that are not a flat list of integers in
    ``[0, num_classes)``, naming the sample."""
    cat_ids = np.asarray(cat_ids)
    valid = cat_ids.ndim <= 1 and (
        cat_ids.size == 0 or np.issubdtype(cat_ids.dtype, np.integer)
        and 0 <= cat_ids.min() and cat_ids.max() < num_classes)
    if not valid:
        raise ValueError(
            f'Sample {sample} of the wrapped dataset has category ids '
            f'{cat_ids.tolist()}; they must be a flat list of integers in '
            f'[0, {num_classes}) (a float or a string is not truncated or '
            'parsed).')


def _label_lists_one_by_one(lists: list) -> Tuple[np.ndarray, np.ndarray]:
    """The compressed sparse rows of checked category ids, each converted
    on its own (ids that :func:`label_lists` leaves to the caller, such as
    ``[True, 2]``, which ``np.asarray`` reads as integers)."""
    arrays = [np.asarray(ids).reshape(-1).astype(np.int64) for ids in lists]
    indptr = np.zeros(len(arrays) + 1, dtype=np.int64)
    np.cumsum([len(a) for a in arrays], out=indptr[1:])
    return indptr, np.concatenate(arrays)


def _sample_reader(part: Any) -> Tuple[str, Any]:
    """How the labels of a sample of ``part`` are read: ``('states',
    get_label_states)``, or the category ids: ``(kind, get_cat_ids)`` or
    the ``gt_label`` of ``get_data_info``, kind ``'stock_voc'`` for
    MMPretrain's ``VOC`` and ``'ids'`` otherwise."""
    if hasattr(part, 'get_label_states'):
        return 'states', part.get_label_states
    kind = 'stock_voc' if isinstance(part, VOC) else 'ids'
    if hasattr(part, 'get_cat_ids'):
        return kind, part.get_cat_ids
    return kind, lambda idx: part.get_data_info(idx)['gt_label']


def read_label_states_per_sample(
        dataset: Any, num_samples: int,
        num_classes: int) -> Tuple[np.ndarray, Optional[np.ndarray], bool]:
    """Read the annotation as :func:`read_label_matrices` does, one sample
    at a time.

    A dataset (or part of a ``ConcatDataset``) with ``get_label_states``
    gives the states of each sample (1 positive, 0 unknown, -1 negative);
    any other dataset is fully labelled and gives its positives through
    ``get_cat_ids`` or the ``gt_label`` of ``get_data_info``.

    Only the reading goes sample by sample: the category ids of all samples
    are checked at once (:func:`~mmlml.datasets.label_states.label_lists`),
    the states a chunk of samples at a time, and the per-sample check runs
    only to name the first bad sample.

    Returns:
        tuple: The positives and the unknown labels, as
        :func:`read_label_matrices` returns them, and whether a sample came
        from MMPretrain's ``VOC`` itself (without ``get_label_states``),
        whose difficult-only classes are read as negatives here.

    Raises:
        ValueError: The states of a sample have another shape, or its
            category ids are not a flat list of integers in ``[0, C)``.
    """
    full = np.zeros((num_samples, num_classes), dtype=np.uint8)
    unknown = None
    stock_voc = False
    id_samples: List[int] = []
    id_lists: List[np.ndarray] = []
    state_samples: List[int] = []
    state_rows: List[np.ndarray] = []

    def flush_states():
        nonlocal unknown
        rows = np.asarray(state_samples, dtype=np.int64)
        states = np.stack(state_rows)
        full[rows] = states == 1
        is_unknown = states == 0
        if is_unknown.any():
            if unknown is None:
                unknown = np.zeros(full.shape, dtype=bool)
            unknown[rows] = is_unknown
        state_samples.clear()
        state_rows.clear()

    def flush_ids():
        csr = label_lists(id_lists, num_classes)
        if csr is None:  # name the first bad sample, or read them one by one
            for sample, cat_ids in zip(id_samples, id_lists):
                _check_cat_ids(cat_ids, sample, num_classes)
            csr = _label_lists_one_by_one(id_lists)
        indptr, indices = csr
        full[
            np.repeat(np.asarray(id_samples, dtype=np.int64), np.diff(indptr)),
            indices] = 1
        id_samples.clear()
        id_lists.clear()

    step = row_steps(full).step
    # Without a ConcatDataset every sample is the dataset's own.
    whole = getattr(dataset, 'pipeline',
                    None) is not None or not hasattr(dataset, 'datasets')
    readers: Dict[int, Any] = {}
    for i in range(num_samples):
        part, j = (dataset, i) if whole else locate(dataset, i)
        reader = readers.get(id(part))
        if reader is None:
            reader = readers[id(part)] = _sample_reader(part)
        kind, read = reader
        if kind == 'states':
            states = np.asarray(read(j))
            if states.shape != (num_classes, ):
                if id_lists:  # an earlier bad sample is named first
                    flush_ids()
                raise ValueError(
                    f'Sample {i} of the wrapped dataset has label states '
                    f'of shape {states.shape}; expected ({num_classes},).')
            state_samples.append(i)
            state_rows.append(states)
            if len(state_rows) == step:
                flush_states()
            continue
        stock_voc |= kind == 'stock_voc'
        id_lists.append(read(j))
        id_samples.append(i)
        if len(id_lists) == step:
            flush_ids()
    if state_rows:
        flush_states()
    if id_lists:
        flush_ids()
    return full, unknown, stock_voc


def image_names(dataset: Any, num_samples: int) -> List[str]:
    """The file name of each sample of ``dataset`` (text label files name
    their images this way)."""
    names = []
    for i in range(num_samples):
        path = dataset.get_data_info(i).get('img_path')
        if path is None:
            raise ValueError(
                'A text `label_file` names images by file name, but '
                f'sample {i} of the wrapped dataset has no `img_path`.')
        names.append(osp.basename(os.fspath(path)))
    return names
