"""``default_hooks`` entries set to None, for the hooks that mmlml's configs
add there.

MMEngine's ``Runner`` reads ``default_hooks.<name>=None`` as "do not
register this hook" only for its own default hooks; for any other name
(mmlml's ``setup_check`` and ``resume_check``, MMPretrain's
``visualization``) it stops with a bare ``AssertionError``.
:func:`remove_disabled_default_hooks`, which mmlml's ``tools/train.py`` and
``tools/test.py`` apply before building the Runner, gives None the same
meaning for every name.
"""
from typing import List

__all__ = ['MMENGINE_DEFAULT_HOOKS', 'remove_disabled_default_hooks']

#: The default hooks of MMEngine's ``Runner.register_default_hooks``: for
#: these it removes a hook set to None itself.
MMENGINE_DEFAULT_HOOKS = ('runtime_info', 'timer', 'sampler_seed', 'logger',
                          'param_scheduler', 'checkpoint')


def remove_disabled_default_hooks(cfg) -> List[str]:
    """Turn off the default hooks that ``cfg`` sets to None.

    The entries of ``cfg.default_hooks`` set to None whose names MMEngine
    does not know are removed from the config (MMEngine would assert on
    them); those of MMEngine's default hooks stay None, for MMEngine to
    remove (removing them from the config would bring MMEngine's default
    back).

    Args:
        cfg (Config): The config, changed in place.

    Returns:
        list[str]: The names of all the default hooks set to None, e.g.
        ``['resume_check']``: the caller must not add them back.
    """
    hooks = cfg.get('default_hooks') or {}
    disabled = [name for name, hook in hooks.items() if hook is None]
    for name in disabled:
        if name not in MMENGINE_DEFAULT_HOOKS:
            hooks.pop(name)
    return disabled
