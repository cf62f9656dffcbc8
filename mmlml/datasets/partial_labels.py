"""Deprecated: the generators moved to :mod:`mmlml.datasets.partial`
(``mmlml.datasets.partial.protocol`` and ``mmlml.datasets.partial.draws``).
This module re-exports their public names and will be removed."""
from .moved import warn_moved
from .partial.draws import check_binary_matrix
from .partial.protocol import (make_partial_labels, num_kept_positives,
                               split_train_val)

__all__ = [
    'check_binary_matrix', 'make_partial_labels', 'num_kept_positives',
    'split_train_val'
]

warn_moved(
    __name__, 'import from mmlml.datasets (make_partial_labels, '
    'num_kept_positives, split_train_val) or mmlml.datasets.partial.draws '
    '(check_binary_matrix)')
