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
from typing import Any, List, Optional, Tuple

import numpy as np
from mmpretrain.datasets import VOC

from .partial_labels import check_binary_matrix

__all__ = [
    'STOCK_VOC_WARNING', 'row_steps', 'any_equal', 'select_samples', 'locate',
    'read_label_matrices', 'read_label_states_per_sample', 'image_names'
]

#: Entries of a label matrix handled per step by the chunked passes.
_CHUNK_ENTRIES = 1 << 22

#: The warning for MMPretrain's ``VOC`` read sample by sample (the last
#: value of :func:`read_label_states_per_sample`).
STOCK_VOC_WARNING = (
    "PartialLabelDataset wraps MMPretrain's VOC: a class that an image "
    'holds only as difficult objects is a negative here, while '
    "MMPretrain's VOC metrics ignore it by default. Wrap "
    "VOCMultiLabel(difficult='negative' | 'unknown' | 'positive') instead "
    'to make one choice for both.')


def row_steps(matrix: np.ndarray) -> range:
    """The first rows of the chunks of ``matrix``, about
    :data:`_CHUNK_ENTRIES` entries each (the step is the chunk's rows)."""
    num_rows, num_cols = matrix.shape
    return range(0, num_rows, max(1, _CHUNK_ENTRIES // max(1, num_cols)))


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


def read_label_states_per_sample(
        dataset: Any, num_samples: int,
        num_classes: int) -> Tuple[np.ndarray, Optional[np.ndarray], bool]:
    """Read the annotation as :func:`read_label_matrices` does, one sample
    at a time.

    A dataset (or part of a ``ConcatDataset``) with ``get_label_states``
    gives the states of each sample (1 positive, 0 unknown, -1 negative);
    any other dataset is fully labelled and gives its positives through
    ``get_cat_ids`` or the ``gt_label`` of ``get_data_info``.

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
    for i in range(num_samples):
        part, j = locate(dataset, i)
        stock_voc |= isinstance(part,
                                VOC) and not hasattr(part, 'get_label_states')
        if hasattr(part, 'get_label_states'):
            states = np.asarray(part.get_label_states(j))
            if states.shape != (num_classes, ):
                raise ValueError(
                    f'Sample {i} of the wrapped dataset has label states '
                    f'of shape {states.shape}; expected ({num_classes},).')
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
            and 0 <= cat_ids.min() and cat_ids.max() < num_classes)
        if not valid:
            raise ValueError(
                f'Sample {i} of the wrapped dataset has category ids '
                f'{cat_ids.tolist()}; they must be a flat list of '
                f'integers in [0, {num_classes}) (a float or a string is '
                'not truncated or parsed).')
        cat_ids = cat_ids.reshape(-1)
        full[i, cat_ids.astype(np.int64)] = 1
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
