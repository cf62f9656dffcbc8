"""The allow-list of what a checkpoint may hold besides tensors, containers
and plain values, and the context that allow-lists it for
``torch.load(..., weights_only=True)``.

:func:`checkpoint_safe_globals` lists the globals (what MMEngine's own
checkpoints pickle) and says why each is harmless;
:func:`checkpoint_globals` adds them to torch's allow-list inside a block.
:mod:`mmlml.compat.checkpoint_policy` loads every checkpoint MMEngine
loads with them.
"""
import contextlib
import functools
import importlib
import pickle
import threading
from typing import Any, Dict, Iterator, List, Optional, Tuple

import torch

__all__ = [
    'BLOCKED_MODULES', 'safe_globals', 'checkpoint_safe_globals',
    'checkpoint_safe_global_names', 'checkpoint_globals'
]

#: The statistics methods of ``HistoryBuffer`` that its pickled state
#: refers to, and the annealing functions that a ``OneCycleParamScheduler``
#: keeps in its state dict: the only ``getattr(owner, name)`` calls
#: (pickle protocol 2's form of a method reference) allowed in a
#: checkpoint.
_ALLOWED_ATTRIBUTES: Dict[str, Tuple[str, ...]] = {
    'mmengine.logging.history_buffer.HistoryBuffer':
    ('min', 'max', 'current', 'mean'),
    'mmengine.optim.scheduler.param_scheduler.OneCycleParamScheduler':
    ('_annealing_cos', '_annealing_linear'),
}
#: Modules whose globals torch refuses even when they are allow-listed.
BLOCKED_MODULES = ('os', 'posix', 'nt', 'sys')


class _AttributeOwner:
    """Stands in a checkpoint for a class that appears there only as the
    owner of allowed attributes (``getattr(owner, name)``): it can be
    neither called nor instantiated, so allow-listing it does not allow
    building objects of the class."""

    def __init__(self, cls: type):
        self.cls = cls

    def __call__(self, *args, **kwargs):
        raise pickle.UnpicklingError(
            f'{self.cls.__qualname__} may only appear in a checkpoint as the '
            'owner of an allowed attribute')

    def __repr__(self) -> str:
        return f'<owner {self.cls.__module__}.{self.cls.__qualname__}>'


def _import(path: str):
    """The object at a dotted ``module.name`` path."""
    module, _, name = path.rpartition('.')
    return getattr(importlib.import_module(module), name)


@functools.lru_cache(maxsize=1)
def _owners() -> Dict[str, object]:
    """Dotted class path -> the object a checkpoint's global resolves to."""
    from mmengine.logging.history_buffer import HistoryBuffer
    owners = {}
    for path in _ALLOWED_ATTRIBUTES:
        cls = _import(path)
        # HistoryBuffer is allow-listed as itself (its objects are built);
        # the other owners only through a stand-in.
        owners[path] = cls if cls is HistoryBuffer else _AttributeOwner(cls)
    return owners


def _checkpoint_getattr(owner, name: str):
    """``getattr`` restricted to :data:`_ALLOWED_ATTRIBUTES`: what a
    checkpoint's ``builtins.getattr`` global resolves to."""
    owners = _owners()
    for path, names in _ALLOWED_ATTRIBUTES.items():
        if owner is owners[path] and name in names:
            cls = owner.cls if isinstance(owner, _AttributeOwner) else owner
            return getattr(cls, name)
    raise pickle.UnpicklingError(
        f'getattr({owner!r}, {name!r}) is not allowed in a checkpoint: '
        'only the statistics methods of HistoryBuffer and the annealing '
        'functions of OneCycleParamScheduler are')


def _numpy_globals() -> List[tuple]:
    """numpy's array and scalar reconstructors, the array and dtype classes,
    and the classes of the numeric dtypes."""
    import numpy as np
    entries = []
    for name in ('_reconstruct', 'scalar'):
        found = None
        for module in ('numpy._core.multiarray', 'numpy.core.multiarray'):
            try:
                found = getattr(importlib.import_module(module), name)
                break
            except (ImportError, AttributeError):
                continue
        if found is not None:
            # Files written under numpy 2 name numpy._core, under numpy 1
            # numpy.core: both names resolve to the installed function.
            entries += [(found, f'numpy._core.multiarray.{name}'),
                        (found, f'numpy.core.multiarray.{name}')]
    entries += [(np.ndarray, 'numpy.ndarray'), (np.dtype, 'numpy.dtype')]
    # The dtype of an unpickled array is rebuilt (BUILD) as an instance of
    # its dtype class (numpy.dtypes.Float64DType...): bool, integers,
    # floating point and complex only (no object, string, void or
    # datetime dtypes).
    codes = '?' + np.typecodes['AllInteger'] + np.typecodes['AllFloat']
    classes = {type(np.dtype(code)) for code in codes}
    for cls in sorted(classes, key=lambda c: c.__qualname__):
        entries.append((cls, f'{cls.__module__}.{cls.__qualname__}'))
    return entries


