"""One way to declare a setting: every class mmlml registers in MODELS,
HOOKS, METRICS and PARAM_SCHEDULERS that declares settings
(``hyperparameters``) takes each of them as a keyword with the declared
default, of its explicit constructor or of an mmlml parent's that it
passes ``**kwargs`` on to (``GPRLoss`` takes GR's settings through
``GRLoss``: the signature read along the chain, by
:func:`~mmlml.utils.signatures.constructor_parameters`), stores it under
its own name and checks it with ``check_settings(self)``. Its other
parameters are checked by what they build or by a stock parent (a config,
a path, the fixed arguments of its kind, such as a loss's ``reduction``),
and only a class whose parent is an MMPretrain or MMEngine component (a
head, a backbone, a scheduler) passes ``*args``/``**kwargs`` on beyond
mmlml's classes.

A declared default changed in one place only, or a declared setting that
the constructor does not take or does not store, fails here. The second
half tests the mechanism itself (:mod:`mmlml.utils.hyperparameters`).
"""
import copy
import inspect
import pickle
import re

import numpy as np
import pytest
from mmengine.evaluator import BaseMetric

import mmlml.evaluation  # noqa: F401 (registers)
import mmlml.hooks  # noqa: F401
import mmlml.models  # noqa: F401
import mmlml.pseudo_labellers  # noqa: F401
import mmlml.schedulers  # noqa: F401
from mmlml.hooks.epoch_scores_hook import WARMUP_BEFORE_END
from mmlml.models.losses.base import PartialLabelLoss
from mmlml.registry import HOOKS, METRICS, MODELS, PARAM_SCHEDULERS
from mmlml.utils.hyperparameters import (REQUIRED, Integer, IntegerPair, Real,
                                         RealTuple, Rule, Text, Typed,
                                         check_hyperparameters, check_settings)
from mmlml.utils.signatures import constructor_parameters

#: Run values a rule may read besides the settings.
RUN_VALUES = ('max_epochs', )
VAR_KINDS = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def registered_classes(declaring: bool = False):
    """(registry, name, class) of every class mmlml registers (that
    declares settings, with ``declaring``)."""
    for registry in (MODELS, HOOKS, METRICS, PARAM_SCHEDULERS):
        for name, cls in sorted(registry.module_dict.items()):
            if cls.__module__.split('.')[0] == 'mmlml' and (
                    not declaring or getattr(cls, 'hyperparameters', {})):
                yield pytest.param(cls, id=f'{registry.name}:{name}')


def fixed_arguments(cls) -> dict:
    """The arguments of ``cls``'s kind that it does not declare."""
    if issubclass(cls, PartialLabelLoss):
        return dict(reduction='mean', loss_weight=1.0, use_sigmoid=True)
    if issubclass(cls, BaseMetric):
        return dict(collect_device='cpu', prefix=None)
    return {}


def passes_on_to_parent(cls) -> bool:
    """Whether a parent of ``cls`` is an MMPretrain or MMEngine component
    (not a plain ``nn.Module``, ``Hook`` or ``BaseMetric``)."""
    plain = ('mmengine.hooks.hook', 'mmengine.evaluator.metric',
             'mmengine.model.base_module')
    return any(
        base.__module__.split('.')[0] in (
            'mmpretrain', 'mmengine') and base.__module__ not in plain
        for base in cls.__mro__[1:])


def signature_mismatch(cls) -> str:
    """What is wrong with ``cls``'s constructor, read along the mmlml
    parents it passes ``**kwargs`` on to, against its declaration ('' if
    nothing)."""
    params = list(constructor_parameters(cls).values())
    problems = []
    if any(p.kind in VAR_KINDS for p in params) and \
            not passes_on_to_parent(cls):
        problems.append('takes *args/**kwargs but passes nothing on to a '
                        'stock parent')
    actual = {p.name: p.default for p in params if p.kind not in VAR_KINDS}
    expected = {
        name: spec.default
        for name, spec in cls.hyperparameters.items()
    }
    expected.update(fixed_arguments(cls))
    for name, default in expected.items():
        if name not in actual:
            problems.append(f'{name} is declared but not a parameter')
        elif actual[name] is not default and actual[name] != default:
            problems.append(f'{name}: signature default {actual[name]!r}, '
                            f'declared {default!r}')
    return '; '.join(f'{cls.__name__}: {p}' for p in problems)


