"""The two label encodings that meet in a partial-label dataset.

A *training* target uses mmlml's encoding (Zhou et al.): 1 observed
positive, 0 unknown (unannotated), -1 observed negative. MMPretrain's
metrics read an *evaluation* ``gt_score`` in another one: 1 positive, 0
negative, -1 ignored (VOC "difficult"). The functions here build the first
from an annotation and translate it into the second, so that nothing in the
training encoding ever reaches an evaluator.
"""
from typing import Optional, Sequence

import numpy as np

__all__ = [
    'POSITIVE', 'UNKNOWN', 'NEGATIVE', 'UNLISTED', 'EVAL_UNKNOWN',
    'check_label_indices', 'label_states', 'evaluation_target'
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
        ValueError: They are not integers in ``[0, num_classes)``, or repeat.
    """
    array = np.asarray(indices if indices is not None else [])
    if array.size == 0:
        return np.zeros(0, dtype=np.int64)
    if array.ndim != 1 or not (np.issubdtype(array.dtype, np.integer) and
                               array.min() >= 0 and array.max() < num_classes):
        raise ValueError(
            f'{where}: `{key}` must be a list of class indices, integers in '
            f'[0, {num_classes}), but got {np.asarray(indices).tolist()!r}.')
    array = array.astype(np.int64)
    if np.unique(array).size != array.size:
        raise ValueError(f'{where}: `{key}` lists a class twice: '
                         f'{array.tolist()}.')
    return array


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
