"""Metrics MMPretrain lacks."""
from .multi_label_f1 import MultiLabelF1Metric

__all__ = ['MultiLabelF1Metric']