@pytest.mark.parametrize('cls', list(registered_classes(declaring=True)))
def test_signature_is_the_declaration(cls):
    assert signature_mismatch(cls) == ''


def stored_names(cls) -> set:
    """The attributes that the constructors of ``cls`` and its parents
    (mmlml's, or a stock one such as MMPretrain's ``MultiLabelMetric``)
    store (``self.<name> =``)."""
    names = set()
    for klass in cls.__mro__:
        init = vars(klass).get('__init__')
        if inspect.isfunction(init):
            names.update(
                re.findall(r'self\.(\w+) = ', inspect.getsource(init)))
    return names


@pytest.mark.parametrize('cls', list(registered_classes(declaring=True)))
def test_constructor_stores_every_setting(cls):
    """``check_settings`` checks the declared names the object holds: a
    setting the constructor forgot to store would go unchecked."""
    assert set(cls.hyperparameters) - stored_names(cls) == set()


@pytest.mark.parametrize('cls', list(registered_classes()))
def test_rules_read_declared_settings(cls):
    """A rule reads declared settings (and values of the run)."""
    names = set(getattr(cls, 'hyperparameters', {})) | set(RUN_VALUES)
    for rule in getattr(cls, 'rules', ()):
        assert set(rule.names) <= names, (cls.__name__, rule.names)


def test_all_kinds_are_covered():
    """The registries hold losses, hooks, metrics, heads and schedulers."""
    names = {param.values[0].__name__ for param in registered_classes()}
    assert {
        'HillLoss', 'APLHook', 'MultiLabelF1Metric',
        'PartialLabelLinearClsHead', 'CosineAnnealingToEndLR'
    } <= names


def test_signature_follows_kwargs_into_mmlml_parents():
    """A subclass loss takes its own settings and passes its parent's on
    through ``**kwargs``: read along the chain, its signature has them all
    with the parent's defaults and no ``**kwargs`` left; one that reaches
    a stock parent (ImageClassifier's) is kept: the class takes more."""
    gpr = MODELS.get('GPRLoss')
    assert 'q3' not in inspect.signature(gpr).parameters
    params = constructor_parameters(gpr)
    assert params['q3'].default == 1.0  # GRLoss's
    assert params['loss_weight'].default == 1.0  # PartialLabelLoss's
    assert list(params)[:4] == ['rho', 'lam', 'reg', 'expected_positives']
    assert not any(p.kind in VAR_KINDS for p in params.values())
    classifier = constructor_parameters(MODELS.get('ConsistencyClassifier'))
    assert classifier['kwargs'].kind is inspect.Parameter.VAR_KEYWORD


# ------------------------------------------------ the contract catches drift
class _Kept(PartialLabelLoss):
    hyperparameters = dict(gamma=Real(2.0, low=0))

    def __init__(self, *, gamma=2.0, **kwargs):
        super().__init__(**kwargs)
        self.gamma = gamma
        check_settings(self)


class _Forgotten(_Kept):
    """Declares a setting that its constructor neither takes nor stores."""
    hyperparameters = dict(**_Kept.hyperparameters, beta=Real(1.0))


def test_contract_reports_missing_parameter_and_drifted_default():
    assert signature_mismatch(_Kept) == ''
    assert stored_names(_Kept) >= {'gamma'}
    drifted = type('_DefaultDrift', (_Kept, ),
                   dict(hyperparameters=dict(gamma=Real(3.0, low=0))))
    assert 'gamma: signature default 2.0, declared 3.0' in \
        signature_mismatch(drifted)
    assert 'beta is declared but not a parameter' in \
        signature_mismatch(_Forgotten)
    assert 'beta' not in stored_names(_Forgotten)


def test_loss_checks_its_settings_when_built():
    """A wrong setting and a wrong fixed argument are both refused when
    the loss is built, each naming itself."""
    with pytest.raises(ValueError, match='lamb must lie in'):
        MODELS.build(dict(type='HillLoss', lamb=0.5))
    with pytest.raises(ValueError, match='reduction'):
        MODELS.build(dict(type='HillLoss', reduction='bogus'))


