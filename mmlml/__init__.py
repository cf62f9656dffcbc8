"""mmlml: multi-label learning from partial labels, as an MMPretrain plugin.

Importing the package applies the repairs of :mod:`mmlml.compat` (without
which the MMPretrain 1.2 stack does not run on current PyTorch) and
registers every mmlml module into MMPretrain's registries, so that a config
with ``custom_imports=dict(imports=['mmlml'])`` can use them. Nothing else
of MMPretrain or MMEngine changes, but for a Runner that uses an mmlml
component (a loss, a head, the dataset wrapper...), which also gets
mmlml's check of its settings before the first iteration
(:func:`mmlml.hooks.training_setup_check_hook.add_setup_check_to_mmlml_runs`).

mmcv-lite (which has no compiled ops) warns on import that
``MultiScaleDeformableAttention`` is missing, a module no mmlml component
uses; that one warning is filtered, by its message, before anything
imports mmcv.
"""
import warnings

warnings.filterwarnings(
    'ignore',
    message='Fail to import ``MultiScaleDeformableAttention``',
    category=UserWarning)

from . import compat  # noqa: E402 isort: skip
from .version import __version__  # noqa: E402 isort: skip

compat.apply_all()

from . import datasets, evaluation, hooks  # noqa: E402,F401 isort: skip
from . import models, schedulers  # noqa: E402,F401 isort: skip
from . import pseudo_labellers  # noqa: E402,F401 isort: skip
# The sweep's pruning hook, registered for its runs (the rest of
# mmlml.benchmark, and Optuna, are imported by the sweep only).
from .benchmark.training import \
    optuna_pruning_hook  # noqa: E402,F401 isort: skip

__all__ = ['__version__']
