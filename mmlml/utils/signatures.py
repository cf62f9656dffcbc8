"""What a class's constructor accepts, read along its mmlml class chain.

A subclass takes only its own settings by name and passes its parent's on
through ``**kwargs`` (``GPRLoss`` takes ``rho``...; ``GRLoss`` takes
``q2``...; ``PartialLabelLoss`` takes ``reduction``...), so that each
default is written once. Whatever reads the settings or their defaults
from a signature (the signature tests, ``tools/train.py --smoke``'s
epoch scaling, the method presets) reads them here, never with a bare
``inspect.signature``, which would stop at the ``**kwargs``.
"""
import inspect
from typing import Dict

__all__ = ['constructor_parameters']

_VAR_KINDS = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def constructor_parameters(cls: type) -> Dict[str, inspect.Parameter]:
    """The named parameters of ``cls``'s constructor, by name, and where
    it takes ``*args``/``**kwargs`` those of the next constructor up its
    MRO, as long as that is an mmlml class's (a subclass's parameter
    hides its parent's of the same name). A ``*args``/``**kwargs`` that
    reaches a stock parent (MMPretrain's, MMEngine's) is kept, under its
    own name, at the end: the class accepts more than is listed."""
    params: Dict[str, inspect.Parameter] = {}
    passed_on: Dict[str, inspect.Parameter] = {}
    for klass in cls.__mro__:
        init = vars(klass).get('__init__')
        if init is None or klass is object:
            continue
        if passed_on and klass.__module__.split('.')[0] != 'mmlml':
            break  # a stock parent takes what was passed on
        passed_on = {}
        for name, param in list(
                inspect.signature(init).parameters.items())[1:]:
            if param.kind in _VAR_KINDS:
                passed_on[name] = param
            else:
                params.setdefault(name, param)
        if not passed_on:
            break
    return {**params, **passed_on}
