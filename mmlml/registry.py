"""The registries mmlml registers into.

mmlml registers its modules directly into MMPretrain's registries, so that a
stock config with ``default_scope='mmpretrain'`` builds
``dict(type='HillLoss')`` once ``custom_imports=dict(imports=['mmlml'])`` has
imported the package. A child registry would be invisible to such a config.
Every mmlml type name is distinct from MMPretrain's own (which owns
``FocalLoss``, ``AsymmetricLoss``, ``MultiLabelMetric``...), because
registering an existing name raises at import time.
"""
from mmpretrain.registry import (DATASETS, HOOKS, METRICS, MODELS,
                                 PARAM_SCHEDULERS, TRANSFORMS)

__all__ = [
    'DATASETS', 'HOOKS', 'METRICS', 'MODELS', 'PARAM_SCHEDULERS', 'TRANSFORMS'
]
