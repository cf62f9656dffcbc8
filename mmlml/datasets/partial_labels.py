"""Generation of partial multi-label annotations and the validation split.

Pure numpy functions, without images, shared by
:class:`~mmlml.datasets.PartialLabelDataset` and the dataset converters:

- :func:`make_partial_labels` hides positives of a fully labelled 0/1
  matrix, either keeping a single positive per image (the single positive
  protocol of Cole et al., CVPR 2021, reproduced bit for bit) or keeping
  :math:`\\lfloor n (1 - r) \\rfloor + 1` of the :math:`n` positives of an
  image (the missing-ratio protocol of Zhang et al., "Simple and Robust Loss
  Design for Multi-Label Learning with Missing Labels").
- :func:`split_train_val` is the 80/20 train/validation split of Cole et al.

Both draw from numpy's legacy :class:`numpy.random.RandomState`, whose
stream is frozen across numpy versions, so that a seed always gives the
same annotations.
"""
import numbers
from fractions import Fraction
from typing import Optional, Sequence, Tuple

import numpy as np

__all__ = [
    'check_mode_ratio', 'check_seed', 'check_binary_matrix',
    'make_partial_labels', 'num_kept_positives', 'split_train_val'
]

PARTIAL_LABEL_MODES = ('single_positive', 'ratio')


def check_mode_ratio(
        mode: str,
        ratio: Optional[float],
        modes: Sequence[str] = PARTIAL_LABEL_MODES) -> Optional[Fraction]:
    """Validate a partial-label ``mode`` and its ``ratio`` and return the
    ratio as a fraction.

    Args:
        mode (str): One of ``modes``.
        ratio (float, optional): The missing ratio, required in the
            ``'ratio'`` mode and forbidden in every other mode.
        modes (Sequence[str]): The valid modes. Defaults to
            ``('single_positive', 'ratio')``, the modes of
            :func:`make_partial_labels`.

    Returns:
        Fraction, optional: ``ratio`` as an exact fraction of its decimal
        representation (``0.8`` becomes ``4/5``), or None in the other
        modes.

    Raises:
        ValueError: An unknown mode, a missing ratio, a ratio outside
            [0, 1] or a ratio in a mode that takes none.
    """
    if mode not in modes:
        raise ValueError(f'`mode` must be one of {tuple(modes)}, but got '
                         f'{mode!r}.')
    if mode != 'ratio':
        if ratio is not None:
            hint = (" Use mode='ratio' with ratio=1 instead."
                    if mode == 'single_positive' else '')
            raise ValueError(f'`ratio` must be None in the {mode!r} mode, '
                             f'but got {ratio!r}.{hint}')
        return None
    if ratio is None:
        raise ValueError("`ratio` is required in the 'ratio' mode, a number "
                         'in [0, 1] (0 keeps every positive, 1 keeps one).')
    if isinstance(ratio, bool) or not isinstance(ratio, numbers.Real):
        raise ValueError('`ratio` must be a real number in [0, 1], but got '
                         f'{ratio!r} of type {type(ratio).__name__}.')
    if not 0 <= ratio <= 1:
        raise ValueError(f'`ratio` must lie in [0, 1], but got {ratio!r}.')
    # The decimal text of the number, not its binary value: 1 - 0.8 is
    # 0.19999999999999996 in floating point, which would keep one positive
    # out of 5 instead of two.
    return Fraction(str(ratio))


def check_seed(seed: int, name: str = 'seed') -> int:
    """Return ``seed`` as an int if it is an integer in ``[0, 2**32)``.

    A seed of None would draw different labels in every process (every
    dataloader worker and every rank of a distributed run), so it is
    refused, like any other value that ``RandomState`` would not take as a
    fixed seed.

    Raises:
        ValueError: ``seed`` is not such an integer; the message names
            ``name``.
    """
    if (isinstance(seed, bool) or not isinstance(seed, numbers.Integral)
            or not 0 <= seed < 2**32):
        raise ValueError(f'`{name}` must be an integer in [0, 2**32), but '
                         f'got {seed!r}: the partial labels must be the '
                         'same in every process, so they need a fixed '
                         'seed.')
    return int(seed)


#: Entries of a label matrix handled per step by the chunked passes, so
#: that their temporaries stay small (a few MiB) at any scale.
_CHUNK_ENTRIES = 1 << 22


