"""Declared hyperparameters: one declaration per hyperparameter gives its
default and its validation, for a loss's functional form and its module,
and for the settings of datasets, hooks and metrics.

A functional loss declares its hyperparameters in
:func:`~mmlml.models.losses.base.partial_label_loss`. A registered class
(loss, hook, metric, head...) declares the settings its constructor takes
in its ``hyperparameters`` class attribute (a loss usually takes its
functional form's, through :func:`hyperparameters_of`) and the checks that
span several of them in its ``rules`` class attribute (:class:`Rule`). Its
constructor has an explicit keyword signature with the declared defaults,
validates its arguments with one call to :func:`check_settings` and stores
each checked value as an attribute of the same name. A test checks every
registered class's signature against its declaration, so a default cannot
change in one place only.

Example:
    >>> from mmlml.utils.hyperparameters import Real
    >>> Real(1.5, low=1).validate('lamb', 2)
    2.0
    >>> Real(1.5, low=1).validate('lamb', 0.5)
    Traceback (most recent call last):
    ...
    ValueError: lamb must lie in [1, inf], got 0.5
"""
import inspect
import math
import numbers
from types import SimpleNamespace
from typing import Any, Callable, Dict, Iterable, Mapping, Sequence, Tuple

__all__ = [
    'REQUIRED', 'Hyperparameter', 'Real', 'Integer', 'Flag', 'Choice',
    'RealTuple', 'RealSequence', 'IntegerPair', 'Setting', 'Text', 'Typed',
    'Rule', 'check_hparam', 'check_hyperparameters', 'hyperparameters_of',
    'check_settings', 'check_run_rules'
]


class _Required:
    """The type of :data:`REQUIRED`: one object, kept by copies and pickles,
    that a signature prints by its name."""

    def __repr__(self) -> str:
        return 'REQUIRED'

    def __reduce__(self) -> str:
        return 'REQUIRED'


#: Default of a hyperparameter without default: the caller must give it
#: (a constructor's signature shows ``name=REQUIRED``; leaving it out
#: raises the declaration's "is required" error).
REQUIRED = _Required()


def check_hparam(name: str,
                 value: Any,
                 low: float = -math.inf,
                 high: float = math.inf,
                 low_open: bool = False,
                 high_open: bool = False) -> float:
    """Return ``float(value)`` if it is a finite real number in the interval
    ``[low, high]`` (``low_open``/``high_open`` exclude an end).

    Python and numpy numbers are accepted (``np.float32(2.0)`` too),
    booleans are not.

    Raises:
        ValueError: ``value`` is not a real number, not finite, or outside
            the interval. The message names the argument and the value.
    """
    if (isinstance(value, bool) or not isinstance(value, numbers.Real)
            or not math.isfinite(value)):
        raise ValueError(f'{name} must be a finite real number, got '
                         f'{value!r}')
    value = float(value)
    too_low = value <= low if low_open else value < low
    too_high = value >= high if high_open else value > high
    if too_low or too_high:
        low_text = f'{low:g}' if math.isfinite(low) else '-inf'
        high_text = f'{high:g}' if math.isfinite(high) else 'inf'
        interval = (('(' if low_open else '[') + f'{low_text}, {high_text}' +
                    (')' if high_open else ']'))
        raise ValueError(f'{name} must lie in {interval}, got {value!r}')
    return value


class Hyperparameter:
    """A declared hyperparameter: its default and its check.

    Args:
        default: The default value, or :data:`REQUIRED`.
        optional (bool): ``None`` is a valid value (it means what the
            loss's docstring says). Defaults to False.
        hint (str): Appended to the errors (e.g. the values the papers
            use). Defaults to ''.
        message (str): The error for an invalid value instead of the
            check's own, a ``str.format`` template of ``name`` and
            ``value`` (a setting whose error text users and tests already
            know keeps it). Defaults to ''.
        error (type): The exception raised with ``message``. Defaults to
            ``ValueError``.
    """

    def __init__(self,
                 default: Any = REQUIRED,
                 *,
                 optional: bool = False,
                 hint: str = '',
                 message: str = '',
                 error: type = ValueError):
        self.default = default
        self.optional = optional
        self.hint = hint
        self.message = message
        self.error = error

    def validate(self, name: str, value: Any) -> Any:
        """Return the value to store, or raise a ``ValueError`` naming
        ``name``."""
        if value is REQUIRED or (value is None and not self.optional):
            hint = f': {self.hint}' if self.hint else ''
            raise ValueError(f'{name} is required{hint}')
        if value is None:
            return None
        try:
            return self.check(name, value)
        except ValueError as error:
            if self.message:
                raise self.error(self.message.format(name=name,
                                                     value=value)) from None
            if not self.hint:
                raise
            raise ValueError(f'{error} ({self.hint})') from None

    def check(self, name: str, value: Any) -> Any:
        """Check a value other than ``None``; subclasses override."""
        return value

    def with_default(self, default: Any) -> 'Hyperparameter':
        """A copy with another default."""
        copy = object.__new__(type(self))
        copy.__dict__.update(self.__dict__, default=default)
        return copy