@functools.lru_cache(maxsize=1)
def safe_globals() -> Tuple[Tuple[Any, str], ...]:
    """The entries of :func:`checkpoint_safe_globals`, as a tuple made once
    (do not modify the objects it holds)."""
    entries = [(owner, path) for path, owner in _owners().items()]
    entries.append((_checkpoint_getattr, 'builtins.getattr'))
    entries += _numpy_globals()
    return tuple(entries)


def checkpoint_safe_globals() -> List[tuple]:
    """The globals allow-listed while MMEngine loads a checkpoint, as
    ``(object, 'module.name')`` pairs for
    :func:`torch.serialization.add_safe_globals`.

    They are what MMEngine's own checkpoints (``CheckpointHook``,
    ``Runner.save_checkpoint``, with ``EMAHook``, a ``OneCycleLR`` schedule
    and mmlml's label-store state) pickle besides tensors, containers and
    plain Python values, which torch accepts by default:

    * ``mmengine.logging.history_buffer.HistoryBuffer``: the logged scalars
      of the message hub (``checkpoint['message_hub']['log_scalars']``).
      Its state holds its statistics methods, pickled as
      ``getattr(HistoryBuffer, 'min')``...
    * ``builtins.getattr``: resolves to a restricted ``getattr`` that only
      returns those methods (``min``, ``max``, ``current``, ``mean``) and
      ``OneCycleParamScheduler``'s annealing functions, which its state
      dict holds (``anneal_func``); any other call is refused.
    * ``mmengine.optim.scheduler.param_scheduler.OneCycleParamScheduler``:
      as the owner of those functions only; it resolves to a stand-in that
      cannot be called or instantiated.
    * ``numpy._core.multiarray._reconstruct`` (and its numpy 1 name
      ``numpy.core.multiarray._reconstruct``), ``numpy.ndarray`` and
      ``numpy.dtype``: the arrays of the ``HistoryBuffer`` objects.
    * ``numpy._core.multiarray.scalar`` (and ``numpy.core.multiarray.
      scalar``): numpy scalars, e.g. the message hub's ``eta``.
    * The classes of the boolean, integer, floating-point and complex
      dtypes (``numpy.dtypes.Float64DType``... under numpy 2,
      ``numpy.dtype[float64]``... under numpy 1): a pickled dtype is rebuilt
      as an instance of its class, which must be allow-listed. MMEngine's
      buffers hold float64 and int64; the other numeric dtypes are as
      harmless and appear with other logged values.

    None of them runs a callable named by the file: the reconstructors only
    build arrays, scalars and dtypes from the values given.
    """
    return list(safe_globals())


def checkpoint_safe_global_names() -> List[str]:
    """The dotted names of :func:`checkpoint_safe_globals`."""
    return [name for _, name in safe_globals()]


_GLOBALS_LOCK = threading.Lock()
_globals_depth = 0
_globals_context: Optional[contextlib.ExitStack] = None


@contextlib.contextmanager
def checkpoint_globals() -> Iterator[None]:
    """Allow-list :func:`checkpoint_safe_globals` for ``torch.load(...,
    weights_only=True)`` inside the block (nestable, thread-safe).

    The entries are added to torch's allow-list on entering the outermost
    block and removed on leaving it, except those that were allow-listed
    already (e.g. by the user's own ``add_safe_globals``), which stay.

    Example:
        >>> with checkpoint_globals():
        ...     ckpt = torch.load('epoch_2.pth', weights_only=True)
    """
    global _globals_depth, _globals_context
    with _GLOBALS_LOCK:
        if _globals_depth == 0:
            present = set(torch.serialization.get_safe_globals())
            # (owner, name) pairs: torch types the owners as callables
            added: List[Any] = [g for g in safe_globals() if g not in present]
            stack = contextlib.ExitStack()
            stack.enter_context(torch.serialization.safe_globals(added))
            _globals_context = stack
        _globals_depth += 1
    try:
        yield
    finally:
        with _GLOBALS_LOCK:
            _globals_depth -= 1
            if _globals_depth == 0 and _globals_context is not None:
                _globals_context.close()
                _globals_context = None
