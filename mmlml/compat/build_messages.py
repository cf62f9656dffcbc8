"""The error of a failed registry build, said with what to write instead.

MMEngine's ``Registry.build`` reports a misspelt ``type`` (``HilLoss``) as
``HilLoss is not in the mmpretrain::model registry`` without the names it
has, and a misspelt setting (``lambd`` of ``HillLoss``) with Python's
message about the constructor that received it last: ``PartialLabelLoss.
__init__() got an unexpected keyword argument 'lambd'`` (the base class
that ``HillLoss`` passes its other settings on to). Once mmlml is
imported (:func:`install`), the same errors, of the same types, also name:

* for an unknown ``type``: the closest registered names of the registry
  the build searched (its scope's and its parents');
* for an unknown setting: the class the config built, the closest of its
  settings and all of them (read along its constructors' ``**kwargs``).

Only the message of a build that fails changes: a build that succeeds runs
MMEngine's code as it is, and an error that is neither of the two (or that
a build nested inside this one already explained) passes unchanged.
"""
import difflib
import functools
import inspect
import re
from typing import Any, List, Optional, Tuple

__all__ = [
    'install', 'registered_names', 'closest_names', 'settings_of',
    'unknown_type_message', 'unknown_setting_message', 'explained_message'
]

#: Python's message for a keyword a constructor does not take.
_UNEXPECTED = re.compile(r"got an unexpected keyword argument '(\w+)'")


def registered_names(registry) -> List[str]:
    """The names ``registry.get`` finds without a scope prefix: those of
    ``registry`` and of its parents, sorted."""
    names = set()
    while registry is not None:
        names.update(registry.module_dict)
        registry = registry.parent
    return sorted(names)


def closest_names(name: str, names: List[str], count: int = 3) -> List[str]:
    """Up to ``count`` of ``names`` closest to ``name``: one that differs
    only in case first, then the closest by ``difflib``'s ratio."""
    same_case = [n for n in names if n.lower() == name.lower() and n != name]
    close = difflib.get_close_matches(name, names, n=count, cutoff=0.6)
    if not close:  # a short typo in a long name: compare in lower case
        lowered = {n.lower(): n for n in names}
        close = [
            lowered[n] for n in difflib.get_close_matches(
                name.lower(), list(lowered), n=count, cutoff=0.6)
        ]
    return list(dict.fromkeys(same_case + close))[:count]


def settings_of(cls: Any) -> List[str]:
    """The keyword settings a class's constructor takes, read along the
    ``**kwargs`` it passes on to its parents' constructors (``HillLoss``:
    ``lamb``, ..., then ``PartialLabelLoss``'s ``reduction``...), in that
    order; a function's own parameters."""
    if not inspect.isclass(cls):
        try:
            return _named(inspect.signature(cls).parameters.values())[0]
        except (TypeError, ValueError):
            return []
    import torch
    names: List[str] = []
    for klass in cls.__mro__:
        init = vars(klass).get('__init__')
        if init is None:
            continue
        if klass in (object, torch.nn.Module):
            break  # takes nothing a config sets
        try:
            parameters = list(inspect.signature(init).parameters.values())
        except (TypeError, ValueError):
            break
        own, passes_on = _named(parameters[1:])
        names.extend(n for n in own if n not in names)
        if not passes_on:
            break
    return names


def _named(parameters) -> Tuple[List[str], bool]:
    """The names of ``parameters`` a keyword can set, and whether a
    ``**kwargs`` is among them."""
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD,
             inspect.Parameter.KEYWORD_ONLY)
    names = [p.name for p in parameters if p.kind in kinds]
    passes_on = any(p.kind == inspect.Parameter.VAR_KEYWORD
                    for p in parameters)
    return names, passes_on