def test_role_loss_keeps_epr_constructor():
    """ROLE extends EPR (its regulariser plus the label estimator) and
    takes EPR's one setting through EPR's constructor."""
    role = MODELS.build(dict(type='ROLELoss', expected_positives=2))
    epr_cls = MODELS.get('EPRLoss')
    assert isinstance(role, epr_cls) and role.expected_positives == 2.0
    assert type(role).__init__ is epr_cls.__init__
    with pytest.raises(ValueError, match='expected_positives'):
        MODELS.build(dict(type='ROLELoss'))


# ------------------------------------------------------------- the mechanism
def test_check_settings_coerces_in_place_and_waits_for_later_names():
    """The checked values replace the stored ones; a declared name that
    the object does not hold yet (a parent's constructor checking its own
    before the subclass stores the rest) is left for the later call."""
    loss = _Kept(gamma=np.int64(1))
    assert loss.gamma == 1.0 and type(loss.gamma) is float
    with pytest.raises(ValueError, match=r'gamma must lie in \[0, inf\]'):
        _Kept(gamma=-1)
    partial = _Forgotten()  # beta is never stored: only gamma is checked
    assert partial.gamma == 2.0 and not hasattr(partial, 'beta')
    partial.beta = 'x'
    with pytest.raises(ValueError, match="beta must be a finite real number"):
        check_settings(partial)


class _Band:
    hyperparameters = dict(low=Integer(0), high=Integer(1))
    rules = (Rule(lambda low, high: low <= high,
                  '{owner}: low={low} exceeds high={high}'),
             Rule(
                 lambda high, max_epochs: high < max_epochs,
                 '{owner}: high={high} needs more than {max_epochs} '
                 'epochs'))

    def __init__(self, *, low=0, high=1):
        self.low = low
        self.high = high
        check_settings(self)


def test_rules_at_construction_and_with_the_run():
    """A rule of settings only is checked when the object is built; one
    that reads the run when the run is known."""
    with pytest.raises(ValueError, match='_Band: low=2 exceeds high=1'):
        _Band(low=2)
    band = _Band(high=5)  # max_epochs is not known yet
    check_settings(band, max_epochs=6)
    with pytest.raises(ValueError, match='_Band: high=5 needs more than 5'):
        check_settings(band, max_epochs=5)


def test_function_rules():
    rule = Rule(lambda a, b: a != b, 'a and b must differ, got {a}')
    declared = dict(a=Integer(0), b=Integer(1))
    assert check_hyperparameters(declared, {}, 'f', rules=(rule, )) == \
        dict(a=0, b=1)
    with pytest.raises(ValueError, match='a and b must differ, got 1'):
        check_hyperparameters(declared, dict(a=1), 'f', rules=(rule, ))


def test_warmup_rule_is_one_rule():
    """The warm-up hooks share one declared rule (warmup_epochs below the
    run's epochs)."""
    users = [
        cls for cls in HOOKS.module_dict.values()
        if WARMUP_BEFORE_END in getattr(cls, 'rules', ())
    ]
    assert {cls.__name__
            for cls in users
            } == {'APLHook', 'ClassAPCorrectionHook', 'ClassPriorHook'}
    hook = HOOKS.build(dict(type='APLHook', warmup_epochs=3))
    with pytest.raises(
            ValueError,
            match='APLHook: warmup_epochs=3 leaves no epoch to '
            'pseudo-label in 3 epochs: set warmup_epochs below'):
        check_settings(hook, max_epochs=3, purpose=hook.warmup_purpose)


def test_one_error_format_and_typed():
    """Every kind's error reads ``<name> must ..., got <value>`` and a
    hint follows it in parentheses; a declaration takes only its kind's
    options."""
    seed = Integer(0, high=2**32 - 1, hint='the images need a fixed seed')
    with pytest.raises(
            ValueError,
            match=r'^seed must be an integer in \[0, 4294967295\], got '
            r'4294967296 \(the images need a fixed seed\)$'):
        seed.validate('seed', 2**32)
    with pytest.raises(
            ValueError, match=r'^seed is required \(the images need'):
        seed.validate('seed', None)
    with pytest.raises(TypeError, match='Integer has no option message'):
        Integer(0, message='{name} is wrong')
    probabilities = RealTuple((0.5, 0.5), low=0)
    assert probabilities.validate('p', [1, np.float32(0.5), 0]) == \
        (1.0, 0.5, 0.0)
    with pytest.raises(ValueError, match=r'^p\[1\] must lie in \[0, inf\]'):
        probabilities.validate('p', (1, -1))
    for bad in ((), (x for x in [0.5])):  # an iterator has no length
        with pytest.raises(ValueError, match='p must be a non-empty sequence'):
            probabilities.validate('p', bad)
    with pytest.raises(ValueError, match="prefix must be a non-empty str"):
        Text('x').validate('prefix', '')
    typed = Typed(types=(dict, ), spelled='a config dict')
    with pytest.raises(
            TypeError, match='labeller must be a config dict, '
            'got str'):
        typed.validate('labeller', 'CLIP')
    pair = IntegerPair(224)
    assert pair.validate('input_size', 224) == (224, 224)
    assert pair.validate('input_size', [3, np.int64(2)]) == (3, 2)
    for bad in (0, (1, 2, 3), 'ab', 1.5, (True, 2)):
        with pytest.raises(
                ValueError,
                match='input_size must be a positive integer or '
                'a pair of them'):
            pair.validate('input_size', bad)


