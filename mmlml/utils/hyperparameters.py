"""Declared hyperparameters: one declaration gives a hyperparameter's
default and its check, for a functional loss (:func:`check_hyperparameters`)
and for a class's settings (:func:`check_settings`).

A class declares its settings in ``hyperparameters`` (a loss takes its
functional form's, :func:`hyperparameters_of`) and the checks that span
several in ``rules`` (:class:`Rule`). Its constructor takes them with the
declared defaults (a test compares the signatures), stores each as it is
(``self.gamma = gamma``) and ends its stores, before anything expensive is
built, with ``check_settings(self)``, which reads them back from the object
as scikit-learn's validator does. Every error reads ``<name> must ...,
got <value>`` plus the hint: ``lamb must lie in [1, inf], got 0.5``."""
import inspect
import math
import numbers
import os
from typing import (Any, Callable, Collection, Dict, Iterable, Mapping,
                    Sequence, Tuple)

__all__ = [
    'REQUIRED', 'Hyperparameter', 'Real', 'Integer', 'Flag', 'Choice',
    'RealTuple', 'IntegerPair', 'Text', 'Typed', 'PATH', 'Rule',
    'check_hyperparameters', 'hyperparameters_of', 'check_settings'
]


class _Required:
    """The type of :data:`REQUIRED` (one object, kept by copies)."""

    def __repr__(self) -> str:
        return 'REQUIRED'

    __reduce__ = __repr__  # a copy or a pickle is this module's object


#: The default of a hyperparameter that the caller must give (typed Any:
#: it stands in as the default of a parameter of any type).
REQUIRED: Any = _Required()


class Hyperparameter:
    """A declared hyperparameter: its ``default`` (or :data:`REQUIRED`)
    and its check, with the options of its kind (its class attributes):
    for every kind ``optional`` (``None`` is valid, meaning what the
    owner's docstring says) and ``hint`` (appended to the errors)."""

    optional = False
    hint = ''

    def __init__(self, default: Any = REQUIRED, **options: Any):
        for key, value in options.items():
            if callable(getattr(type(self), key, len)):  # not an option
                raise TypeError(f'{type(self).__name__} has no option {key}')
            setattr(self, key, value)
        self.default = default

    def validate(self, name: str, value: Any) -> Any:
        """Return the value to store, or raise a ``ValueError`` (a
        ``TypeError`` for :class:`Typed`) naming ``name``."""
        hint = f' ({self.hint})' if self.hint else ''
        if value is REQUIRED or (value is None and not self.optional):
            raise ValueError(f'{name} is required{hint}')
        if value is None:
            return None
        try:
            return self.check(name, value)
        except ValueError as error:
            raise ValueError(f'{error}{hint}') from None

    def check(self, name: str, value: Any) -> Any:
        """Check a value other than ``None`` (each kind overrides this)."""
        return value

    def with_default(self, default: Any) -> 'Hyperparameter':
        """A copy with another default."""
        copy = object.__new__(type(self))
        copy.__dict__.update(self.__dict__, default=default)
        return copy


class Typed(Hyperparameter):
    """An instance of one of ``types`` (e.g. a config dict or the object
    it builds), else a ``TypeError`` saying it must be ``spelled``."""

    types: Tuple[type, ...] = ()
    spelled = ''

    def check(self, name: str, value: Any) -> Any:
        if not isinstance(value, tuple(self.types)):
            raise TypeError(f'{name} must be {self.spelled}, got '
                            f'{type(value).__name__}')
        return value


#: An optional file setting: a ``str`` or ``os.PathLike`` path.
PATH = Typed(None, types=(str, os.PathLike), spelled='a path', optional=True)


class Text(Hyperparameter):
    """A non-empty string."""

    def check(self, name: str, value: Any) -> str:
        if not isinstance(value, str) or not value:
            raise ValueError(f'{name} must be a non-empty str, got {value!r}')
        return value


class Real(Hyperparameter):
    """A finite real number (Python or numpy, not bool) in ``[low, high]``
    (``low_open``/``high_open`` exclude an end), stored as ``float``."""

    low = -math.inf
    high = math.inf
    low_open = False
    high_open = False

    def check(self, name: str, value: Any) -> float:
        if (isinstance(value, bool) or not isinstance(value, numbers.Real)
                or not math.isfinite(value)):
            raise ValueError(f'{name} must be a finite real number, got '
                             f'{value!r}')
        value, low, high = float(value), self.low, self.high
        if (value <= low if self.low_open else value < low) or \
                (value >= high if self.high_open else value > high):
            interval = '(['[not self.low_open] + f'{low:g}, {high:g}' + \
                ')]'[not self.high_open]
            raise ValueError(f'{name} must lie in {interval}, got {value!r}')
        return value


class Integer(Hyperparameter):
    """An integer (Python or numpy, not bool) of at least ``low`` (0 by
    default) and at most ``high``."""

    low = 0
    high = math.inf

    def check(self, name: str, value: Any) -> int:
        if (isinstance(value, bool) or not isinstance(value, numbers.Integral)
                or not self.low <= int(value) <= self.high):
            bound = (f'>= {self.low}' if math.isinf(self.high) else
                     f'in [{self.low}, {self.high}]')
            raise ValueError(f'{name} must be an integer {bound}, got '
                             f'{value!r}')
        return int(value)


class Flag(Hyperparameter):
    """A boolean (``True``/``False``, or the integers 0 and 1)."""

    def check(self, name: str, value: Any) -> bool:
        if not (isinstance(value, bool) or
                (isinstance(value, numbers.Integral) and value in (0, 1))):
            raise ValueError(f'{name} must be True or False, got {value!r}')
        return bool(value)


