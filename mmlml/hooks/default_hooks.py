"""``default_hooks`` entries set to None, for the hooks that mmlml's configs
add there.

MMEngine's ``Runner`` reads ``default_hooks.<name>=None`` as "do not
register this hook" only for its own default hooks; for any other name
(mmlml's ``setup_check`` and ``resume_check``, MMPretrain's
``visualization``) it stops with a bare ``AssertionError``. Once mmlml is
imported, every Runner gives None the same meaning for every name
(:func:`split_disabled_default_hooks`, applied where mmlml extends
``Runner.register_hooks``: :mod:`.training_setup_check_hook`), and mmlml
adds no hook of its own that a config turned off
(:func:`disabled_default_hooks`).
"""
from typing import List, Optional, Tuple

__all__ = [
    'MMENGINE_DEFAULT_HOOKS', 'disabled_default_hooks',
    'split_disabled_default_hooks'
]

#: The default hooks of MMEngine's ``Runner.register_default_hooks``: for
#: these it removes a hook set to None itself.
MMENGINE_DEFAULT_HOOKS = ('runtime_info', 'timer', 'sampler_seed', 'logger',
                          'param_scheduler', 'checkpoint')


def disabled_default_hooks(cfg) -> List[str]:
    """The names of the default hooks that ``cfg`` sets to None, e.g.
    ``['resume_check']``: turned off, never to be added back."""
    hooks = cfg.get('default_hooks') or {}
    return [name for name, hook in hooks.items() if hook is None]


def split_disabled_default_hooks(
        default_hooks: Optional[dict]) -> Tuple[Optional[dict], List[str]]:
    """``default_hooks`` without the entries set to None whose names
    MMEngine does not know (it would assert on them), and all the names
    set to None. Those of MMEngine's own default hooks stay None, for
    MMEngine to remove (leaving them out would bring its default back)."""
    if not default_hooks:
        return default_hooks, []
    disabled = [name for name, hook in default_hooks.items() if hook is None]
    kept = {
        name: hook
        for name, hook in default_hooks.items()
        if hook is not None or name in MMENGINE_DEFAULT_HOOKS
    }
    return kept, disabled