class Setting(Hyperparameter):
    """A setting whose value another part checks or builds (a config dict,
    a path, a module): declared for its default only."""


class Typed(Hyperparameter):
    """An instance of one of ``types`` (e.g. a config dict or the object
    it builds); anything else raises a ``TypeError``.

    Args:
        types (tuple): The accepted types.
        spelled (str): What the error says is expected, e.g. ``'a config
            dict or a BasePseudoLabeller'``.
    """

    def __init__(self,
                 default: Any = REQUIRED,
                 *,
                 types: Tuple[type, ...] = (),
                 spelled: str = '',
                 **kwargs):
        super().__init__(default, **kwargs)
        self.types = tuple(types)
        self.spelled = spelled

    def check(self, name: str, value: Any) -> Any:
        if not isinstance(value, self.types):
            raise TypeError(f'{name} must be {self.spelled}, got '
                            f'{type(value).__name__}')
        return value


class Text(Hyperparameter):
    """A non-empty string."""

    def check(self, name: str, value: Any) -> str:
        if not isinstance(value, str) or not value:
            raise ValueError(f'{name} must be a non-empty str, got {value!r}')
        return value


class Real(Hyperparameter):
    """A finite real number in ``[low, high]`` (see :func:`check_hparam`),
    stored as ``float``."""

    def __init__(self,
                 default: Any = REQUIRED,
                 *,
                 low: float = -math.inf,
                 high: float = math.inf,
                 low_open: bool = False,
                 high_open: bool = False,
                 **kwargs):
        super().__init__(default, **kwargs)
        self.bounds = dict(
            low=low, high=high, low_open=low_open, high_open=high_open)

    def check(self, name: str, value: Any) -> float:
        return check_hparam(name, value, **self.bounds)


class Integer(Hyperparameter):
    """An integer (Python or numpy, not bool) of at least ``low`` and, if
    ``high`` is given, at most ``high``."""

    def __init__(self,
                 default: Any = REQUIRED,
                 *,
                 low: int = 0,
                 high: float = math.inf,
                 **kwargs):
        super().__init__(default, **kwargs)
        self.low = low
        self.high = high

    def check(self, name: str, value: Any) -> int:
        if (isinstance(value, bool) or not isinstance(value, numbers.Integral)
                or not self.low <= value <= self.high):
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
    """One of a fixed set of strings."""

    def __init__(self,
                 default: Any = REQUIRED,
                 *,
                 options: Sequence[str] = (),
                 **kwargs):
        super().__init__(default, **kwargs)
        self.options = tuple(options)

    def check(self, name: str, value: Any) -> str:
        if value not in self.options:
            raise ValueError(f'{name} must be one of {self.options}, got '
                             f'{value!r}')
        return value


class IntegerPair(Hyperparameter):
    """A positive integer ``n`` (meaning ``(n, n)``) or a pair of them
    (e.g. an image size), stored as a tuple of two ints."""

    def check(self, name: str, value: Any) -> Tuple[int, int]:
        pair = (value, value) if not isinstance(value, Iterable) else value
        entry = Integer(low=1)
        try:
            pair = tuple(pair)
            if len(pair) != 2:
                raise ValueError
            return tuple(entry.check(name, item) for item in pair)
        except (ValueError, TypeError):
            raise ValueError(f'{name} must be a positive integer or a pair '
                             f'of them, got {value!r}') from None


class RealTuple(Hyperparameter):
    """A fixed-length sequence of finite real numbers, stored as a tuple of
    floats; ``names`` name the entries in error messages."""

    def __init__(self,
                 default: Any = REQUIRED,
                 *,
                 names: Sequence[str] = (),
                 **kwargs):
        super().__init__(default, **kwargs)
        self.names = tuple(names)

    def check(self, name: str, value: Any) -> Tuple[float, ...]:
        spelled = f'({", ".join(self.names)})'
        if isinstance(value, (str, bytes)) or not isinstance(
                value, Iterable) or len(value) != len(self.names):
            raise ValueError(f'{name} must be {spelled}, got {value!r}')
        return tuple(
            check_hparam(f'{name}[{i}] ({entry})', item)
            for i, (entry, item) in enumerate(zip(self.names, value)))


class RealSequence(Hyperparameter):
    """A non-empty sequence of any length of finite real numbers in
    ``[low, high]``, stored as a tuple of floats (e.g. probabilities)."""

    def __init__(self,
                 default: Any = REQUIRED,
                 *,
                 low: float = -math.inf,
                 high: float = math.inf,
                 **kwargs):
        super().__init__(default, **kwargs)
        self.bounds = dict(low=low, high=high)

    def check(self, name: str, value: Any) -> Tuple[float, ...]:
        text = isinstance(value, (str, bytes))
        if text or not isinstance(value, Iterable) or not len(value):
            raise ValueError(f'{name} must be a non-empty sequence of '
                             f'numbers, got {value!r}')
        return tuple(
            check_hparam(f'{name}[{i}]', item, **self.bounds)
            for i, item in enumerate(value))


