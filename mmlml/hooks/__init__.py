"""Epoch-level machinery (pseudo-labelling, label correction, diagnostics)."""
from .diagnostics import (MissingLabelDiagnosticsHook, MissingLabelStatistics,
                          find_partial_label_dataset, histogram_auc)

__all__ = [
    'MissingLabelDiagnosticsHook', 'MissingLabelStatistics',
    'find_partial_label_dataset', 'histogram_auc'
]
