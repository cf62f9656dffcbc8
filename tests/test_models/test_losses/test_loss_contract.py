"""The contract every registered mmlml loss keeps, checked once for each
loss of the ``MODELS`` registry (``LOSS_CATALOG``: built with its defaults
unless ``LOSS_ARGUMENTS`` lists what it needs) and a few variants that
reach other branches: reductions and ``avg_factor``, ``weight``,
class-index targets, bad input, logits of +-100, CPU autocast, gradcheck,
the declared hyperparameters and ``repr``.

What is specific to one loss (formula values, identities, official-code
comparisons) stays in its own test file.
"""
import copy
import math

import pytest
import torch
from loss_checks import check_gradcheck, random_logits, tri_state_target

import mmlml  # noqa: F401
from mmlml.models.losses import LOSS_CATALOG, PartialLabelLoss, example_state
from mmlml.models.losses.catalog import LOSS_ARGUMENTS, mmlml_losses
from mmlml.registry import MODELS
from mmlml.utils.signatures import constructor_parameters

# Configurations beyond the catalog's defaults, each reaching a branch the
# default does not.
VARIANTS = [
    dict(type='FocalMarginLoss', gamma_neg=2.0),
    dict(type='SPLCLoss', margin=0, gamma_pos=0, gamma_neg=4, clip=0.05),
    dict(type='SPLCLoss', margin=0, gamma=0, pseudo_margin=True),
    dict(type='SPLCLoss', detach_focal_weight=True),
    dict(type='LASDLoss'),
    dict(
        type='LASDLoss', expected_positives=2.5, observed_negative_weight=1.0),
    dict(type='LASDLoss', lambda_neg=0.1, gamma_pos=1.0),
    dict(type='GRLoss', beta=(0, 10, -2, -8), max_epochs=8),
    dict(type='GPRLoss', expected_positives=2.9, max_epochs=10),
    dict(type='OPMLLoss', a=0.5, b=2.0),
    dict(type='WANLoss', neg_weight=0.1),
    dict(type='ANLSLoss', smoothing=0.3, negatives_only=True),
    dict(type='LargeLoss', mode='rejection', delta_rel=0.05),
    dict(type='LargeLoss', mode='temporary', delta_rel=0.05),
    dict(type='LargeLoss', mode='permanent', delta_rel=0.05),
    dict(type='PartialFocalLoss', alpha=None),
    dict(type='PartialAsymmetricLoss', clip=0.0),
]
CASES = [dict(type=name, **cfg)
         for name, cfg in LOSS_CATALOG.items()] + VARIANTS
IDS = [
    cfg['type'] +
    ''.join(f',{k}={v}' for k, v in cfg.items() if k not in ('type', 'losses'))
    for cfg in CASES
]
# One value per sample instead of one per label.
PER_SAMPLE = {'OPMLLoss', 'ZLPRLoss', 'OPMLSPLoss'}
# One value per batch: 'none' and weights are refused.
PER_BATCH = {'HighRankRegularizer', 'LossSum'}


class WithExampleState(torch.nn.Module):
    """A stateful loss called with :func:`example_state`, as the head
    would call it."""

    def __init__(self, loss):
        super().__init__()
        self.loss = loss

    def forward(self, cls_score, target, **kwargs):
        return self.loss(cls_score, target, **kwargs,
                         **example_state(self.loss, cls_score))


def build(cfg, epoch=2):
    """Build through the registry; epoch-dependent losses at (0-based)
    ``epoch`` of 10 (LL then modifies ceil(N C 2 delta) entries); stateful
    losses get an example state."""
    loss = MODELS.build(copy.deepcopy(cfg))
    if hasattr(loss, 'set_epoch'):
        loss.set_epoch(epoch, 10)
    if getattr(loss, 'state_inputs', ()):
        return WithExampleState(loss)
    return loss


def inputs(num=6, num_classes=5, seed=0, dtype=torch.float32):
    return (random_logits((num, num_classes), 2.0, seed,
                          dtype), tri_state_target(num, num_classes,
                                                   seed).to(dtype))


def extreme_inputs():
    """Every target value against logits of -100, -30, 0, 30, 100."""
    values = torch.tensor([-100.0, -30.0, 0.0, 30.0, 100.0])
    cls_score = values.repeat(3, 1)
    target = torch.tensor([1.0, 0.0, -1.0])[:, None].expand(3, 5)
    return cls_score, target.contiguous()


