"""Bad and extreme input of every registered loss (enumerated through
``LOSS_CATALOG``): non-finite targets, hyperparameters, weights and
schedules, numpy scalars, ``use_sigmoid``, extreme and half-precision
logits, and epoch-dependent losses called outside a training epoch.

The case ids follow ``tests/test_datasets/test_dataset_bad_input.py``.
"""
import os.path as osp
import uuid

import numpy as np
import pytest
import torch
from conftest import ROOT
from mmengine.config import Config
from mmengine.logging import MessageHub
from mmengine.registry import DefaultScope

import mmlml  # noqa: F401  (registers everything)
from mmlml.models import losses as L
from mmlml.models.losses import LOSS_CATALOG, example_state
from mmlml.registry import MODELS
from mmlml.utils.hyperparameters import Real, RealTuple
from mmlml.utils.signatures import constructor_parameters

NAN, INF = float('nan'), float('inf')

#: Losses whose behaviour depends on the training epoch.
EPOCH_LOSSES = [
    name for name in LOSS_CATALOG if hasattr(MODELS.get(name), 'set_epoch')
]


def tri_state(num=4, num_classes=5):
    target = torch.tensor([[1., 0., -1., 0., 1.], [0., 1., -1., -1., 0.],
                           [-1., 0., 1., 0., 0.], [1., -1., 0., 1., -1.]])
    return target[:num, :num_classes]


def build_loss(name, **overrides):
    """A catalog loss, built through the registry at epoch 2 of 10."""
    loss = MODELS.build(dict(type=name, **{**LOSS_CATALOG[name], **overrides}))
    if hasattr(loss, 'set_epoch'):
        loss.set_epoch(2, 10)
    return loss


def call(loss, cls_score, target):
    return loss(cls_score, target, **example_state(loss, cls_score.detach()))


def _float_hyperparameters():
    """(loss, hyperparameter) for every declared real hyperparameter (not
    the tuples, :func:`_tuple_hyperparameters`)."""
    return [(name, hp) for name in LOSS_CATALOG for hp, spec in getattr(
        MODELS.get(name), 'hyperparameters', {}).items()
            if isinstance(spec, Real) and not isinstance(spec, RealTuple)]


def _tuple_hyperparameters():
    """(loss, hyperparameter, index) for every entry of a declared tuple
    hyperparameter (GR Loss's linear schedules)."""
    return [(name, hp, i) for name in LOSS_CATALOG for hp, spec in getattr(
        MODELS.get(name), 'hyperparameters', {}).items()
            if isinstance(spec, RealTuple) for i in range(len(spec.names))]


#: Functional forms with the arguments they need besides the tensors.
FUNCTIONALS = {
    'hill_loss': {},
    'focal_margin_loss': {},
    'splc_loss': {},
    'lasd_loss': {},
    'em_loss': {},
    'opml_loss': {},
    'zlpr_loss': {},
    'assume_negative_loss': {},
    'negative_mse_loss': {},
    'asymmetric_focal_loss': {},
    'epr_loss': dict(expected_positives=2.0),
    'entmin_loss': dict(alpha=0.1),
}


@pytest.mark.parametrize('value', [NAN, INF, -INF], ids=['nan', 'inf', '-inf'])
@pytest.mark.parametrize('name', list(LOSS_CATALOG))
def test_loss_target_nonfinite(name, value):
    """loss-target-nonfinite: a target with NaN or +-inf is refused (it
    raised ``cannot convert float NaN to integer`` or ``OverflowError``,
    and OPML/ZLPR returned NaN)."""
    loss = build_loss(name)
    target = tri_state()
    target[1, 2] = value
    with pytest.raises(ValueError, match='non-finite'):
        call(loss, torch.randn(4, 5), target)


@pytest.mark.parametrize('value', [NAN, INF], ids=['nan', 'inf'])
@pytest.mark.parametrize('name', sorted(FUNCTIONALS))
def test_loss_functional_target_nonfinite(name, value):
    """loss-functional-target-nonfinite: the functional forms too."""
    target = tri_state()
    target[0, 0] = value
    with pytest.raises(ValueError, match='non-finite'):
        getattr(L, name)(torch.randn(4, 5), target, **FUNCTIONALS[name])


@pytest.mark.parametrize('value', [NAN, INF], ids=['nan', 'inf'])
@pytest.mark.parametrize(
    'name, hp', _float_hyperparameters(), ids=lambda v: str(v))
def test_loss_hyperparameter_nonfinite(name, hp, value):
    """loss-hyperparameter-nonfinite: every real hyperparameter refuses
    NaN and inf, naming itself."""
    with pytest.raises(ValueError, match=rf'{hp}.*finite'):
        build_loss(name, **{hp: value})