class Choice(Hyperparameter):
    """One of the strings of ``options``."""

    options: Tuple[str, ...] = ()

    def check(self, name: str, value: Any) -> str:
        if value not in self.options:
            raise ValueError(f'{name} must be one of {tuple(self.options)}, '
                             f'got {value!r}')
        return value


class IntegerPair(Hyperparameter):
    """A positive integer ``n`` (meaning ``(n, n)``) or a pair of them
    (e.g. an image size), stored as a tuple of two ints."""

    def check(self, name: str, value: Any) -> Tuple[int, int]:
        pair = tuple(value) if isinstance(value, Iterable) else (value, ) * 2
        if len(pair) != 2 or not all(
                isinstance(n, numbers.Integral) and not isinstance(n, bool)
                and int(n) >= 1 for n in pair):
            raise ValueError(f'{name} must be a positive integer or a pair '
                             f'of them, got {value!r}')
        return int(pair[0]), int(pair[1])


class RealTuple(Real):
    """A sequence of finite real numbers in ``[low, high]``, stored as a
    tuple of floats: of any non-empty length (e.g. probabilities), or with
    ``names``, one entry per name (the names are in the errors); each item
    as :class:`Real` checks it."""

    names: Tuple[str, ...] = ()

    def check(  # type: ignore[override]
            self, name: str, value: Any) -> Tuple[float, ...]:
        names = [f' ({entry})' for entry in self.names]
        if isinstance(value, (str, bytes)) or not isinstance(
                value, Collection) or not len(value) or \
                len(value) != len(names or value):
            spelled = (f'({", ".join(self.names)})'
                       if names else 'a non-empty sequence of numbers')
            raise ValueError(f'{name} must be {spelled}, got {value!r}')
        names = names or [''] * len(value)
        return tuple(
            super(RealTuple, self).check(f'{name}[{i}]{names[i]}', item)
            for i, item in enumerate(value))


class Rule:
    """A check that spans several settings of a class, declared once in
    its ``rules`` (and shared by the classes that take the same settings).

    Args:
        holds (Callable[..., bool]): True when the values are consistent;
            its parameters name what it reads: declared settings, and
            possibly values of the run such as ``max_epochs``, which
            :func:`check_settings` is given once the run is known.
        message (str): The error, a ``str.format`` template of ``owner``
            (the class name) and the values: it says what to change.
    """

    def __init__(self, holds: Callable[..., bool], message: str):
        self.holds = holds
        self.message = message
        self.names = tuple(inspect.signature(holds).parameters)

    def check(self, owner: str, values: Mapping[str, Any]) -> None:
        """Raise a ``ValueError`` with the message if the rule fails."""
        if not self.holds(**{name: values[name] for name in self.names}):
            raise ValueError(self.message.format(owner=owner, **values))


def check_hyperparameters(declared: Mapping[str, Hyperparameter],
                          values: Mapping[str, Any],
                          owner: str,
                          strict: bool = True,
                          *,
                          rules: Sequence[Rule] = ()) -> Dict[str, Any]:
    """Every declared hyperparameter's checked value (its default where
    ``values`` has none), for a function named ``owner``; then ``rules``.

    An undeclared name raises a ``TypeError``, or with ``strict=False`` is
    returned unchecked (a functional form passes it on to its element-wise
    function, which takes or refuses it). An invalid or missing required
    value raises a ``ValueError``."""
    unknown = [name for name in values if name not in declared]
    if strict and unknown:
        raise TypeError(f'{owner} got unexpected argument(s) '
                        f'{", ".join(unknown)}; its hyperparameters are: '
                        f'{", ".join(declared) or "none"}')
    checked = {
        name: spec.validate(name, values.get(name, spec.default))
        for name, spec in declared.items()
    }
    for rule in rules:
        rule.check(owner, checked)
    checked.update((name, values[name]) for name in unknown)
    return checked


def hyperparameters_of(loss_fn: Any, *names: str,
                       **defaults: Any) -> Dict[str, Hyperparameter]:
    """A module's declaration taken from its functional form (made with
    :func:`~mmlml.models.losses.base.partial_label_loss`): the ``names``
    with their defaults and the ``defaults`` with other defaults, or with
    neither all of them, as ``{name: Hyperparameter}`` in its order."""
    declared: Dict[str, Hyperparameter] = loss_fn.hyperparameters
    wanted = (*names, *defaults) or tuple(declared)
    if set(wanted) - set(declared):
        raise KeyError(f'{loss_fn.__name__} declares no '
                       f'{sorted(set(wanted) - set(declared))}')
    return {
        name: spec.with_default(defaults[name]) if name in defaults else spec
        for name, spec in declared.items() if name in wanted
    }


def check_settings(instance: Any, **run: Any) -> None:
    """Validate an object's settings in place, then check its rules.

    Every name of ``type(instance).hyperparameters`` that the object holds
    is read back, checked by its declaration and stored again as checked
    (``float`` for a :class:`Real`...); a name it does not hold yet is left
    to a later call (a parent's constructor checks its own settings before
    its subclass stores the rest). Then every rule of
    ``type(instance).rules`` is checked whose names are all known: the
    settings and ``run``, values of the run (e.g. ``max_epochs``) that a
    hook passes once the run is known. A failed check raises a
    ``ValueError`` (a ``TypeError``: a :class:`Typed` of another type)."""
    cls = type(instance)
    values = {}
    for name, spec in getattr(cls, 'hyperparameters', {}).items():
        if not hasattr(instance, name):
            continue
        value = getattr(instance, name)
        values[name] = spec.validate(name, value)
        if values[name] is not value:
            setattr(instance, name, values[name])
    values.update(run)
    for rule in getattr(cls, 'rules', ()):
        if set(rule.names) <= set(values):
            rule.check(cls.__name__, values)
