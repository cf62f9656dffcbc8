"""The warning of the old module paths of :mod:`mmlml.datasets` (modules
that moved and whose old path re-exports the new one until it is
removed)."""
import warnings

__all__ = ['warn_moved']


def warn_moved(old: str, instead: str) -> None:
    """Warn, at the import of the old module ``old``, that it is deprecated
    and what to import ``instead`` (a DeprecationWarning that points at the
    importing line)."""
    # 1: here, 2: the old module, 3: the line that imports it.
    warnings.warn(
        f'{old} is deprecated: {instead} instead.',
        DeprecationWarning,
        stacklevel=3)
