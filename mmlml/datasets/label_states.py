"""The two label encodings that meet in a partial-label dataset.

A *training* target uses mmlml's encoding (Zhou et al.): 1 observed
positive, 0 unknown (unannotated), -1 observed negative. MMPretrain's
metrics read an *evaluation* ``gt_score`` in another one: 1 positive, 0
negative, -1 ignored (VOC "difficult"). The functions here build the first
from an annotation and translate it into the second, so that nothing in the
training encoding ever reaches an evaluator.
"""
from typing import Optional, Sequence, Tuple

import numpy as np

__all__ = [
    'POSITIVE', 'UNKNOWN', 'NEGATIVE', 'UNLISTED', 'EVAL_UNKNOWN',
    'check_label_indices', 'label_states', 'label_lists', 'label_matrices',
    'annotation_states', 'evaluation_target'
]

#: The states of mmlml's training encoding.
POSITIVE, UNKNOWN, NEGATIVE = 1, 0, -1
#: What a class listed neither as positive nor as negative is.
UNLISTED = ('negative', 'unknown')
#: How an evaluation target treats an unknown label.
EVAL_UNKNOWN = ('ignore', 'negative')


def check_label_indices(indices, num_classes: int, where: str,
                        key: str) -> np.ndarray:
    """Check a list of class indices and return it as ``int64`` array.

    Args:
        indices (Sequence[int] | np.ndarray): The class indices.
        num_classes (int): The number of classes.
        where (str): The annotation entry, for error messages (e.g. ``"entry
            3 of 'ann.json'"``).
        key (str): The key that holds them (``'gt_label'``...).

    Returns:
        np.ndarray: The indices, ``int64``.

    Raises:
        ValueError: They are not integers in ``[0, num_classes)`` (``True``
            and a nested list included), or repeat.
    """
    message = (f'{where}: `{key}` must be a list of class indices, integers '
               f'in [0, {num_classes}), but got {_listed(indices)}.')
    if isinstance(indices, (list, tuple)) and any(
            isinstance(c, (bool, np.bool_)) for c in indices):
        raise ValueError(message)  # numpy would read True as class 1
    try:
        array = np.asarray(indices if indices is not None else [])
    except (ValueError, OverflowError, TypeError):  # nested, ragged lists
        raise ValueError(message) from None
    if array.size == 0:
        return np.zeros(0, dtype=np.int64)
    if array.ndim != 1 or not (np.issubdtype(array.dtype, np.integer) and
                               array.min() >= 0 and array.max() < num_classes):
        raise ValueError(message)
    array = array.astype(np.int64)
    if np.unique(array).size != array.size:
        raise ValueError(f'{where}: `{key}` lists a class twice: '
                         f'{array.tolist()}.')
    return array


def _listed(indices) -> str:
    """``indices`` as an error message quotes them (a list's items as
    written, at most 120 characters)."""
    if isinstance(indices, np.ndarray):
        indices = indices.tolist()
    text = repr(indices)
    return text if len(text) <= 120 else text[:120] + '...'


def label_states(positives: Sequence[int],
                 negatives: Optional[Sequence[int]],
                 num_classes: int,
                 unlisted: str = 'negative') -> np.ndarray:
    """The training-encoding vector of one annotated sample.

    Args:
        positives (Sequence[int]): The indices of the observed positives.
        negatives (Sequence[int], optional): The indices of the observed
            negatives, or None.
        num_classes (int): The number of classes.
        unlisted (str): The state of a class in neither list:
            ``'negative'`` (a fully labelled annotation, MMPretrain's
            meaning of ``gt_label``) or ``'unknown'``.

    Returns:
        np.ndarray: A ``(num_classes,)`` ``int8`` vector of 1, 0 and -1.
    """
    fill = NEGATIVE if unlisted == 'negative' else UNKNOWN
    states = np.full(num_classes, fill, dtype=np.int8)
    if negatives is not None:
        states[np.asarray(negatives, dtype=np.int64)] = NEGATIVE
    states[np.asarray(positives, dtype=np.int64)] = POSITIVE
    return states


