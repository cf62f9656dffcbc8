"""The head of each method of a benchmark record, read from its config.

A method's share of the gap depends on its head as much as on its loss:
on all labels BoostLU's class-activation-map head beats the best pooled
linear head. The reports therefore measure each method also against the
best run on all labels with the same kind of head (the same-head oracle,
:func:`~.oracle.per_head_ends`). The kind of a method's head is read
from its config (``model.head.type``, parsed in the record's domain by
:func:`~mmlml.benchmark.sweep.settings.load_config`): an activation-map
head is one of :data:`ACTIVATION_MAP_HEADS`, any other head (the pooled
linear heads ``MultiLabelLinearClsHead`` and
``PartialLabelLinearClsHead``, also under LASD-CR's
``ConsistencyClassifier``) is a pooled linear one.
"""
import contextlib
import logging
import os
import os.path as osp
from functools import lru_cache
from typing import Dict, Iterator, Optional, Sequence

from mmlml.benchmark.sweep.settings import abs_path, load_config

__all__ = [
    'POOLED_LINEAR', 'ACTIVATION_MAP', 'ACTIVATION_MAP_HEADS', 'head_kind',
    'config_head', 'record_heads'
]

#: The kind of head that pools the features and applies a linear layer.
POOLED_LINEAR = 'pooled linear'

#: The kind of head that scores each class on the feature map (a class
#: activation map) before pooling.
ACTIVATION_MAP = 'activation map'

#: The head types (``model.head.type``) of the activation-map kind.
ACTIVATION_MAP_HEADS = frozenset({'BoostLUClsHead'})


def head_kind(head_type: str) -> str:
    """The kind of a head type: :data:`ACTIVATION_MAP` for one of
    :data:`ACTIVATION_MAP_HEADS`, else :data:`POOLED_LINEAR`."""
    return ACTIVATION_MAP if head_type in ACTIVATION_MAP_HEADS else \
        POOLED_LINEAR


@contextlib.contextmanager
def _quiet_parse() -> Iterator[None]:
    """MMEngine logs each environment variable a config reads; a report
    parses every config of a record and says nothing of it."""
    from mmengine.logging import MMLogger
    logger = MMLogger.get_current_instance()
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(level)


@lru_cache(maxsize=None)
def _head_type(path: str, domain: Optional[str], mtime: float) -> str:
    with _quiet_parse():
        return load_config(path, domain=domain).model.head.type


def config_head(config: str, domain: Optional[str] = None) -> Optional[str]:
    """The kind of the head of ``config`` (a path, relative to the
    repository unless absolute) parsed in ``domain``; None where there is
    no such file."""
    path = abs_path(config)
    if not osp.isfile(path):
        return None
    return head_kind(_head_type(path, domain, os.stat(path).st_mtime))


def record_heads(configs: Sequence[str],
                 domain: Optional[str] = None) -> Dict[str, str]:
    """``{name: head kind}`` of a record's ``configs`` (its rows are named
    by their configs' file names), in their order; a config that is no
    file (moved, or a test's stand-in name) is left out: its rows have no
    same-head share."""
    heads = {}
    for config in configs:
        kind = config_head(config, domain)
        if kind is not None:
            heads[osp.splitext(osp.basename(config))[0]] = kind
    return heads
