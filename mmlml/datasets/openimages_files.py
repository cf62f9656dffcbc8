"""Deprecated: moved to
:mod:`mmlml.datasets.benchmarks.openimages_files`. This module re-exports its
names and will be removed."""
import warnings

from .benchmarks.openimages_files import *  # noqa: F401,F403
from .benchmarks.openimages_files import __all__  # noqa: F401

warnings.warn(
    'mmlml.datasets.openimages_files is deprecated: import '
    'mmlml.datasets.benchmarks.openimages_files instead.',
    DeprecationWarning,
    stacklevel=2)
