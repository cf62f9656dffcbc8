"""Deprecated: moved to
:mod:`mmlml.datasets.benchmarks.openimages_npz`. This module re-exports its
names and will be removed."""
import warnings

from .benchmarks.openimages_npz import *  # noqa: F401,F403
from .benchmarks.openimages_npz import __all__  # noqa: F401

warnings.warn(
    'mmlml.datasets.openimages_npz is deprecated: import '
    'mmlml.datasets.benchmarks.openimages_npz instead.',
    DeprecationWarning,
    stacklevel=2)
