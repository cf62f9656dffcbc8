"""Datasets: a multi-label dataset with observed negatives and unknowns
(``custom_multi_label_dataset.py``) and its label encodings and files; the
real benchmarks' readers on it (``benchmarks/``); the generated demo
domains (``domains/``); the partial-label wrapper and its label
generators (``partial/``)."""
from .benchmarks import (NUS_WIDE_CONCEPTS, CocoMultiLabel, CUBAttributes,
                         NUSWide, OpenImagesMultiLabel, VOCMultiLabel,
                         load_formatted_arrays)
from .custom_multi_label_dataset import CustomMultiLabelDataset
from .domains import DigitCanvases, PhotoCanvases, SyntheticShapes
from .label_states import evaluation_target, label_matrices, label_states
from .partial import (PartialLabelDataset, PartialLabelProtocol, SampleSplit,
                      make_partial_labels, num_kept_positives, split_train_val)
from .utils import find_partial_label_dataset, known_targets

__all__ = [
    'CocoMultiLabel', 'VOCMultiLabel', 'NUSWide', 'NUS_WIDE_CONCEPTS',
    'load_formatted_arrays', 'CUBAttributes', 'OpenImagesMultiLabel',
    'CustomMultiLabelDataset', 'PartialLabelDataset', 'PartialLabelProtocol',
    'SampleSplit', 'SyntheticShapes', 'DigitCanvases', 'PhotoCanvases',
    'evaluation_target', 'label_matrices', 'label_states',
    'make_partial_labels', 'num_kept_positives', 'split_train_val',
    'find_partial_label_dataset', 'known_targets'
]
