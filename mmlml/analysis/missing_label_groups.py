"""The inputs of the missing-label score diagnostics
(:mod:`.missing_label_scores`) and the groups they split the entries into.

For ``N`` samples and ``C`` classes, all ``(N, C)`` arrays: ``scores``, the
model's probabilities; ``observed``, the training encoding of the partial
labels (1 observed positive, 0 unannotated, -1 observed negative);
``full``, the true labels (1 positive, 0 negative). Bad shapes or values
raise a ``ValueError`` that names the argument.
"""
from typing import Dict, List, Optional, Sequence, Tuple, Union, overload

import numpy as np

__all__ = [
    'GROUPS', 'GROUP_TITLES', 'ArrayLike', 'check_label_values',
    'check_score_inputs', 'label_groups'
]

#: The groups of entries, in the order of the figures.
GROUPS = ('observed_positive', 'missing_positive', 'unannotated_negative',
          'observed_negative')

#: Human-readable names of :data:`GROUPS`.
GROUP_TITLES = {
    'observed_positive': 'observed positives',
    'missing_positive': 'missing positives (unannotated, true 1)',
    'unannotated_negative': 'true negatives (unannotated, true 0)',
    'observed_negative': 'observed negatives',
}

ArrayLike = Union[np.ndarray, Sequence]


def check_label_values(name: str, array: np.ndarray,
                       allowed: Tuple[int, ...]) -> np.ndarray:
    """``array`` as int8 after checking it holds only ``allowed`` values
    (any integer, boolean or floating dtype holding exactly them); the
    errors call it ``name``."""
    if array.dtype == bool:
        array = array.astype(np.int8)
    if not (np.issubdtype(array.dtype, np.integer)
            or np.issubdtype(array.dtype, np.floating)):
        raise ValueError(f'{name} must be a numeric array, got dtype '
                         f'{array.dtype}')
    bad = ~np.isin(array, allowed)
    if bad.any():
        values = np.unique(array[bad])[:5].tolist()
        raise ValueError(f'{name} must hold only the values {list(allowed)}, '
                         f'got {values}')
    return array.astype(np.int8)


@overload
def check_score_inputs(
        scores: ArrayLike, observed: ArrayLike,
        full: ArrayLike) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    ...


@overload
def check_score_inputs(
        scores: ArrayLike,
        observed: ArrayLike,
        full: None = None) -> Tuple[np.ndarray, np.ndarray, None]:
    ...


def check_score_inputs(
    scores: ArrayLike,
    observed: ArrayLike,
    full: Optional[ArrayLike] = None
) -> Tuple[np.ndarray, np.ndarray, Optional[np.ndarray]]:
    """Validate and convert the inputs of the score diagnostics.

    Args:
        scores (array-like): ``(N, C)`` probabilities in ``[0, 1]``.
        observed (array-like): ``(N, C)`` training encoding: 1, 0 or -1.
        full (array-like, optional): ``(N, C)`` true labels: 0 or 1 (or
            booleans).

    Returns:
        tuple: ``scores`` as float64, ``observed`` as int8 and ``full`` as
        int8 (None if not given).

    Raises:
        ValueError: A shape that is not ``(N, C)``, shapes that differ,
            non-finite or out-of-range scores, or label values outside the
            encodings.
    """
    scores = np.asarray(scores)
    if scores.ndim != 2:
        raise ValueError('scores must be an (N, C) array of probabilities, '
                         f'got shape {scores.shape}')
    if scores.dtype == bool or not (np.issubdtype(scores.dtype, np.floating) or
                                    np.issubdtype(scores.dtype, np.integer)):
        raise ValueError('scores must be a float array of probabilities, '
                         f'got dtype {scores.dtype}')
    scores = scores.astype(np.float64)
    if not np.isfinite(scores).all():
        raise ValueError('scores must be finite, got '
                         f'{int((~np.isfinite(scores)).sum())} NaN or '
                         'infinite values')
    if scores.size and (scores.min() < 0 or scores.max() > 1):
        raise ValueError('scores must be probabilities in [0, 1] (apply a '
                         'sigmoid to logits), got range '
                         f'[{scores.min():g}, {scores.max():g}]')
    arrays: List[Optional[np.ndarray]] = []
    for name, array, allowed in (('observed', observed, (-1, 0, 1)),
                                 ('full', full, (0, 1))):
        if array is None:
            arrays.append(None)
            continue
        array = np.asarray(array)
        if array.shape != scores.shape:
            raise ValueError(f'{name} must have the shape of scores (N, C) = '
                             f'{scores.shape}, got {array.shape}')
        arrays.append(check_label_values(name, array, allowed))
    if arrays[0] is None:
        raise ValueError('observed must be the (N, C) observed labels, got '
                         'None')
    return scores, arrays[0], arrays[1]


def label_groups(observed: ArrayLike,
                 full: ArrayLike) -> Dict[str, np.ndarray]:
    """The ``(N, C)`` boolean masks of the groups of :data:`GROUPS`.

    - ``observed_positive``: ``observed == 1``;
    - ``missing_positive``: ``observed == 0`` and ``full == 1``, the
      positives the annotation misses (the false negatives of an
      assume-negative loss);
    - ``unannotated_negative``: ``observed == 0`` and ``full == 0``, the
      true negatives among the unannotated entries;
    - ``observed_negative``: ``observed == -1`` (empty in the
      single-positive and missing-ratio settings).

    Every entry is in exactly one group.
    """
    observed = np.asarray(observed)
    full = np.asarray(full)
    if observed.shape != full.shape or observed.ndim != 2:
        raise ValueError('observed and full must be (N, C) arrays of the '
                         f'same shape, got {observed.shape} and {full.shape}')
    observed = check_label_values('observed', observed, (-1, 0, 1))
    full = check_label_values('full', full, (0, 1))
    unannotated = observed == 0
    return dict(
        observed_positive=observed == 1,
        missing_positive=unannotated & (full == 1),
        unannotated_negative=unannotated & (full == 0),
        observed_negative=observed == -1)