def unknown_type_message(obj_type: str, registry) -> str:
    """Why ``obj_type`` cannot be built from ``registry`` (the one the
    build searched), with the closest registered names."""
    names = registered_names(registry)
    close = closest_names(obj_type, names)
    where = f'{registry.scope}::{registry.name}'
    hint = (f'did you mean {" or ".join(close)}?'
            if close else f'it has no name close to it ({len(names)} names)')
    return (f'{obj_type} is not in the {where} registry: {hint} (or, if '
            f'{obj_type} is yours, import the module that registers it: '
            "custom_imports=dict(imports=['your.module']))")


def unknown_setting_message(cls: Any, setting: str) -> str:
    """Why ``cls`` cannot be built with ``setting``: the closest of its
    settings and all of them."""
    settings = settings_of(cls)
    close = closest_names(setting, settings, count=1)
    name = getattr(cls, '__name__', repr(cls))
    hint = f'did you mean {close[0]!r}? ' if close else ''
    listed = ', '.join(settings) if settings else 'none'
    return (f'{name} has no setting {setting!r}: {hint}its settings are '
            f'{listed}')


def _built_type(cfg, default_args) -> Optional[Any]:
    """The ``type`` of the build, from ``cfg`` or ``default_args``."""
    for source in (cfg, default_args):
        if isinstance(source, dict) and 'type' in source:
            return source['type']
    return None


def _explained(error: BaseException, message: str) -> BaseException:
    """``error``'s type with ``message``, marked as explained (a build
    that holds this one passes it on unchanged)."""
    try:
        better = type(error)(message)
    except Exception:  # an exception type of other arguments
        return error
    better.__traceback__ = error.__traceback__
    setattr(better, '_mmlml_explained', True)
    return better


def explained_message(error: BaseException) -> Optional[str]:
    """The message of an error this module explained (an unknown type or
    setting), for a tool to print in one line; None for any other error.
    A ``KeyError``'s message without the quotes ``str`` gives it."""
    if not getattr(error, '_mmlml_explained', False):
        return None
    return str(error.args[0]) if error.args else str(error)


def _better_error(registry, cfg, args, kwargs,
                  error: BaseException) -> Optional[BaseException]:
    """The explained form of ``error`` raised by ``registry.build(cfg,
    ...)``, or None where it is not an unknown type or setting of this
    build."""
    if getattr(error, '_mmlml_explained', False):
        return None
    default_args = kwargs.get('default_args', args[0] if args else None)
    obj_type = _built_type(cfg, default_args)
    scope = cfg.get('_scope_') if isinstance(cfg, dict) else None
    if isinstance(error, KeyError) and isinstance(obj_type, str):
        with registry.switch_scope_and_registry(scope) as searched:
            if searched.get(obj_type) is not None:
                return None  # another KeyError, raised while building
            return _explained(error, unknown_type_message(obj_type, searched))
    if isinstance(error, TypeError) and obj_type is not None:
        match = _UNEXPECTED.search(str(error))
        if match is None or match.group(1) not in cfg:
            return None  # not a setting this build was given
        if isinstance(obj_type, str):
            with registry.switch_scope_and_registry(scope) as searched:
                obj_type = searched.get(obj_type)
        if obj_type is None or match.group(1) in settings_of(obj_type):
            return None
        return _explained(error,
                          unknown_setting_message(obj_type, match.group(1)))
    return None


def install() -> bool:
    """Extend ``mmengine.registry.Registry.build`` so that an unknown
    ``type`` or setting is reported as :func:`unknown_type_message` and
    :func:`unknown_setting_message` say (idempotent). Returns False where
    it was installed already."""
    from mmengine.registry import Registry
    build = Registry.build
    if getattr(build, '_mmlml_messages', False):
        return False

    @functools.wraps(build)
    def build_with_messages(self, cfg, *args, **kwargs):
        try:
            return build(self, cfg, *args, **kwargs)
        except (KeyError, TypeError) as error:
            better = _better_error(self, cfg, args, kwargs, error)
            if better is None or better is error:
                raise
            raise better from None

    setattr(build_with_messages, '_mmlml_messages', True)
    Registry.build = build_with_messages
    return True