def test_required_is_one_object_with_a_name():
    """A signature prints ``name=REQUIRED``; copies keep its identity."""
    assert repr(REQUIRED) == 'REQUIRED'
    assert copy.deepcopy(REQUIRED) is REQUIRED
    assert pickle.loads(pickle.dumps(REQUIRED)) is REQUIRED
    with pytest.raises(ValueError, match='alpha is required'):
        MODELS.build(dict(type='EntMinLoss'))


@pytest.mark.parametrize(
    'cfg', [
        dict(type='APLHook', extra_pass='no'),
        dict(type='ClassPriorHook', extra_pass='no'),
        dict(type='ResumeCheckHook', allow_label_change='no'),
        dict(type='MissingLabelDiagnosticsHook', save_histograms='no'),
        dict(type='MissingLabelDiagnosticsHook', by_epoch='no'),
    ],
    ids=lambda cfg: f"{cfg['type']}-{list(cfg)[1]}")
def test_flags_refuse_strings(cfg):
    """A switch given as a string (``'no'`` is true in Python) is refused,
    naming it; it used to be turned on by ``bool()``."""
    with pytest.raises(
            ValueError, match=f'{list(cfg)[1]} must be True or False'):
        HOOKS.build(cfg)


@pytest.mark.parametrize('kwargs, match', [
    (dict(pruner=dict(reduction_factor=1)),
     r'pruner.reduction_factor must be an integer in \[2, 1000\]'),
    (dict(pruner=dict(type='same_schedule_halving', min_trials=0)),
     r'pruner.min_trials must be an integer in \[1, 100000\]'),
    (dict(pruner=dict(type='os.system')), 'pruner must name a pruner of'),
    (dict(first_rung=0), 'first_rung must be an integer >= 1'),
    (dict(trial_id=-1), 'trial_id must be an integer >= 0'),
])
def test_pruning_hook_settings_refused_when_built(kwargs, match):
    """The pruning hook's settings are refused when it is built, not when
    the first epoch reports."""
    cfg = dict(
        type='OptunaPruningHook',
        storage='sqlite:///unused.db',
        study_name='study',
        trial_id=0)
    with pytest.raises((ValueError, TypeError), match=match):
        HOOKS.build({**cfg, **kwargs})


def test_integer_high_bounds_the_value():
    """An upper bound turns the error into the interval."""
    spec = Integer(4, low=1, high=6)
    assert spec.validate('max_digits', np.int64(6)) == 6
    for bad in (0, 7, 6.0, True):
        with pytest.raises(
                ValueError,
                match=r'^max_digits must be an integer in '
                r'\[1, 6\], got '):
            spec.validate('max_digits', bad)
    with pytest.raises(ValueError, match=r'^n must be an integer >= 1, got 0'):
        Integer(low=1).validate('n', 0)


@pytest.mark.parametrize('name', [
    'SyntheticShapes', 'DigitCanvases', 'PhotoCanvases',
    'CustomMultiLabelDataset', 'VOCMultiLabel'
])
def test_dataset_signature_defaults_are_the_declaration(name):
    """The datasets that declare their settings (besides MMEngine's
    arguments, which they pass on) take them with the declared defaults,
    themselves or through an mmlml parent."""
    import mmlml.datasets
    cls = getattr(mmlml.datasets, name)
    params = constructor_parameters(cls)
    for setting, spec in cls.hyperparameters.items():
        assert params[setting].default == spec.default, (name, setting)
    assert set(cls.hyperparameters) - stored_names(cls) == set()