def _takes(name, argument):
    return argument in constructor_parameters(MODELS.get(name))


#: Losses with a ``loss_weight`` (``LossSum`` weighs its parts instead).
WEIGHTED_LOSSES = [
    name for name in LOSS_CATALOG if _takes(name, 'loss_weight')
]


@pytest.mark.parametrize(
    'value', [NAN, INF, np.float32('nan')],
    ids=['nan', 'inf', 'np.float32-nan'])
@pytest.mark.parametrize('name', WEIGHTED_LOSSES)
def test_loss_weight_nonfinite(name, value):
    """loss-weight-nonfinite: ``loss_weight`` too."""
    with pytest.raises(ValueError, match=r'loss_weight.*finite'):
        build_loss(name, loss_weight=value)


@pytest.mark.parametrize(
    'name, hp, index', _tuple_hyperparameters(), ids=lambda v: str(v))
def test_loss_schedule_entry_nonfinite(name, hp, index):
    """loss-schedule-nonfinite: each entry of GR Loss's tuple schedules
    refuses NaN, naming the entry."""
    spec = MODELS.get(name).hyperparameters[hp]
    value = list(spec.default)
    value[index] = NAN
    with pytest.raises(ValueError, match=rf'{hp}\[{index}\].*finite'):
        build_loss(name, **{hp: tuple(value)})


def _numpy_overrides(name):
    """Every real and integer hyperparameter of a loss with a value, as a
    numpy scalar, and the same as Python numbers."""
    numpy_values, python_values = {}, {}
    for hp, spec in getattr(MODELS.get(name), 'hyperparameters', {}).items():
        value = LOSS_CATALOG[name].get(hp, spec.default)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        scalar = np.int64(value) if isinstance(value,
                                               int) else np.float32(value)
        numpy_values[hp], python_values[hp] = scalar, scalar.item()
    if _takes(name, 'loss_weight'):
        numpy_values['loss_weight'] = np.float32(2.0)
        python_values['loss_weight'] = 2.0
    return numpy_values, python_values


@pytest.mark.parametrize('name', list(LOSS_CATALOG))
def test_loss_numpy_scalar_hyperparameters(name):
    """loss-numpy-scalars: ``np.float32(2.0)`` and ``np.int64(1)`` are real
    numbers and behave like the Python number."""
    numpy_values, python_values = _numpy_overrides(name)
    x, target = torch.randn(4, 5), tri_state()
    expected = call(build_loss(name, **python_values), x, target)
    got = call(build_loss(name, **numpy_values), x, target)
    torch.testing.assert_close(got, expected)


@pytest.mark.parametrize('name', list(LOSS_CATALOG))
def test_loss_use_sigmoid(name):
    """loss-use-sigmoid: ``use_sigmoid=True`` (the stock multi-label loss
    config's) is accepted; ``False`` (a softmax) is refused."""
    build_loss(name, use_sigmoid=True)
    with pytest.raises(ValueError, match='sigmoid'):
        build_loss(name, use_sigmoid=False)


def test_cfg_options_loss_type_on_a_stock_config():
    """cfg-options-loss-type: the tools' help example
    ``--cfg-options model.head.loss.type=HillLoss`` on a stock multi-label
    config (its loss is ``CrossEntropyLoss(use_sigmoid=True)``)."""
    cfg = Config.fromfile(osp.join(ROOT, 'configs', 'demo', 'an.py'))
    assert cfg.model.head.loss.use_sigmoid is True
    cfg.merge_from_dict({'model.head.loss.type': 'HillLoss'})
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        model = MODELS.build(cfg.model)
    assert type(model.head.loss_module).__name__ == 'HillLoss'


@pytest.mark.parametrize(
    'dtype', [torch.float32, torch.float64], ids=['float32', 'float64'])
@pytest.mark.parametrize('name', list(LOSS_CATALOG))
def test_loss_extreme_logits(name, dtype):
    """loss-extreme-logits: logits of +-1e4 give a finite loss and finite
    gradients."""
    x = (torch.tensor([[1., -1., 1., -1., 1.], [-1., 1., -1., 1., -1.],
                       [1., 1., -1., -1., 1.], [-1., -1., 1., 1., -1.]]) *
         1e4).to(dtype).requires_grad_(True)
    loss = call(build_loss(name), x, tri_state().to(dtype))
    assert torch.isfinite(loss).all()
    loss.sum().backward()
    assert torch.isfinite(x.grad).all()


