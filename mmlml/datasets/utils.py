"""Helpers for code that reads a training set's partial labels."""
from typing import Optional

from .partial import PartialLabelDataset

__all__ = ['find_partial_label_dataset']


def find_partial_label_dataset(
        dataset: object,
        requester: Optional[str] = None) -> PartialLabelDataset:
    """Find the :class:`PartialLabelDataset` that a training dataset is or
    wraps.

    Wrappers that keep one inner dataset in ``.dataset`` (MMEngine's
    ``RepeatDataset`` and ``ClassBalancedDataset``, PyTorch's ``Subset``)
    are looked through: they fetch their samples from the inner
    :class:`PartialLabelDataset`, which sets ``sample_idx`` to its own
    index, so ``sample_idx`` still addresses its label matrices. A
    ``ConcatDataset`` is refused, because its parts reuse ``sample_idx``.

    Args:
        dataset: The training dataset.
        requester (str, optional): Who needs the dataset (e.g. a hook's
            class name), to start the error messages with.
            Defaults to None.

    Returns:
        PartialLabelDataset: The partial-label dataset.

    Raises:
        TypeError: If no :class:`PartialLabelDataset` is found, or if a
            wrapper concatenates several datasets.
    """
    prefix = f'{requester}: ' if requester else ''
    current = dataset
    seen = []
    for _ in range(16):
        if isinstance(current, PartialLabelDataset):
            return current
        seen.append(type(current).__name__)
        if hasattr(current, 'datasets'):
            raise TypeError(
                f'{prefix}The training dataset concatenates several datasets '
                f'({" -> ".join(seen)}), whose samples share `sample_idx` '
                'values, so the full labels of a sample cannot be found. '
                'Wrap a single PartialLabelDataset instead.')
        if not hasattr(current, 'dataset'):
            break
        current = current.dataset
    raise TypeError(
        f'{prefix}The training dataset must be, or wrap, a '
        'PartialLabelDataset (which keeps the full labels beside the '
        f'observed ones), but got {" -> ".join(seen)}.')