def assert_close(actual, expected, atol=1e-5, rtol=1e-5):
    torch.testing.assert_close(actual, expected, atol=atol, rtol=rtol)


def test_stateful_losses_refuse_calls_without_their_state():
    """A stateful loss called without its state (a stock head, or no hook)
    names the head and the hook to use; unknown keywords are refused."""
    for name in LOSS_CATALOG:
        loss = MODELS.build(dict(type=name, **LOSS_CATALOG[name]))
        if not getattr(loss, 'state_inputs', ()):
            continue
        if hasattr(loss, 'set_epoch'):
            loss.set_epoch(2, 10)
        cls_score, target = inputs()
        with pytest.raises(
                RuntimeError,
                match='PartialLabelLinearClsHead.*' + loss.state_hook):
            loss(cls_score, target)
        with pytest.raises(TypeError, match='bogus'):
            loss(
                cls_score,
                target,
                bogus=cls_score,
                **example_state(loss, cls_score))


def test_catalog_covers_every_registered_loss():
    """The catalog is the registry: every loss that mmlml.models.losses
    registers, none other, and each is a case of the contract."""
    registered = [
        name for name, cls in MODELS.module_dict.items()
        if cls.__module__.startswith('mmlml.models.losses')
    ]
    assert list(LOSS_CATALOG) == mmlml_losses() == registered
    assert {cfg['type'] for cfg in CASES} == set(registered)


@pytest.mark.parametrize('name', sorted(LOSS_ARGUMENTS))
def test_catalog_lists_only_the_arguments_a_loss_needs(name):
    """A loss is listed in LOSS_ARGUMENTS only if it is registered and
    cannot be built with its defaults; the others are built with ``{}``."""
    assert name in mmlml_losses()
    with pytest.raises((ValueError, TypeError)):
        MODELS.build(dict(type=name))
    assert LOSS_CATALOG[name] == LOSS_ARGUMENTS[name]
    assert LOSS_CATALOG[name] is not LOSS_ARGUMENTS[name]


def test_a_newly_registered_loss_is_in_the_catalog_with_defaults():
    """Adding a loss needs no list: once registered it is in the catalog,
    built with ``{}``."""

    class ExtraLoss(torch.nn.Module):
        pass

    ExtraLoss.__module__ = 'mmlml.models.losses.extra_loss'
    MODELS.register_module(module=ExtraLoss)
    try:
        assert LOSS_CATALOG['ExtraLoss'] == {}
        assert 'ExtraLoss' in list(LOSS_CATALOG)
    finally:
        MODELS.module_dict.pop('ExtraLoss')
    assert 'ExtraLoss' not in LOSS_CATALOG
    with pytest.raises(KeyError, match='not a registered mmlml loss'):
        LOSS_CATALOG['ExtraLoss']


@pytest.mark.parametrize('cfg', CASES, ids=IDS)
def test_reductions_and_avg_factor(cfg):
    """'none' gives the per-element (or per-sample) losses; 'sum', 'mean',
    avg_factor and loss_weight agree with them; 'sum' ignores avg_factor
    so that it works in the stock head; reduction_override wins."""
    loss = build(cfg)
    cls_score, target = inputs()
    num = cls_score.size(0)
    if cfg['type'] in PER_BATCH:
        # LossSum: the sum of its members, called with the same arguments.
        members = getattr(loss, 'losses', [loss])
        for kwargs in (dict(reduction_override='sum'), dict(avg_factor=num),
                       {}):
            value = loss(cls_score, target, **kwargs)
            assert value.dim() == 0
            assert_close(value,
                         sum(m(cls_score, target, **kwargs) for m in members))
        with pytest.raises(ValueError, match="'none'"):
            loss(cls_score, target, reduction_override='none')
        return
    elementwise = loss(cls_score, target, reduction_override='none')
    shape = (num, ) if cfg['type'] in PER_SAMPLE else cls_score.shape
    assert elementwise.shape == shape
    total = elementwise.sum()
    assert_close(loss(cls_score, target, reduction_override='sum'), total)
    assert_close(
        loss(cls_score, target, reduction_override='mean'), elementwise.mean())
    assert_close(
        loss(cls_score, target, reduction_override='mean', avg_factor=num),
        total / num)
    assert_close(
        loss(cls_score, target, reduction_override='sum', avg_factor=num),
        total)
    with pytest.raises(ValueError, match='reduction'):
        loss(cls_score, target, reduction_override='average')
    weighted = build(dict(cfg, loss_weight=2.5))
    assert_close(
        weighted(cls_score, target, reduction_override='sum'), 2.5 * total)


