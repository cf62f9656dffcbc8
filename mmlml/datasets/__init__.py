"""Partial-label datasets: the label generators, the wrapper that applies
them to any multi-label dataset, and the embedded demo dataset."""
from .partial_label_dataset import PartialLabelDataset
from .partial_labels import (make_partial_labels, num_kept_positives,
                             split_train_val)
from .synthetic import SyntheticShapes
from .utils import find_partial_label_dataset

__all__ = [
    'PartialLabelDataset', 'SyntheticShapes', 'make_partial_labels',
    'num_kept_positives', 'split_train_val', 'find_partial_label_dataset'
]
