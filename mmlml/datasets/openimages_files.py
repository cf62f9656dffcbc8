"""Deprecated: moved to
:mod:`mmlml.datasets.benchmarks.openimages_files`. This module re-exports its
names and will be removed."""
from .benchmarks.openimages_files import *  # noqa: F401,F403
from .benchmarks.openimages_files import __all__  # noqa: F401
from .moved import warn_moved

warn_moved(__name__, 'import mmlml.datasets.benchmarks.openimages_files')