def label_lists(lists: Sequence,
                num_classes: int) -> Optional[Tuple[np.ndarray, np.ndarray]]:
    """The class indices of many samples as compressed sparse rows, checked
    at once instead of one sample at a time.

    Each item is a list of Python or numpy integers (what ``get_cat_ids``
    returns), or anything ``np.asarray`` makes a flat integer array of.
    The element types are checked on the whole concatenation and the range
    with one reduction, so reading a million samples costs one pass over
    their indices, not a million small reductions.

    Args:
        lists (Sequence): One sequence of class indices per sample.
        num_classes (int): The number of classes ``C``.

    Returns:
        Tuple[np.ndarray, np.ndarray] or None: ``indptr`` (``(N + 1,)``)
        and ``indices`` (``int64``), as :func:`label_matrices` reads them;
        None if some item is not a flat sequence of integers in
        ``[0, C)`` (a float, a bool, a string, a nested list), for the
        caller to find and name the first such sample.
    """
    flat = []
    lengths = np.empty(len(lists), dtype=np.int64)
    for k, ids in enumerate(lists):
        if type(ids) is not list:
            ids = np.asarray(ids)
            if ids.ndim > 1 or ids.size and not np.issubdtype(
                    ids.dtype, np.integer):
                return None
            ids = ids.reshape(-1).tolist()
        lengths[k] = len(ids)
        flat.extend(ids)
    if not all(
            t is not bool and issubclass(t, (int, np.integer))
            for t in set(map(type, flat))):
        return None
    try:
        indices = np.array(flat, dtype=np.int64)
    except OverflowError:  # beyond int64: out of range anyway
        return None
    if indices.size and (indices.min() < 0 or indices.max() >= num_classes):
        return None
    indptr = np.zeros(len(lists) + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    return indptr, indices


#: Entries of a label matrix written per step by :func:`label_matrices`.
_CHUNK_ENTRIES = 1 << 22


def _scatter_rows(matrix: np.ndarray, indptr: np.ndarray, indices: np.ndarray,
                  value) -> None:
    """Set ``matrix[i, indices[indptr[i]:indptr[i + 1]]] = value`` for every
    row ``i``, in chunks of rows (``matrix`` is C-contiguous)."""
    num_rows, num_classes = matrix.shape
    flat = matrix.reshape(-1)
    step = max(1, _CHUNK_ENTRIES // max(1, num_classes))
    for start in range(0, num_rows, step):
        stop = min(start + step, num_rows)
        lo, hi = int(indptr[start]), int(indptr[stop])
        if lo == hi:
            continue
        rows = np.repeat(
            np.arange(start, stop, dtype=np.int64),
            np.diff(indptr[start:stop + 1]))
        rows *= num_classes
        rows += indices[lo:hi]
        flat[rows] = value


def label_matrices(
        pos_indptr: np.ndarray,
        pos_indices: np.ndarray,
        neg_indptr: Optional[np.ndarray],
        neg_indices: Optional[np.ndarray],
        num_classes: int,
        unlisted: str = 'negative') -> Tuple[np.ndarray, Optional[np.ndarray]]:
    """The annotation of many samples at once, from their label lists.

    The lists are compressed sparse rows: sample ``i``'s positives are
    ``pos_indices[pos_indptr[i]:pos_indptr[i + 1]]`` and its observed
    negatives ``neg_indices[neg_indptr[i]:neg_indptr[i + 1]]``, class
    indices in ``[0, num_classes)`` (not checked here). Row ``i`` holds the
    same labels as :func:`label_states` of these lists, split in two
    matrices: ``states == 1`` is ``positives[i] == 1`` and ``states == 0``
    is ``unknown[i]``; every other label is a negative.

    Args:
        pos_indptr (np.ndarray): ``(N + 1,)`` row pointers of the positives.
        pos_indices (np.ndarray): The positives' class indices.
        neg_indptr (np.ndarray, optional): ``(N + 1,)`` row pointers of the
            observed negatives, or None (no list).
        neg_indices (np.ndarray, optional): Their class indices, or None.
        num_classes (int): The number of classes ``C``.
        unlisted (str): The state of a class in neither list:
            ``'negative'`` or ``'unknown'``, as in :func:`label_states`.

    Returns:
        Tuple[np.ndarray, np.ndarray or None]: The ``(N, C)`` ``uint8``
        matrix of the positives (1) and the ``(N, C)`` boolean matrix of the
        unknown labels, None if no label is unknown (always with
        ``unlisted='negative'``).
    """
    num_rows = len(pos_indptr) - 1
    shape = (num_rows, num_classes)
    positives = np.zeros(shape, dtype=np.uint8)
    _scatter_rows(positives, pos_indptr, pos_indices, 1)
    if unlisted != 'unknown':
        return positives, None
    num_listed = len(pos_indices) + (0 if neg_indices is None else
                                     len(neg_indices))
    unknown = np.ones(shape, dtype=bool)
    _scatter_rows(unknown, pos_indptr, pos_indices, False)
    if neg_indptr is not None and neg_indices is not None:
        _scatter_rows(unknown, neg_indptr, neg_indices, False)
    # Fewer listed labels than entries leave some unknown; otherwise look.
    if num_listed >= unknown.size and not unknown.any():
        return positives, None
    return positives, unknown


def annotation_states(full: np.ndarray,
                      unknown: Optional[np.ndarray]) -> np.ndarray:
    """The training-encoding states (1, 0, -1) of the matrices of
    :func:`label_matrices`: positives ``full`` (0/1) and ``unknown`` labels
    (boolean, or None), every other label a negative.

    Returns:
        np.ndarray: A new ``int8`` array of the shape of ``full``, made
        without temporaries of its size.
    """
    states = np.asarray(full).astype(np.int8)
    states *= 2
    states -= 1
    if unknown is not None:
        np.copyto(states, 0, where=unknown)
    return states


def evaluation_target(states: np.ndarray,
                      unknown: str = 'ignore') -> np.ndarray:
    """Translate training-encoding labels into MMPretrain's evaluation
    ``gt_score``.

    =============  ============================  ======================
    training       meaning                       evaluation ``gt_score``
    =============  ============================  ======================
    1              positive                      1
    -1             negative                      0
    0              unknown                       -1 (ignored), or 0 with
                                                 ``unknown='negative'``
    =============  ============================  ======================

    Args:
        states (np.ndarray): Labels in the training encoding, any shape.
        unknown (str): ``'ignore'`` (MMPretrain's metrics skip the label:
            mAP and F1 over known labels only, OpenImages' protocol) or
            ``'negative'`` (counted as a negative: the "assume negative"
            evaluation of Cole et al.'s observed validation set).

    Returns:
        np.ndarray: The ``float32`` evaluation target.
    """
    if unknown not in EVAL_UNKNOWN:
        raise ValueError(f'`unknown` must be one of {EVAL_UNKNOWN}, but got '
                         f'{unknown!r}.')
    target = np.zeros(np.shape(states), dtype=np.float32)
    target[states == POSITIVE] = 1
    if unknown == 'ignore':
        target[states == UNKNOWN] = -1
    return target
