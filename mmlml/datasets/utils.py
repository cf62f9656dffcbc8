"""Helpers for code that reads a dataset's partial labels: the
:class:`PartialLabelDataset` behind a training set, the labels a split
knows."""
from typing import Optional

import numpy as np

from .label_states import annotation_states, evaluation_target
from .partial import PartialLabelDataset

__all__ = ['find_partial_label_dataset', 'known_targets']


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


def known_targets(dataset) -> np.ndarray:
    """The labels a split knows, as ``(len(dataset), C)`` ``float32``
    evaluation targets: 1 positive, 0 negative, -1 unknown (whatever the
    split's own evaluation makes of unknown labels: a validation split with
    ``val_unknown='negative'`` scores them as negatives, this never does).

    - a :class:`~mmlml.datasets.PartialLabelDataset`: the labels its
      samples carry, the observed ones (a training split, or
      ``val_labels='observed'``) or its wrapped annotation (the clean
      validation labels, with that annotation's own unknowns);
    - a dataset of :class:`~mmlml.datasets.CustomMultiLabelDataset`'s kind
      (``get_label_matrices``): its positives, negatives and unknowns;
    - any other: each sample's ``gt_score`` when it has one (MMPretrain's
      evaluation encoding), else its ``gt_label`` (the other classes
      negative).

    A dataset wrapper (MMEngine's ``ConcatDataset``, ``RepeatDataset``, ...)
    is refused: read through it, the unknown labels of what it wraps would
    count as negatives.
    """
    partial = dataset if isinstance(dataset, PartialLabelDataset) else None
    if partial is not None:
        if partial.uses_observed_labels:
            states = partial.observed_labels
        else:
            rows = [partial.get_annotation(i) for i in range(len(partial))]
            states = np.stack(rows) if rows else np.zeros(
                (0, partial.num_classes), dtype=np.int8)
        return evaluation_target(states, 'ignore')
    if hasattr(dataset, 'get_label_matrices'):
        full, unknown = dataset.get_label_matrices()
        return evaluation_target(annotation_states(full, unknown), 'ignore')
    if hasattr(dataset, 'dataset') or hasattr(dataset, 'datasets'):
        raise ValueError(
            f'{type(dataset).__name__} wraps the split\'s dataset, whose '
            'unknown labels would be read as negatives through it: use the '
            'dataset itself (a PartialLabelDataset, a '
            'CustomMultiLabelDataset or a fully labelled one).')
    num_classes = len(dataset.metainfo['classes'])
    target = np.zeros((len(dataset), num_classes), dtype=np.float32)
    for i in range(len(dataset)):
        info = dataset.get_data_info(i)
        if info.get('gt_score') is not None:
            target[i] = np.asarray(info['gt_score'], dtype=np.float32)
        else:
            target[i, np.asarray(info['gt_label'], dtype=np.int64)] = 1
    return target
