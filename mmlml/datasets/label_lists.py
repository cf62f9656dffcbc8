"""The label lists of many samples as compressed sparse rows: row ``i`` of
``(indptr, indices)`` is ``indices[indptr[i]:indptr[i + 1]]``, the class
indices of sample ``i``. A dataset keeps the lists of its positives and of
its observed negatives this way (:class:`LabelLists`), for
:func:`~mmlml.datasets.label_states.label_matrices`; the functions here
build such rows and keep those of a subset of the samples.
"""
import numbers
from typing import NamedTuple, Sequence, Tuple, Union, cast

import numpy as np

__all__ = [
    'LabelLists', 'compact_indices', 'row_pointers', 'take_rows', 'subset_rows'
]


class LabelLists(NamedTuple):
    """Every sample's label lists as compressed sparse rows (see
    :func:`~mmlml.datasets.label_states.label_matrices`)."""
    pos_indptr: np.ndarray
    pos_indices: np.ndarray
    neg_indptr: np.ndarray
    neg_indices: np.ndarray


def compact_indices(flat: np.ndarray, num_classes: int) -> np.ndarray:
    """Class indices in the smallest integer type that holds them."""
    dtype = np.int16 if num_classes <= np.iinfo(np.int16).max else np.int32
    return flat.astype(dtype)


def row_pointers(lengths: np.ndarray) -> np.ndarray:
    """Row pointers (``int64``, one more than rows) of rows of ``lengths``."""
    indptr = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    return indptr


def take_rows(indptr: np.ndarray, indices: np.ndarray,
              rows: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """The compressed sparse rows ``rows`` (any order, repeats allowed)."""
    starts = indptr[rows]
    lengths = indptr[rows + 1] - starts
    new_indptr = row_pointers(lengths)
    gather = np.arange(new_indptr[-1], dtype=np.int64)
    gather += np.repeat(starts - new_indptr[:-1], lengths)
    return new_indptr, indices[gather]


def subset_rows(indices: Union[int, Sequence[int]], length: int) -> np.ndarray:
    """The rows MMEngine's ``get_subset_(indices)`` keeps of ``length``
    rows: the first (``indices >= 0``) or last (``< 0``) ``abs(indices)``
    for an int, else the listed rows (negative ones from the end)."""
    if isinstance(indices, numbers.Integral):
        indices = int(indices)
        if indices >= 0:
            return np.arange(min(indices, length), dtype=np.int64)
        return np.arange(max(0, length + indices), length, dtype=np.int64)
    rows = np.asarray(
        list(cast(Sequence[int], indices)), dtype=np.int64).reshape(-1)
    return np.where(rows < 0, rows + length, rows)
