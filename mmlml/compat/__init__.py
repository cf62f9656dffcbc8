"""What mmlml repairs in the MMPretrain 1.2 / MMEngine 0.10 stack, applied
once when ``mmlml`` is imported (docs/compatibility.md):

* :mod:`.stack_repairs`: the repairs without which the stack cannot run on
  current PyTorch and setuptools (checkpoint loading, the package lookup
  of ``mmpretrain::`` configs, CPU ``torchrun`` and Slurm, the compiled
  optimizer step, the config text formatted once, checkpoints written
  atomically, the build errors of :mod:`.build_messages`),
  :func:`apply_all` and the log line of what was applied;
* :mod:`.checkpoint_policy`: one loading policy for every checkpoint
  source MMEngine knows (``weights_only=True`` with an allow-list, the
  refusals and their messages, a damaged file named in one line, the
  offline backbone switch);
* :mod:`.build_messages`: the errors of a failed registry build that name
  the closest registered types and the settings of the class;
* :mod:`.checkpoint_allow_list`: that allow-list (what MMEngine's own
  checkpoints hold besides tensors, and why each is harmless).

The repairs and the allow-list's public names are importable from here
(``mmlml.compat.applied_fixes()``, ``with mmlml.compat.checkpoint_globals():
...``); the rest of the checkpoint policy from its module.
"""
from . import stack_repairs
from .checkpoint_policy import (CheckpointDamaged, CheckpointRefused,
                                checkpoint_globals,
                                checkpoint_safe_global_names,
                                checkpoint_safe_globals)
from .stack_repairs import *  # noqa: F401,F403

__all__ = stack_repairs.__all__ + [
    'CheckpointDamaged', 'CheckpointRefused', 'checkpoint_globals',
    'checkpoint_safe_globals', 'checkpoint_safe_global_names'
]
