"""The partial-label wrapper: :class:`PartialLabelDataset` hides labels of
a fully labelled dataset as its :class:`PartialLabelProtocol` says, on the
samples its :class:`SampleSplit` selects.

- ``protocol.py``: the two frozen values (checked once, where they are
  built) and the generators that follow them;
- ``draws.py``: the stream-exact random draws and the chunked passes over
  label matrices;
- ``matrices.py``: reading the wrapped dataset's label matrices;
- ``statistics.py``: the label statistics and their log lines;
- ``dataset.py``: the registered wrapper.
"""
from .dataset import PartialLabelDataset
from .protocol import (PartialLabelProtocol, SampleSplit, make_partial_labels,
                       num_kept_positives, split_train_val)

__all__ = [
    'PartialLabelDataset', 'PartialLabelProtocol', 'SampleSplit',
    'make_partial_labels', 'num_kept_positives', 'split_train_val'
]
