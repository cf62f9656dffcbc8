"""The ``sample_idx`` of a batch's samples, the key of per-sample state."""
from typing import Optional, Sequence

import torch
from torch import Tensor

__all__ = ['sample_indices']


def sample_indices(data_samples: Sequence,
                   num_samples: Optional[int] = None) -> Tensor:
    """Read the ``sample_idx`` metainfo of a batch's ``DataSample``s.

    :class:`~mmlml.datasets.PartialLabelDataset` sets it to the sample's
    index in the wrapper and MMPretrain's ``PackInputs`` keeps it in the
    metainfo by default.

    Args:
        data_samples (Sequence[DataSample]): The batch's samples.
        num_samples (int, optional): The size of the indexed set: indices
            outside ``[0, num_samples)`` are refused.

    Returns:
        Tensor: ``(B,)`` int64 indices, on the CPU.

    Raises:
        TypeError: ``data_samples`` is not a non-empty sequence.
        KeyError: A sample has no ``sample_idx``.
        IndexError: An index is out of range.
    """
    if isinstance(data_samples, (str, bytes)) or not isinstance(
            data_samples, Sequence) or not data_samples:
        raise TypeError('expected a non-empty list of DataSamples, got '
                        f'{type(data_samples).__name__}')
    indices = []
    for sample in data_samples:
        index = getattr(sample, 'metainfo', {}).get('sample_idx', None)
        if index is None:
            raise KeyError(
                'A training DataSample has no `sample_idx` in its metainfo: '
                'keep it in the meta keys of PackInputs (it is there by '
                'default) and wrap the training set in a PartialLabelDataset.')
        indices.append(index)
    # Checked as the Python numbers they are: no tensor is read.
    if num_samples is not None and (min(indices) < 0
                                    or max(indices) >= num_samples):
        raise IndexError(f'`sample_idx` {indices} out of range for a '
                         f'training set of {num_samples} samples.')
    # ``torch.tensor``, not ``torch.as_tensor``: under ``torch.compile``
    # dynamo turns the numbers into symbolic inputs of the graph after
    # their first change, whereas ``as_tensor`` fixes each value and
    # recompiles the head's loss for every batch.
    return torch.tensor(indices, dtype=torch.int64)
