"""Metrics MMPretrain lacks, and the score statistics of missing labels."""
from .class_wise_table import ClassWiseMultiLabelMetric
from .missing_label_statistics import MissingLabelStatistics, histogram_auc
from .multi_label_f1 import MultiLabelF1Metric
from .partial_label_average_precision import PartialLabelAveragePrecision

__all__ = [
    'ClassWiseMultiLabelMetric', 'MissingLabelStatistics',
    'MultiLabelF1Metric', 'PartialLabelAveragePrecision', 'histogram_auc'
]
