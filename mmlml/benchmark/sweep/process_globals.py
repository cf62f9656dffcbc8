"""What a training changes in the process that runs it, saved before and
put back after: a warm worker (:mod:`.worker`) runs its trials one after
the other in its own process, each on a fresh ``Runner``, and each must
start as a fresh process would, whatever the one before did or how it
failed.

Saved and restored (:class:`ProcessGlobals`): the random states (Python,
NumPy, torch and every CUDA device), the global instances of MMEngine's
``ManagerMixin`` classes (``MessageHub``, ``MMLogger``, ``Visualizer``,
``DefaultScope``, ...: the instances a run made are dropped, their log
files closed), the registries' entries (a name a run registered again
with ``force`` is put back; the names it added stay registered, as their
modules stay imported: MMPretrain registers its modules on their first
use, once a process), the environment, the working directory,
``sys.path``, the standard loggers' handlers and levels, the warning
filters, the signal handlers (in the main thread), torch's thread count,
deterministic algorithms and cuDNN flags, OpenCV's thread count and the
multiprocessing start method (``Runner`` sets both).
"""
import gc
import logging
import multiprocessing as mp
import os
import random
import signal
import sys
import threading
import warnings
from typing import Any, Dict, List, Tuple

import numpy as np
import torch

__all__ = ['ProcessGlobals']


def _manager_classes() -> List[type]:
    """Every class with its own ``ManagerMixin`` instances (each class of
    MMEngine's ``ManagerMeta`` holds an ``_instance_dict`` of its own)."""
    from mmengine.utils import ManagerMixin
    found, todo = [], [ManagerMixin]
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if '_instance_dict' in vars(cls):
            found.append(cls)
    return list(dict.fromkeys(found))


def _registries() -> List[Any]:
    """MMEngine's, MMPretrain's and mmlml's registries and their
    children."""
    import mmengine.registry as engine
    import mmpretrain.registry as pretrain
    from mmengine.registry import Registry

    import mmlml.registry as own
    found: Dict[int, Any] = {}
    todo = [
        value for module in (engine, pretrain, own)
        for value in vars(module).values() if isinstance(value, Registry)
    ]
    while todo:
        registry = todo.pop()
        if id(registry) not in found:
            found[id(registry)] = registry
            todo.extend(registry.children.values())
    return list(found.values())


def _loggers() -> List[logging.Logger]:
    manager = logging.Logger.manager
    return [logging.getLogger()] + [
        logger for logger in list(manager.loggerDict.values())
        if isinstance(logger, logging.Logger)
    ]


class ProcessGlobals:
    """A snapshot of the globals a training touches (the module's list);
    :meth:`restore` puts them back. Use it as a context manager around
    one training::

        with ProcessGlobals():
            train_trial(...)
    """

    def __init__(self):
        self.random = random.getstate()
        self.numpy = np.random.get_state()
        self.torch = torch.get_rng_state()
        self.cuda = torch.cuda.get_rng_state_all() \
            if torch.cuda.is_available() else None
        self.managers = {
            cls: dict(cls._instance_dict)  # type: ignore[attr-defined]
            for cls in _manager_classes()
        }
        self.registries = [(registry, dict(registry._module_dict),
                            dict(registry.children))
                           for registry in _registries()]
        self.environ = dict(os.environ)
        self.cwd = os.getcwd()
        self.path = list(sys.path)
        self.loggers: List[Tuple[logging.Logger, list, int, bool, bool]] = [
            (logger, list(logger.handlers), logger.level, logger.propagate,
             logger.disabled) for logger in _loggers()
        ]
        self.logger_names = set(logging.Logger.manager.loggerDict)
        self.warnings = list(warnings.filters)
        self.signals: Dict[int, Any] = {}
        if threading.current_thread() is threading.main_thread():
            for signum in signal.valid_signals():
                try:
                    self.signals[signum] = signal.getsignal(signum)
                except (OSError, ValueError):
                    pass
        self.threads = torch.get_num_threads()
        self.deterministic = (
            torch.are_deterministic_algorithms_enabled(),
            torch.is_deterministic_algorithms_warn_only_enabled())
        self.cudnn = (torch.backends.cudnn.benchmark,
                      torch.backends.cudnn.deterministic)
        self.start_method = mp.get_start_method(allow_none=True)
        self.cv2_threads = self._cv2().getNumThreads() \
            if self._cv2() else None

    @staticmethod
    def _cv2():
        return sys.modules.get('cv2')

    def restore(self) -> None:
        """Put every saved global back; what a run added is dropped (its
        loggers' handlers closed)."""
        random.setstate(self.random)
        np.random.set_state(self.numpy)
        torch.set_rng_state(self.torch)
        if self.cuda is not None:
            torch.cuda.set_rng_state_all(self.cuda)
        for cls in _manager_classes():
            saved = self.managers.get(cls, {})
            instances = cls._instance_dict  # type: ignore[attr-defined]
            for name, instance in list(instances.items()):
                if saved.get(name) is not instance:
                    self._close(instance)
            instances.clear()
            instances.update(saved)
        for registry, modules, children in self.registries:
            registry._module_dict.update(modules)
            registry.children.update(children)
        os.environ.clear()
        os.environ.update(self.environ)
        os.chdir(self.cwd)
        sys.path[:] = self.path
        for logger, handlers, level, propagate, disabled in self.loggers:
            for handler in list(logger.handlers):
                if handler not in handlers:
                    logger.removeHandler(handler)
                    handler.close()
            logger.handlers[:] = handlers
            logger.setLevel(level)
            logger.propagate, logger.disabled = propagate, disabled
        for name in set(logging.Logger.manager.loggerDict) - \
                self.logger_names:
            added = logging.Logger.manager.loggerDict[name]
            if isinstance(added, logging.Logger):
                for handler in list(added.handlers):
                    added.removeHandler(handler)
                    handler.close()
        warnings.filters[:] = self.warnings  # type: ignore[index]
        warnings._filters_mutated()  # type: ignore[attr-defined]
        for signum, saved in self.signals.items():
            if saved is not None and signal.getsignal(signum) is not saved:
                try:
                    signal.signal(signum, saved)
                except (OSError, ValueError, TypeError):
                    pass
        torch.set_num_threads(self.threads)
        torch.use_deterministic_algorithms(
            self.deterministic[0], warn_only=self.deterministic[1])
        torch.backends.cudnn.benchmark, torch.backends.cudnn.deterministic = \
            self.cudnn
        if mp.get_start_method(allow_none=True) != self.start_method:
            mp.set_start_method(self.start_method, force=True)
        if self.cv2_threads is not None and self._cv2():
            self._cv2().setNumThreads(self.cv2_threads)
        gc.collect()  # the run's runner, model and loaders, held in cycles

    @staticmethod
    def _close(instance) -> None:
        """Close the handlers of a logger instance that a run made (its
        log file)."""
        if isinstance(instance, logging.Logger):
            for handler in list(instance.handlers):
                instance.removeHandler(handler)
                handler.close()

    def __enter__(self) -> 'ProcessGlobals':
        return self

    def __exit__(self, *exc) -> None:
        self.restore()