@pytest.mark.parametrize('cfg', CASES, ids=IDS)
def test_weights(cfg):
    """Sample-wise (N,) weights scale each sample's loss, element-wise
    (N, C) weights each element's (OPML: inside its sums, tested in its
    own file); a weight of another shape is refused."""
    loss = build(cfg)
    cls_score, target = inputs()
    num, num_classes = cls_score.shape
    if cfg['type'] in PER_BATCH:
        with pytest.raises(ValueError, match='weight'):
            loss(cls_score, target, weight=torch.ones(num))
        return
    unweighted = loss(cls_score, target, reduction_override='none')
    sample_weight = torch.linspace(0.0, 2.0, num)
    per_sample = unweighted if unweighted.dim() == 1 else unweighted.sum(1)
    assert_close(
        loss(
            cls_score, target, weight=sample_weight, reduction_override='sum'),
        (per_sample * sample_weight).sum())
    if cfg['type'] not in PER_SAMPLE:
        element_weight = torch.rand(
            num, num_classes, generator=torch.Generator().manual_seed(1))
        assert_close(
            loss(
                cls_score,
                target,
                weight=element_weight,
                reduction_override='none'), unweighted * element_weight)
    with pytest.raises(ValueError, match='weight'):
        loss(cls_score, target, weight=torch.ones(num + 1))
    for bad in (math.nan, math.inf, -1.0):  # never silently
        weight = torch.ones(num)
        weight[1] = bad
        with pytest.raises(ValueError, match='finite and >= 0'):
            loss(cls_score, target, weight=weight)


@pytest.mark.parametrize('cfg', CASES, ids=IDS)
def test_index_targets(cfg):
    """Class indices (N,) and (N, 1) mean one observed positive per sample,
    every other label unannotated."""
    loss = build(cfg)
    cls_score, _ = inputs()
    num, num_classes = cls_score.shape
    index = torch.arange(num) % num_classes
    dense = torch.nn.functional.one_hot(index, num_classes).float()
    reduction = 'sum' if cfg['type'] in PER_BATCH else 'none'
    expected = loss(cls_score, dense, reduction_override=reduction)
    for target in (index, index[:, None]):
        assert_close(
            loss(cls_score, target, reduction_override=reduction), expected)


@pytest.mark.parametrize('cfg', CASES, ids=IDS)
def test_bad_input(cfg):
    """A shape mismatch, values outside the encoding, integer logits and
    out-of-range indices give errors that name the problem."""
    loss = build(cfg)
    cls_score = torch.zeros(2, 5)
    with pytest.raises(ValueError, match='shape'):
        loss(cls_score, torch.zeros(2, 6))
    soft = cfg['type'] in PER_SAMPLE or cfg['type'] == 'HighRankRegularizer'
    for value in ((2.0, -0.5) if soft else (0.5, 2.0)):
        bad = torch.zeros(2, 5)
        bad[0, 0] = value
        with pytest.raises(ValueError, match='target values'):
            loss(cls_score, bad)
    with pytest.raises(TypeError, match='floating-point'):
        loss(torch.zeros(2, 5, dtype=torch.long), torch.zeros(2, 5))
    with pytest.raises(ValueError, match='class indices'):
        loss(cls_score, torch.tensor([0, 5]))


@pytest.mark.parametrize('cfg', CASES, ids=IDS)
def test_finite_for_extreme_logits(cfg):
    """Finite loss and gradients for logits of +-100 in float32."""
    loss = build(cfg)
    cls_score, target = extreme_inputs()
    cls_score.requires_grad_(True)
    value = loss(cls_score, target, reduction_override='sum')
    assert torch.isfinite(value), value
    value.backward()
    assert torch.isfinite(cls_score.grad).all(), cls_score.grad


