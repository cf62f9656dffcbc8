"""Metrics MMPretrain lacks, and the score statistics of missing labels."""
from .missing_label_statistics import MissingLabelStatistics, histogram_auc
from .multi_label_f1 import MultiLabelF1Metric

__all__ = ['MissingLabelStatistics', 'MultiLabelF1Metric', 'histogram_auc']