class Rule:
    """A check that spans several settings of a class, declared once in
    its ``rules`` (and shared by the classes that take the same settings).

    ``holds`` names what it reads by its parameter names: declared
    settings, and possibly values of the run such as ``max_epochs``. A
    rule that reads only settings is checked by :func:`check_settings`
    when the object is built; one that also reads the run is checked by
    :func:`check_run_rules` once the run is known.

    Args:
        holds (Callable[..., bool]): True when the values are consistent.
        message (str): The error, a ``str.format`` template of ``owner``
            (the class name) and the values checked (the settings, and the
            run's values): it says what to change.

    Example:
        >>> rule = Rule(lambda low, high: low <= high,
        ...             '{owner}: low={low} exceeds high={high}')
        >>> rule.check('Band', dict(low=2, high=1))
        Traceback (most recent call last):
        ...
        ValueError: Band: low=2 exceeds high=1
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
    """Validate ``values`` against ``declared`` and fill in the defaults.

    Args:
        declared (Mapping[str, Hyperparameter]): The declarations.
        values (Mapping[str, Any]): The given values.
        owner (str): The loss, for the error messages.
        strict (bool): Refuse names that are not declared. Otherwise they
            are returned unchecked (a functional form passes them on to
            its element-wise function, which takes or refuses them).
        rules (Sequence[Rule]): Checked on the checked values (a function
            that takes declared settings, as a class's ``rules``).

    Returns:
        dict: Every declared hyperparameter's checked value, then the
        undeclared entries with ``strict=False``.

    Raises:
        TypeError: An undeclared name with ``strict=True``.
        ValueError: A missing required value or an invalid value.
    """
    unknown = [name for name in values if name not in declared]
    if strict and unknown:
        known = ', '.join(declared) or 'none besides reduction and ' \
            'loss_weight'
        raise TypeError(f'{owner} got unexpected argument(s) '
                        f'{", ".join(unknown)}; its hyperparameters are: '
                        f'{known}')
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
    """A module's declaration taken from its functional form.

    Args:
        loss_fn: A functional loss made with
            :func:`~mmlml.models.losses.base.partial_label_loss`.
        *names: The hyperparameters the module takes with the functional
            form's default.
        **defaults: Hyperparameters the module takes with another default.
            Without ``names`` and ``defaults``, the module takes them all.

    Returns:
        dict: ``{name: Hyperparameter}`` in the functional form's order.
    """
    declared: Dict[str, Hyperparameter] = loss_fn.hyperparameters
    if not names and not defaults:
        return dict(declared)
    missing = [n for n in (*names, *defaults) if n not in declared]
    if missing:
        raise KeyError(f'{loss_fn.__name__} declares no {missing}')
    taken: Dict[str, Hyperparameter] = {}
    for name, spec in declared.items():
        if name in defaults:
            taken[name] = spec.with_default(defaults[name])
        elif name in names:
            taken[name] = spec
    return taken


def _declaration(
        instance: Any
) -> Tuple[str, Mapping[str, Hyperparameter], Sequence[Rule]]:
    cls = type(instance)
    return (cls.__name__, getattr(cls, 'hyperparameters',
                                  {}), getattr(cls, 'rules', ()))


def check_settings(instance: Any, **values: Any) -> SimpleNamespace:
    """Validate a constructor's arguments against its class's declaration.

    The one call an explicit constructor makes: every value is checked by
    the declaration of the same name in ``type(instance).hyperparameters``
    (a name not declared there is refused: declare it), then every rule of
    ``type(instance).rules`` that reads only the given names. A subclass
    extends its parent's declaration and rules, so a parent's constructor
    checks its own arguments with the same call.

    Args:
        instance: The object being built.
        **values: The constructor's arguments, by name.

    Returns:
        SimpleNamespace: The checked values (``float`` for a
        :class:`Real`, ``int`` for an :class:`Integer`...), to store as
        attributes.

    Raises:
        TypeError: A name is not declared.
        ValueError: A value or a rule fails its check.
    """
    owner, declared, rules = _declaration(instance)
    unknown = [name for name in values if name not in declared]
    if unknown:
        raise TypeError(f'{owner} declares no setting {", ".join(unknown)}: '
                        f'add it to {owner}.hyperparameters')
    checked = {
        name: declared[name].validate(name, value)
        for name, value in values.items()
    }
    for rule in rules:
        if set(rule.names) <= set(checked):
            rule.check(owner, checked)
    return SimpleNamespace(**checked)


def check_run_rules(instance: Any, **run: Any) -> None:
    """Check the rules of ``type(instance).rules`` that read a value of the
    run (e.g. ``max_epochs``), with the instance's settings (its
    attributes of the declared names) and ``run``.

    Raises:
        ValueError: A rule fails.
    """
    owner, declared, rules = _declaration(instance)
    values = {name: getattr(instance, name) for name in declared}
    values.update(run)
    for rule in rules:
        if set(rule.names) & set(run) and set(rule.names) <= set(values):
            rule.check(owner, values)
