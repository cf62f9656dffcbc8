"""Datasets: the real benchmarks, a multi-label dataset with observed
negatives and unknowns, the partial-label wrapper and its label generators,
and the embedded demo datasets."""
from .coco_multi_label import CocoMultiLabel
from .cub_attributes import CUBAttributes
from .custom_multi_label_dataset import CustomMultiLabelDataset
from .digit_canvases import DigitCanvases
from .formatted_arrays import load_formatted_arrays
from .label_states import evaluation_target, label_matrices, label_states
from .nus_wide import NUS_WIDE_CONCEPTS, NUSWide
from .openimages_multi_label import OpenImagesMultiLabel
from .partial import (PartialLabelDataset, PartialLabelProtocol, SampleSplit,
                      make_partial_labels, num_kept_positives, split_train_val)
from .synthetic import SyntheticShapes
from .utils import find_partial_label_dataset
from .voc_multi_label import VOCMultiLabel

__all__ = [
    'CocoMultiLabel', 'VOCMultiLabel', 'NUSWide', 'NUS_WIDE_CONCEPTS',
    'load_formatted_arrays', 'CUBAttributes', 'OpenImagesMultiLabel',
    'CustomMultiLabelDataset', 'PartialLabelDataset', 'PartialLabelProtocol',
    'SampleSplit', 'SyntheticShapes', 'DigitCanvases', 'evaluation_target',
    'label_matrices', 'label_states', 'make_partial_labels',
    'num_kept_positives', 'split_train_val', 'find_partial_label_dataset'
]