def _row_chunks(num_rows: int, num_cols: int) -> range:
    """The first rows of the chunks of a matrix, about
    :data:`_CHUNK_ENTRIES` entries each."""
    step = max(1, _CHUNK_ENTRIES // max(1, num_cols))
    return range(0, num_rows, step)


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

    starts = _row_chunks(*full.shape)
    if not any(has_other(full[start:start + starts.step]) for start in starts):
        return full
    bad = np.unique(
        np.concatenate([
            np.unique(block[(block != 0) & (block != 1)])
            for block in (full[start:start + starts.step] for start in starts)
        ]))[:5]
    raise ValueError(f'`{name}` must hold only 0 and 1, but got other '
                     f'values such as {bad.tolist()}.')


def num_kept_positives(num_positives: int, ratio: float) -> int:
    """Number of positives kept by the missing-ratio protocol.

    :math:`k = \\min(n, \\lfloor n (1 - r) \\rfloor + 1)` for :math:`n > 0`
    positives, computed exactly from the decimal value of ``ratio`` (ratio
    0.8 keeps 2 of 5, 3 of 10 and 4 of 15), and 0 for :math:`n = 0`.

    Args:
        num_positives (int): The number :math:`n` of positives of an image.
        ratio (float): The missing ratio :math:`r` in [0, 1].

    Returns:
        int: The number of positives kept.
    """
    keep = 1 - check_mode_ratio('ratio', ratio)
    return _num_kept(int(num_positives), keep)


def _num_kept(n: int, keep: Fraction) -> int:
    """``min(n, floor(n * keep) + 1)`` in integer arithmetic (0 if n == 0)."""
    if n <= 0:
        return 0
    return min(n, n * keep.numerator // keep.denominator + 1)


def make_partial_labels(full: np.ndarray,
                        mode: str,
                        ratio: Optional[float] = None,
                        seed: int = 1200) -> np.ndarray:
    """Hide positives of a fully labelled multi-label matrix.

    Two protocols are available:

    - ``mode='single_positive'`` reproduces exactly the observed positives
      of the generator of Cole et al. (CVPR 2021, ``num_pos=1``,
      ``num_neg=0``): one ``RandomState(seed)`` goes over the rows in order;
      for each row the ascending indices of its positives are shuffled and
      the first one is kept, then the indices of its negatives are shuffled
      too. Nothing of the negatives is kept, but that shuffle consumes the
      random stream, so it is reproduced as well.
    - ``mode='ratio'`` keeps :math:`k = \\lfloor n (1 - r) \\rfloor + 1`
      (at most :math:`n`) of the :math:`n` positives of each row, where
      :math:`r` is ``ratio``, as in Zhang et al. ("Simple and Robust Loss
      Design for Multi-Label Learning with Missing Labels"). ``k`` is
      computed exactly from the decimal value of ``ratio``: ratio 0.5 keeps
      :math:`\\lfloor n/2 \\rfloor + 1`, ratio 0.8 keeps 2 of 5 positives,
      ratio 1 keeps one and ratio 0 keeps all. The kept positives are a
      uniform random subset without replacement: one ``RandomState(seed)``
      goes over the rows in order and, for each row with :math:`n > 0`
      positives, draws a random permutation of them and keeps its first
      :math:`k`. Because the draws depend on :math:`n` only, the same seed
      gives nested annotations across ratios (what a larger ratio keeps, a
      smaller one keeps too). Zhang et al. released neither their seed nor
      their generator, so their files cannot be regenerated exactly.

    Rows without any positive keep nothing (they stay all zero). In the
    ``'single_positive'`` mode they still shuffle their negatives, exactly
    as Cole et al.'s code does; in the ``'ratio'`` mode they draw nothing.

    The draws are those of that per-row loop, but the positives of all rows
    are found at once (compressed sparse rows) and the negatives are never
    searched for: a shuffle draws the same numbers for any array of the
    same length, so a scratch array of the negatives' length stands for
    them. The ``'ratio'`` mode draws the permutations of a chunk of rows
    in one call (:func:`_permute_rows`). What is left per row in the
    ``'single_positive'`` mode is one or two calls of
    ``RandomState.shuffle``, whose cost is the :math:`C - n - 1` draws of
    each row's negative shuffle (about 5-10 s per million rows of 567
    classes): numpy has no faster way to consume the stream exactly as
    they did, since how many 32-bit outputs a draw takes depends on the
    outputs (rejection sampling). Besides the ``uint8`` result, the memory
    used is 8 bytes per positive (16 in the ``'ratio'`` mode), a few
    numbers per row and chunks of a few MiB.

    Args:
        full (np.ndarray): The full labels, an ``(N, C)`` matrix of any
            integer, boolean or floating dtype holding only 0 and 1.
        mode (str): ``'single_positive'`` or ``'ratio'``.
        ratio (float, optional): The missing ratio :math:`r` in [0, 1],
            required in the ``'ratio'`` mode and forbidden in the
            ``'single_positive'`` mode. Defaults to None.
        seed (int): The seed of the ``RandomState``. Defaults to 1200, the
            seed of Cole et al.

    Returns:
        np.ndarray: The observed positives, an ``(N, C)`` ``uint8`` matrix
        holding 1 where a positive is kept and 0 elsewhere (unannotated).

    Examples:
        >>> import numpy as np
        >>> full = np.array([[1, 1, 0, 1], [0, 0, 0, 0], [0, 1, 1, 0]])
        >>> obs = make_partial_labels(full, 'single_positive')
        >>> obs.sum(axis=1).tolist()
        [1, 0, 1]
        >>> obs = make_partial_labels(full, 'ratio', ratio=0.5)
        >>> obs.sum(axis=1).tolist()
        [2, 0, 2]
    """
    ratio_frac = check_mode_ratio(mode, ratio)
    full = check_binary_matrix(full)
    rng = np.random.RandomState(check_seed(seed))
    num_cols = full.shape[1]
    indptr, indices = _positives_csr(full)
    counts = np.diff(indptr)
    if mode == 'single_positive':
        _shuffle_rows(rng, indptr, indices, num_cols)
        kept = np.minimum(counts, 1)
    else:
        _permute_rows(rng, indptr, indices)
        keep = 1 - ratio_frac
        kept = np.array([_num_kept(n, keep) for n in range(num_cols + 1)],
                        dtype=np.int64)[counts]
    observed = np.zeros(full.shape, dtype=np.uint8)
    _mark_first(observed, indptr, indices, kept)
    return observed


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
    starts = _row_chunks(num_rows, num_cols)
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


def _mark_first(observed: np.ndarray, indptr: np.ndarray, indices: np.ndarray,
                kept: np.ndarray) -> None:
    """Set ``observed[i, indices[indptr[i]:indptr[i] + kept[i]]]`` to 1 for
    every row ``i``, in chunks of rows."""
    num_rows, num_cols = observed.shape
    flat = observed.reshape(-1)
    starts = _row_chunks(num_rows, num_cols)
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


def split_train_val(num_samples: int,
                    val_frac: float = 0.2,
                    seed: int = 1200) -> Tuple[np.ndarray, np.ndarray]:
    """Split sample indices into training and validation, as Cole et al.

    ``n_val = int(np.round(val_frac * num_samples))`` indices of a random
    permutation drawn from ``RandomState(seed)`` go to the validation set
    (the last ``n_val`` of the permutation), the others to the training set
    (the first ``num_samples - n_val``); both are sorted. With the defaults
    this is the held-out split of Cole et al., e.g. 4574/1143 of the 5717
    training images of PASCAL VOC 2012.

    Args:
        num_samples (int): The number of samples to split.
        val_frac (float): The fraction of samples in the validation set, in
            [0, 1]. Defaults to 0.2.
        seed (int): The seed of the ``RandomState``. Defaults to 1200.

    Returns:
        Tuple[np.ndarray, np.ndarray]: The sorted ``int64`` training and
        validation indices, disjoint and covering ``range(num_samples)``.

    Examples:
        >>> train_idx, val_idx = split_train_val(5717)
        >>> len(train_idx), len(val_idx)
        (4574, 1143)
        >>> val_idx[:5].tolist()
        [5, 6, 11, 15, 22]
    """
    if (isinstance(num_samples, bool)
            or not isinstance(num_samples, numbers.Integral)
            or num_samples < 0):
        raise ValueError('`num_samples` must be a non-negative integer, but '
                         f'got {num_samples!r}.')
    if (isinstance(val_frac, bool) or not isinstance(val_frac, numbers.Real)
            or not 0 <= val_frac <= 1):
        raise ValueError(f'`val_frac` must lie in [0, 1], but got '
                         f'{val_frac!r}.')
    num_samples = int(num_samples)
    n_val = int(np.round(val_frac * num_samples))
    perm = np.random.RandomState(check_seed(seed)).permutation(num_samples)
    train_idx = np.sort(perm[:num_samples - n_val]).astype(
        np.int64, copy=False)
    # perm[-0:] would be the whole permutation.
    val_idx = np.sort(perm[num_samples - n_val:]).astype(np.int64, copy=False)
    return train_idx, val_idx