@pytest.mark.parametrize('cfg', CASES, ids=IDS)
@pytest.mark.parametrize('dtype', [torch.bfloat16, torch.float16])
def test_autocast(cfg, dtype):
    """Half-precision logits from a layer under CPU autocast, logits of
    +-100 included: a finite float32 loss and finite gradients."""
    loss = build(cfg)
    cls_score, target = extreme_inputs()
    layer = torch.nn.Linear(5, 5)
    with torch.no_grad():
        layer.weight.copy_(torch.eye(5))
        layer.bias.zero_()
    with torch.autocast('cpu', dtype=dtype):
        logits = layer(cls_score)
        assert logits.dtype == dtype
        value = loss(logits, target, avg_factor=3)
    assert value.dtype == torch.float32
    assert torch.isfinite(value), value
    value.backward()
    assert torch.isfinite(layer.weight.grad).all()


@pytest.mark.parametrize('cfg', CASES, ids=IDS)
def test_gradcheck(cfg):
    """Analytic gradients match finite differences in float64 (a detached
    focal weight is not the true slope, so it is re-attached here)."""
    if cfg['type'] == 'GRLoss':
        pytest.skip('GR stops the gradient of its pseudo-label and weight '
                    '(by design); test_losses_gr.py gradchecks the loss '
                    'with both given')
    if cfg['type'] == 'GPRLoss':
        pytest.skip("GPR stops the gradient of GR's pseudo-label and "
                    'weights (by design); test_gpr_loss.py checks its '
                    'gradients with them held constant')
    if cfg['type'] == 'ROLELoss':
        pytest.skip('ROLE stops the gradient of each half through the '
                    'other (as the official code does); test_role.py '
                    "compares both gradients with the official code's")
    if cfg['type'] == 'OPMLSPLoss':
        pytest.skip('OPML-SP stops the gradient of its soft targets (by '
                    'design); test_opml_sp.py gradchecks it with eps = 0')
    if cfg.get('detach_focal_weight', False) or cfg['type'] == \
            'PartialAsymmetricLoss':
        cfg = dict(cfg, detach_focal_weight=False)
    reduction = 'sum' if cfg['type'] in PER_BATCH else 'none'
    check_gradcheck(build(cfg), *inputs(4, 4, seed=3), reduction)


@pytest.mark.parametrize('name',
                         [n for n in LOSS_CATALOG if n not in PER_BATCH])
def test_declared_hyperparameters(name):
    """The constructor takes exactly the declared hyperparameters (its
    signature lists them), validates them, refuses unknown names and
    prints them without needing a training epoch."""
    cls = MODELS.get(name)
    assert issubclass(cls, PartialLabelLoss)
    params = constructor_parameters(cls)  # along its mmlml parents
    assert sorted(params) == sorted(
        [*cls.hyperparameters, 'reduction', 'loss_weight', 'use_sigmoid'])
    loss = MODELS.build(dict(type=name, **LOSS_CATALOG[name]))
    text = repr(loss)  # no set_epoch: repr must not need the epoch
    for hparam in cls.hyperparameters:
        assert f'{hparam}=' in text
    with pytest.raises(TypeError, match=f"{name} has no setting 'bogus'"):
        MODELS.build(dict(type=name, **LOSS_CATALOG[name], bogus=1))
    for bad in (float('nan'), 'one', None):
        with pytest.raises(ValueError, match='loss_weight'):
            MODELS.build(
                dict(type=name, **LOSS_CATALOG[name], loss_weight=bad))
    # A stock multi-label loss config's use_sigmoid=True is accepted (so
    # that replacing its type works); a softmax loss is not on offer.
    MODELS.build(dict(type=name, **LOSS_CATALOG[name], use_sigmoid=True))
    with pytest.raises(ValueError, match='use_sigmoid'):
        MODELS.build(dict(type=name, **LOSS_CATALOG[name], use_sigmoid=False))


def test_docstring_examples_run():
    """The examples in the losses' docstrings are correct."""
    import doctest
    import importlib
    import pkgutil

    import mmlml.models.losses as package
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f'{package.__name__}.{info.name}')
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.failed == 0, info.name


def test_second_derivative_is_autograd():
    """Losses are plain differentiable expressions: second derivatives
    (e.g. for a gradient penalty) are exact."""
    loss = build(dict(type='HillLoss'))
    x = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
    target = torch.tensor([[1., 0., -1.], [0., 1., 0.]])
    assert torch.autograd.gradgradcheck(lambda z: loss(z, target), (x, ))
