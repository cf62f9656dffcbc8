"""The index check shared by the dataset classes, with errors that name
the dataset and the index. (Numeric arguments are checked with
:func:`mmlml.utils.hyperparameters.check_hparam`.)"""
import numbers
from typing import Any

__all__ = ['check_index']


def check_index(idx: Any, length: int, owner: str) -> int:
    """Return ``idx`` as a non-negative Python int if it indexes a dataset
    of ``length`` samples.

    Integers (Python and numpy, not ``bool``) in ``[-length, length)`` are
    accepted; a negative one counts from the end, as in MMEngine's
    ``BaseDataset`` and Python sequences.

    Args:
        idx: The index.
        length (int): The number of samples.
        owner (str): The dataset, as the errors name it.

    Returns:
        int: The index in ``[0, length)``.

    Raises:
        TypeError: ``idx`` is not an integer (a float, a string, a slice...).
        IndexError: ``idx`` is out of range.
    """
    if isinstance(idx, bool) or not isinstance(idx, numbers.Integral):
        raise TypeError(f'{owner} indices must be integers, got {idx!r} of '
                        f'type {type(idx).__name__}.')
    idx = int(idx)
    if not -length <= idx < length:
        raise IndexError(f'Index {idx} out of range for a {owner} of '
                         f'length {length}.')
    return idx + length if idx < 0 else idx
