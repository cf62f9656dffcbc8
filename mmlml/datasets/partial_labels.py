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
    'check_mode_ratio', 'check_seed', 'make_partial_labels',
    'num_kept_positives', 'split_train_val'
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


def _check_binary_matrix(full: np.ndarray, name: str = 'full') -> np.ndarray:
    """Check that ``full`` is a 2-D matrix holding only 0 and 1.

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
    if full.size and not np.isin(full, (0, 1)).all():
        bad = np.unique(full[~np.isin(full, (0, 1))])[:5]
        raise ValueError(f'`{name}` must hold only 0 and 1, but got other '
                         f'values such as {bad.tolist()}.')
    return full


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
    full = _check_binary_matrix(full)
    observed = np.zeros(full.shape, dtype=np.uint8)
    rng = np.random.RandomState(check_seed(seed))
    if mode == 'single_positive':
        for i, row in enumerate(full):
            pos = np.nonzero(row == 1)[0]
            rng.shuffle(pos)
            observed[i, pos[:1]] = 1
            # Kept for the random stream only (Cole et al.'s num_neg=0).
            neg = np.nonzero(row != 1)[0]
            rng.shuffle(neg)
    else:
        keep = 1 - ratio_frac
        for i, row in enumerate(full):
            pos = np.nonzero(row == 1)[0]
            if len(pos) == 0:
                continue
            k = _num_kept(len(pos), keep)
            observed[i, pos[rng.permutation(len(pos))[:k]]] = 1
    return observed


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
    train_idx = np.sort(perm[:num_samples - n_val]).astype(np.int64)
    # perm[-0:] would be the whole permutation.
    val_idx = np.sort(perm[num_samples - n_val:]).astype(np.int64)
    return train_idx, val_idx
