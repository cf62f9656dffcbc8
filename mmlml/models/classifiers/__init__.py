"""Classifiers for methods that need more than a loss: LASD's multi-view
consistency regularisation (``ConsistencyClassifier``) and the data
preprocessor for its several views of each image."""
from .consistency_classifier import (ConsistencyClassifier,
                                     multi_view_consistency)
from .multi_view_data_preprocessor import (MultiViewClsDataPreprocessor,
                                           is_multi_view_batch)

__all__ = [
    'ConsistencyClassifier', 'multi_view_consistency',
    'MultiViewClsDataPreprocessor', 'is_multi_view_batch'
]
