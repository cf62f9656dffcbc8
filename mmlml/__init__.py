"""mmlml: multi-label learning from partial labels, as an MMPretrain plugin.

Importing the package applies the compatibility fixes of :mod:`mmlml.compat`
and registers every mmlml module into MMPretrain's registries, so that a
config with ``custom_imports=dict(imports=['mmlml'])`` can use them.
"""
from . import compat
from .version import __version__

compat.apply_all()

from . import datasets, evaluation, hooks, models  # noqa: E402,F401

__all__ = ['__version__']
