"""Partial-label datasets: the label generators, the wrapper that applies
them to any multi-label dataset, and the embedded demo dataset."""
from .partial_label_dataset import PartialLabelDataset
from .partial_labels import (make_partial_labels, num_kept_positives,
                             split_train_val)
from .synthetic import SyntheticShapes

__all__ = [
    'PartialLabelDataset', 'SyntheticShapes', 'make_partial_labels',
    'num_kept_positives', 'split_train_val'
]