@pytest.mark.parametrize('name', list(LOSS_CATALOG))
def test_loss_float16_logits(name):
    """loss-float16: half-precision logits (AMP) give a finite loss and
    finite gradients."""
    x = (torch.randn(4, 5, generator=torch.Generator().manual_seed(0)) *
         8).half().requires_grad_(True)
    loss = call(build_loss(name), x, tri_state().half())
    assert torch.isfinite(loss).all()
    loss.float().sum().backward()
    assert torch.isfinite(x.grad).all()


@pytest.mark.parametrize('name', EPOCH_LOSSES)
def test_epoch_dependent_loss_outside_training(name):
    """loss-epoch-outside-training: with a fresh MessageHub (no training),
    an epoch-dependent loss called without ``set_epoch`` refuses to
    guess."""
    MessageHub.get_instance(f'bad_input_{uuid.uuid4().hex}')
    loss = MODELS.build(dict(type=name, **LOSS_CATALOG[name]))
    x = torch.randn(4, 5)
    with pytest.raises(RuntimeError, match='set_epoch'):
        loss(x, tri_state(), **example_state(loss, x))


def test_epoch_dependent_loss_after_training(trained):
    """loss-epoch-after-training: once a Runner's ``train()`` has finished,
    an epoch-dependent loss called without ``set_epoch`` refuses to guess
    the epoch."""
    hubs = MessageHub._instance_dict
    hub = trained.runner.message_hub
    hubs[hub.instance_name] = hubs.pop(hub.instance_name)  # make current
    assert MessageHub.get_current_instance() is hub
    for name in EPOCH_LOSSES:
        loss = MODELS.build(dict(type=name, **LOSS_CATALOG[name]))
        x = torch.randn(4, 5)
        with pytest.raises(RuntimeError, match='set_epoch'):
            loss(x, tri_state(), **example_state(loss, x))


@pytest.mark.parametrize('reduction', ['mean', 'sum'])
@pytest.mark.parametrize(
    'value',
    [-1, NAN, torch.tensor(-2.), torch.tensor(NAN)],
    ids=['negative', 'nan', 'negative-tensor', 'nan-tensor'])
@pytest.mark.parametrize('name', list(LOSS_CATALOG))
def test_loss_avg_factor_negative_or_nan(name, value, reduction):
    """A negative or NaN avg_factor (a miscounted batch) is refused in one
    line instead of flipping or poisoning the loss, also where the
    reduction ('sum') does not divide by it."""
    loss = build_loss(name)
    cls_score = torch.randn(4, 5)
    with pytest.raises(ValueError, match='avg_factor must be a number >= 0'):
        loss(
            cls_score,
            tri_state(),
            avg_factor=value,
            reduction_override=reduction,
            **example_state(loss, cls_score))


@pytest.mark.parametrize('avg_factor', [0, 3, torch.tensor(0.)])
@pytest.mark.parametrize('zero', [False, True])
def test_reduction_divides_by_avg_factor_as_mmpretrain(avg_factor, zero):
    """The shared reduction divides the sum by avg_factor exactly as
    MMPretrain's weight_reduce_loss (no epsilon): avg_factor=0 gives inf
    for a non-zero sum and NaN for a zero one (was: the sum)."""
    from mmpretrain.models.losses.utils import weight_reduce_loss
    elementwise = torch.zeros(4, 5) if zero else torch.rand(4, 5) + 0.1
    weight = torch.rand(4, 5)
    torch.testing.assert_close(
        L.reduce_loss(elementwise, weight, avg_factor=avg_factor),
        weight_reduce_loss(elementwise, weight, avg_factor=avg_factor),
        equal_nan=True)


@pytest.mark.parametrize(
    'name', [n for n in LOSS_CATALOG if n != 'HighRankRegularizer'])
def test_loss_avg_factor_zero(name):
    """avg_factor=0 divides like MMPretrain's weight_reduce_loss (a
    non-zero sum over nothing is not finite), never returns the sum; an
    empty batch stays 0 with a zero gradient. (HighRankRegularizer, a
    batch-level term, ignores avg_factor.)"""
    loss = build_loss(name)
    cls_score = torch.randn(4, 5)
    total = loss(
        cls_score,
        tri_state(),
        reduction_override='sum',
        **example_state(loss, cls_score))
    value = loss(
        cls_score, tri_state(), avg_factor=0, **example_state(loss, cls_score))
    if total != 0:
        assert not torch.isfinite(value)
    empty = torch.zeros(0, 5, requires_grad=True)
    value = loss(
        empty,
        torch.zeros(0, 5),
        avg_factor=0,
        **example_state(loss, empty.detach()))
    value.backward()
    assert value.item() == 0 and not empty.grad.abs().sum()
