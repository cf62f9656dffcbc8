"""Metrics MMPretrain lacks, the score statistics of missing labels, and
the ranking with ties that the per-class AP of OPML-SP's correction and
CRISP's class priors share (:mod:`.tied_ranking`)."""
from .class_wise_table import ClassWiseMultiLabelMetric
from .missing_label_statistics import MissingLabelStatistics, histogram_auc
from .multi_label_f1 import MultiLabelF1Metric
from .partial_label_average_precision import PartialLabelAveragePrecision

__all__ = [
    'ClassWiseMultiLabelMetric', 'MissingLabelStatistics',
    'MultiLabelF1Metric', 'PartialLabelAveragePrecision', 'histogram_auc'
]
