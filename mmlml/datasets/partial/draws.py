"""The random draws of the partial-label generators and the chunked passes
over label matrices: pure numpy, without images.

:class:`~mmlml.datasets.partial.protocol.PartialLabelProtocol` decides how
many positives each row keeps (its mode and ratio); the functions here draw
which ones, exactly as the per-row loops of the reference generators do
(numpy's legacy :class:`numpy.random.RandomState`, whose stream is frozen
across numpy versions, so that a seed always gives the same annotations),
but with the positives of all rows found at once and the draws of a chunk
of rows made in one call. The passes over a whole matrix go in chunks of
rows (:func:`row_steps`), so that their temporaries stay small at any
scale.
"""
from typing import Optional, Tuple

import numpy as np

__all__ = [
    'row_steps', 'check_binary_matrix', 'draw_single_positive',
    'draw_kept_positives'
]

#: Entries of a label matrix handled per step by the chunked passes, so
#: that their temporaries stay small (a few MiB) at any scale.
_CHUNK_ENTRIES = 1 << 22


def row_steps(matrix: np.ndarray) -> range:
    """The first rows of the chunks of ``matrix``, about
    :data:`_CHUNK_ENTRIES` entries each (the step is the chunk's rows)."""
    num_rows, num_cols = matrix.shape
    return range(0, num_rows, max(1, _CHUNK_ENTRIES // max(1, num_cols)))


def check_binary_matrix(full: np.ndarray, name: str = 'full') -> np.ndarray:
    """Check that ``full`` is a 2-D matrix holding only 0 and 1.

    The values are checked in chunks of rows, so the check needs no
    temporary the size of the matrix: an integer matrix is checked by the
    maximum of its values seen as unsigned integers (a negative value is a
    large one), a floating or complex one by comparing every entry with 0
    and 1 (NaN fails both); a boolean matrix holds only 0 and 1.

    Args:
        full (array-like): The label matrix.
        name (str): The argument name used in error messages.
            Defaults to ``'full'``.

    Returns:
        np.ndarray: ``full`` as a numpy array (not copied when possible).
    """
    full = np.asarray(full)
    if full.ndim != 2:
        raise ValueError(f'`{name}` must be a 2-D (num_samples, '
                         f'num_classes) matrix, but got shape {full.shape}.')
    if not (np.issubdtype(full.dtype, np.number)
            or np.issubdtype(full.dtype, np.bool_)):
        raise ValueError(f'`{name}` must hold numbers 0 and 1, but got '
                         f'dtype {full.dtype}.')
    if full.size == 0 or full.dtype == np.bool_:
        return full
    if np.issubdtype(full.dtype, np.integer):
        unsigned = np.dtype(f'u{full.dtype.itemsize}')

        def has_other(block):
            return block.view(unsigned).max() > 1
    else:

        def has_other(block):
            return bool(((block != 0) & (block != 1)).any())

    starts = row_steps(full)
    if not any(has_other(full[start:start + starts.step]) for start in starts):
        return full
    bad = np.unique(
        np.concatenate([
            np.unique(block[(block != 0) & (block != 1)])
            for block in (full[start:start + starts.step] for start in starts)
        ]))[:5]
    raise ValueError(f'`{name}` must hold only 0 and 1, but got other '
                     f'values such as {bad.tolist()}.')


def draw_single_positive(full: np.ndarray, seed: int) -> np.ndarray:
    """Keep one positive per row of a checked 0/1 matrix, drawing exactly
    as Cole et al.'s generator (``num_pos=1``, ``num_neg=0``): one
    ``RandomState(seed)`` goes over the rows in order; each row shuffles
    the ascending indices of its positives and keeps the first, then
    shuffles the indices of its negatives, which keeps nothing but consumes
    the stream (:func:`_shuffle_rows`).

    Returns:
        np.ndarray: The ``(N, C)`` ``uint8`` observed positives.
    """
    rng = np.random.RandomState(seed)
    indptr, indices = _positives_csr(full)
    _shuffle_rows(rng, indptr, indices, full.shape[1])
    return _mark_first(full.shape, indptr, indices,
                       np.minimum(np.diff(indptr), 1))


def draw_kept_positives(full: np.ndarray, seed: int,
                        kept_of: np.ndarray) -> np.ndarray:
    """Keep ``kept_of[n]`` of the ``n`` positives of each row of a checked
    0/1 matrix, a uniform random subset: one ``RandomState(seed)`` goes over
    the rows in order and, for each row with ``n > 0`` positives, draws a
    random permutation of them and keeps its first ``kept_of[n]``
    (:func:`_permute_rows`). Rows without any positive draw nothing.

    Args:
        full (np.ndarray): The checked ``(N, C)`` full labels.
        seed (int): The seed of the ``RandomState``.
        kept_of (np.ndarray): ``(C + 1,)`` integers, the positives kept by
            a row of ``n`` positives.

    Returns:
        np.ndarray: The ``(N, C)`` ``uint8`` observed positives.
    """
    rng = np.random.RandomState(seed)
    indptr, indices = _positives_csr(full)
    _permute_rows(rng, indptr, indices)
    return _mark_first(full.shape, indptr, indices,
                       np.asarray(kept_of, dtype=np.int64)[np.diff(indptr)])


def _positives_csr(full: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """The positives of every row of a checked 0/1 matrix as compressed
    sparse rows.

    Row ``i``'s positives are ``indices[indptr[i]:indptr[i + 1]]``, in
    ascending order (the order of ``np.nonzero(row == 1)[0]``). The matrix
    is read in chunks of rows; a matrix of one-byte 0/1 values is read as
    booleans without a copy.

    Returns:
        Tuple[np.ndarray, np.ndarray]: ``indptr``, ``(N + 1,)`` ``int64``,
        and ``indices``, ``intp``.
    """
    num_rows, num_cols = full.shape
    indptr = np.zeros(num_rows + 1, dtype=np.int64)
    parts = []
    starts = row_steps(full)
    for start in starts:
        block = full[start:start + starts.step]
        block = block.view(np.bool_) if block.dtype.itemsize == 1 \
            else block != 0
        # The 1-D search is several times faster than a 2-D np.nonzero.
        flat = np.flatnonzero(block.reshape(-1))
        rows = flat // num_cols
        flat -= rows * num_cols
        stop = start + len(block)
        np.cumsum(
            np.bincount(rows, minlength=len(block)),
            out=indptr[start + 1:stop + 1])
        indptr[start + 1:stop + 1] += indptr[start]
        parts.append(flat)
    indices = np.concatenate(parts) if parts else np.zeros(0, np.intp)
    return indptr, indices.astype(np.intp, copy=False)


#: Rows whose random draws one step of :func:`_shuffle_rows` prepares.
_ROWS_PER_STEP = 1 << 16


def _permute_rows(rng: np.random.RandomState, indptr: np.ndarray,
                  indices: np.ndarray) -> None:
    """Shuffle each row's positives in place as ``rng.shuffle`` of each row
    in order does (``pos[rng.permutation(n)]``), with one draw for all the
    rows of a chunk instead of a call per row.

    ``RandomState.shuffle`` of ``n`` values is the Fisher-Yates shuffle: for
    ``i = n - 1, ..., 1`` it swaps ``a[i]`` and ``a[j]``, ``j =
    random_interval(i)`` (numpy's masked rejection sampling: the 32-bit
    outputs masked to the bits of ``i`` until one is at most ``i``), and
    draws nothing for ``n < 2``. Legacy ``randint(0, high)`` with an array
    ``high`` draws each value with the same sampler, one after the other,
    so ``randint(0, bounds + 1)`` over the concatenated ``bounds`` (``n -
    1, ..., 1`` of each row) gives every ``j`` of the rows in order and
    leaves ``rng`` where the per-row shuffles leave it. The swaps are then
    made step ``t`` at a time for all the rows with more than ``t + 1``
    positives (``i = n - 1 - t``); those of different rows touch different
    entries.
    """
    counts = np.diff(indptr)
    row_starts = indptr[:-1]
    for first in range(0, len(counts), _ROWS_PER_STEP):
        num = counts[first:first + _ROWS_PER_STEP]
        starts = row_starts[first:first + _ROWS_PER_STEP]
        draws = np.maximum(num - 1, 0)
        total = int(draws.sum())
        if not total:
            continue
        # bounds: n - 1, ..., 1 for each row, rows in order.
        offsets = np.cumsum(draws) - draws
        bounds = np.repeat(num - 1 + offsets, draws)
        bounds -= np.arange(total, dtype=bounds.dtype)
        picks = rng.randint(0, bounds + 1)
        # Rows by decreasing number of draws: those of step t are a prefix.
        order = np.argsort(-draws, kind='stable')
        ranked = draws[order]
        for step in range(int(ranked[0])):
            rows = order[:np.searchsorted(-ranked, -step, side='left')]
            i = starts[rows] + (num[rows] - 1 - step)
            j = starts[rows] + picks[offsets[rows] + step]
            swapped = indices[j]
            indices[j] = indices[i]
            indices[i] = swapped


def _shuffle_rows(rng: np.random.RandomState,
                  indptr: np.ndarray,
                  indices: np.ndarray,
                  num_cols: Optional[int] = None) -> None:
    """Shuffle each row's positives in place, drawing from ``rng`` exactly
    as the per-row generators do.

    For each row in order, ``rng.shuffle`` of its ``n`` positives (which
    draws nothing for ``n < 2``) and, if ``num_cols`` is given, a shuffle of
    ``num_cols - n`` values that stands for the shuffle of the row's
    negatives in Cole et al.'s generator. Legacy ``RandomState.shuffle``
    (numpy's ``mtrand.pyx``) draws ``random_interval(i)`` for ``i = L - 1,
    ..., 1`` whatever the content and dtype of the array of length ``L``,
    and ``permutation(n)`` shuffles ``arange(n)``: shuffling the positives
    in place with the same swaps gives ``pos[rng.permutation(n)]``, and
    shuffling any array of the negatives' length consumes the stream as
    shuffling the negatives did. The negatives' shuffles therefore reuse
    views of one scratch buffer, and neither the positives nor the
    negatives of a row are searched for.
    """
    shuffle = rng.shuffle
    counts = np.diff(indptr)
    if num_cols is not None:
        scratch = np.empty(num_cols, dtype=np.intp)
        # negatives[n] has the length of the negatives of a row with n
        # positives; shuffling it draws as shuffling them did.
        negatives = [scratch[:num_cols - n] for n in range(num_cols + 1)]
    row_starts = indptr[:-1]
    for first in range(0, len(counts), _ROWS_PER_STEP):
        starts = row_starts[first:first + _ROWS_PER_STEP]
        num = counts[first:first + _ROWS_PER_STEP]
        if num_cols is None:
            # Only rows with two positives or more draw anything.
            many = num > 1
            for start, n in zip(starts[many].tolist(), num[many].tolist()):
                shuffle(indices[start:start + n])
            continue
        for start, n in zip(starts.tolist(), num.tolist()):
            if n > 1:
                shuffle(indices[start:start + n])
            shuffle(negatives[n])


def _mark_first(shape: Tuple[int, int], indptr: np.ndarray,
                indices: np.ndarray, kept: np.ndarray) -> np.ndarray:
    """The ``uint8`` matrix of ``shape`` holding 1 at ``[i,
    indices[indptr[i]:indptr[i] + kept[i]]]`` for every row ``i`` and 0
    elsewhere, marked in chunks of rows."""
    observed = np.zeros(shape, dtype=np.uint8)
    num_rows, num_cols = shape
    flat = observed.reshape(-1)
    starts = row_steps(observed)
    for start in starts:
        stop = min(start + starts.step, num_rows)
        num = kept[start:stop]
        total = int(num.sum())
        if not total:
            continue
        # The positions in `indices` of the kept positives of the chunk.
        ends = np.cumsum(num)
        position = np.repeat(indptr[start:stop] - (ends - num), num)
        position += np.arange(total, dtype=np.int64)
        target = np.repeat(
            np.arange(start, stop, dtype=np.int64) * num_cols, num)
        target += indices[position]
        flat[target] = 1
    return observed
