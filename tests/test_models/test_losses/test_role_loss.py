"""ROLE (Cole et al., CVPR 2021): the loss against a transcription of the
official ``loss_role``, its stop-gradients, the label estimator (initial
values, determinism, size check, size warning) and the errors of
incomplete set-ups (LabelEstimatorHook, which initialises the estimator,
and a short training are tested in
``tests/test_hooks/test_label_estimator_hook.py``)."""
import math
import warnings

import numpy as np
import pytest
import torch
from loss_checks import build, random_logits
from mmpretrain.structures import DataSample

import mmlml  # noqa: F401
from mmlml.models.heads import ROLELabelEstimator
from mmlml.models.heads import role_label_estimator as estimator_module
from mmlml.registry import MODELS

K = 1.5


def official_role(logits, estimator_logits, observed, k, eps=1e-5):
    """The official ``loss_role`` (single-positive-multi-label, losses.py)
    and ``compute_batch_loss``, written out: ``preds`` and
    ``label_vec_est`` are the sigmoids of the two logits, ``-log(q +
    eps)`` the log-loss, the element terms summed and divided by ``N C``,
    plus half the two regularisers ``(mean_n sum_c q - k)^2 / C^2``."""
    num, num_classes = logits.shape
    p = torch.sigmoid(logits)
    q = torch.sigmoid(estimator_logits)

    def nlog(x):
        return -torch.log(x + eps)

    def reg(x):
        return (x.sum(1).mean(0) - k)**2 / num_classes**2

    pos = (observed == 1).to(p)
    classifier = pos * nlog(p) + (
        q.detach() * nlog(p) + (1 - q.detach()) * nlog(1 - p))
    estimator = pos * nlog(q) + (
        p.detach() * nlog(q) + (1 - p.detach()) * nlog(1 - q))
    elements = 0.5 * classifier + 0.5 * estimator
    return (elements / (num * num_classes)).sum() + 0.5 * (reg(p) + reg(q))


def single_positive(num, num_classes, seed=0):
    gen = torch.Generator().manual_seed(seed)
    target = torch.zeros(num, num_classes)
    target[torch.arange(num),
           torch.randint(num_classes, (num, ), generator=gen)] = 1
    return target


def role_inputs(num=8, num_classes=6, seed=0, scale=2.0):
    x = random_logits((num, num_classes), scale, seed, torch.float64)
    z = random_logits((num, num_classes), scale, seed + 1, torch.float64)
    return (x.requires_grad_(True), z.requires_grad_(True),
            single_positive(num, num_classes, seed).double())


@pytest.mark.parametrize('eps,tol', [(0.0, 1e-10), (1e-5, 2e-3)])
@pytest.mark.parametrize('seed', [0, 1, 2])
def test_matches_official_loss_role(eps, tol, seed):
    """Value and both gradients equal the official code's, exactly without
    its epsilon and within its effect with it; the stock head's scale
    (avg_factor=N) with loss_weight=1/C is the official scale too."""
    x, z, target = role_inputs(seed=seed)
    num, num_classes = x.shape
    expected = official_role(x, z, target, K, eps)
    grads = torch.autograd.grad(expected, (x, z))
    loss = build(dict(type='ROLELoss', expected_positives=K))
    value = loss(x, target, label_estimates=z)
    torch.testing.assert_close(value, expected, rtol=tol, atol=tol)
    for actual, want in zip(torch.autograd.grad(value, (x, z)), grads):
        torch.testing.assert_close(actual, want, rtol=tol, atol=tol)
    head_scale = build(
        dict(
            type='ROLELoss', expected_positives=K,
            loss_weight=1 / num_classes))
    torch.testing.assert_close(
        head_scale(x, target, label_estimates=z, avg_factor=num), value)


def test_each_half_gets_only_its_own_gradient():
    """The classifier's gradient is that of its half (its positives, its
    BCE against the detached estimates, its regulariser) and the
    estimator's that of the mirror half, as the official code detaches
    them."""
    x, z, target = role_inputs(seed=3)
    num, num_classes = x.shape
    loss = build(dict(type='ROLELoss', expected_positives=K))
    grad_x, grad_z = torch.autograd.grad(
        loss(x, target, label_estimates=z), (x, z))

    def half(own, other):
        prob = torch.sigmoid(own)
        bce = torch.nn.functional.binary_cross_entropy_with_logits(
            own, torch.sigmoid(other), reduction='none')
        pos = -target * torch.nn.functional.logsigmoid(own)
        penalty = (prob.sum(1).mean() - K)**2 / num_classes**2
        return 0.5 * (pos + bce).sum() / (num * num_classes) + 0.5 * penalty

    torch.testing.assert_close(grad_x,
                               torch.autograd.grad(half(x, z.detach()), x)[0])
    torch.testing.assert_close(grad_z,
                               torch.autograd.grad(half(z, x.detach()), z)[0])
    # Moving the estimates changes the classifier's gradient only through
    # its BCE target, and never gives the estimates a gradient from it.
    only_x = loss(x, target, label_estimates=z.detach())
    assert torch.autograd.grad(only_x, x)[0].equal(grad_x)


def test_observed_negatives_mirror_the_positives():
    """-1 adds -log(1 - p) - log(1 - y_hat) (halved) to the entry."""
    x = torch.tensor([[0.3, -0.4]], dtype=torch.float64)
    z = torch.tensor([[-1.0, 0.8]], dtype=torch.float64)
    loss = build(dict(type='ROLELoss', expected_positives=1.0))
    unknown = loss(
        x, torch.zeros(1, 2), label_estimates=z, reduction_override='none')
    negative = loss(
        x,
        torch.tensor([[-1.0, 0.0]]),
        label_estimates=z,
        reduction_override='none')
    extra = -0.5 * (
        math.log(1 - torch.sigmoid(x[0, 0]).item()) +
        math.log(1 - torch.sigmoid(z[0, 0]).item()))
    torch.testing.assert_close(
        negative - unknown, torch.tensor([[extra, 0.0]], dtype=torch.float64))


def test_bad_label_estimates():
    loss = build(dict(type='ROLELoss', expected_positives=K))
    x = torch.zeros(2, 3)
    with pytest.raises(ValueError, match='label_estimates.*shape'):
        loss(x, torch.tensor([0, 1]), label_estimates=torch.zeros(2, 4))
    with pytest.raises(TypeError, match='label_estimates'):
        loss(
            x,
            torch.tensor([0, 1]),
            label_estimates=torch.zeros(2, 3, dtype=torch.long))
    with pytest.raises(ValueError, match='expected_positives'):
        build(dict(type='ROLELoss'))


# --------------------------------------------------------------- estimator


def observed_labels(num=300, num_classes=7):
    labels = torch.zeros(num, num_classes, dtype=torch.int8)
    labels[torch.arange(num), torch.arange(num) % num_classes] = 1
    labels[::5, 3] = -1
    return labels


def test_initial_values_and_determinism():
    labels = observed_labels()
    estimator = ROLELabelEstimator(*labels.shape)
    estimator.initialize(labels, seed=3)
    logits = estimator.logits.detach()
    assert torch.all(logits[labels == 1] == np.float32(math.log(199)))
    assert torch.all(logits[labels == -1] == np.float32(-math.log(199)))
    free = logits[labels == 0]
    bound = math.log(0.6 / 0.4)
    assert free.abs().max() <= bound and free.abs().max() > 0.95 * bound
    assert abs(float(free.mean())) < 0.05
    # Uniform: a quarter of the draws in each quarter of the interval.
    quarters = torch.histc(free, bins=4, min=-bound, max=bound) / free.numel()
    assert torch.allclose(quarters, torch.full((4, ), 0.25), atol=0.04)

    again = ROLELabelEstimator(*labels.shape)
    again.initialize(labels, seed=3)
    assert torch.equal(again.logits, estimator.logits)
    other = ROLELabelEstimator(*labels.shape)
    other.initialize(labels, seed=4)
    assert not torch.equal(other.logits, estimator.logits)


def test_lookup_needs_initialisation_which_checkpoints_keep():
    labels = observed_labels(20, 4)
    estimator = ROLELabelEstimator(20, 4)
    with pytest.raises(RuntimeError, match='LabelEstimatorHook'):
        estimator(torch.tensor([0, 1]))
    estimator.initialize(labels, seed=0)
    state = estimator(torch.tensor([2, 0]))['label_estimates']
    assert state.requires_grad and state.shape == (2, 4)
    assert torch.equal(state, estimator.logits[[2, 0]])

    restored = ROLELabelEstimator(20, 4)
    restored.load_state_dict(estimator.state_dict())
    assert restored.is_initialized
    # A checkpoint of another training set (its logits skipped for their
    # shape, as MMEngine's non-strict loading does) does not count.
    other = ROLELabelEstimator(30, 4)
    other.load_state_dict(
        dict(initialized_shape=estimator.initialized_shape), strict=False)
    assert not other.is_initialized
    with pytest.raises(ValueError, match='20 x 4'):
        ROLELabelEstimator(20, 4).initialize(labels[:10], seed=0)


def test_size_warning(monkeypatch):
    """Above 1 GiB of float32 parameter + Adam states (OpenImages, not the
    single-positive benchmarks) the estimator warns, with the numbers."""
    assert estimator_module.size_warning(65665, 80) is None  # COCO
    assert estimator_module.size_warning(120000, 81) is None  # NUS-WIDE
    message = estimator_module.size_warning(1743042, 567)  # OpenImages
    assert '988.3 M' in message and '11.9 GB' in message
    assert '4.0 GB more for the gradient' in message
    monkeypatch.setattr(estimator_module, 'WARN_BYTES', 100)
    with pytest.warns(UserWarning, match=r'3 samples x 4 classes.*impractic'):
        ROLELabelEstimator(3, 4)
    monkeypatch.setattr(estimator_module, 'WARN_BYTES', 144)
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        ROLELabelEstimator(3, 4)


@pytest.mark.parametrize('kwargs', [
    dict(num_samples=0),
    dict(num_classes=2.0),
    dict(unannotated_prob=0.4),
    dict(positive_prob=1.0),
])
def test_bad_estimator_arguments(kwargs):
    args = {**dict(num_samples=3, num_classes=2), **kwargs}
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        ROLELabelEstimator(**args)


# ------------------------------------------------------------------ heads


def head_batch(head_type, estimator=True):
    head = dict(
        type=head_type,
        num_classes=4,
        in_channels=8,
        loss=dict(type='ROLELoss', expected_positives=1.0))
    if estimator:
        head['label_estimator'] = dict(
            type='ROLELabelEstimator', num_samples=10, num_classes=4)
    samples = [
        DataSample(metainfo=dict(sample_idx=i)).set_gt_label([i % 4])
        for i in (3, 7)
    ]
    return MODELS.build(head), (torch.randn(2, 8), ), samples


def test_stock_head_fails_with_the_set_up_to_use():
    head, feats, samples = head_batch(
        'MultiLabelLinearClsHead', estimator=False)
    with pytest.raises(
            RuntimeError,
            match="ROLELabelEstimator.*num_samples.*LabelEstimatorHook"):
        head.loss(feats, samples)


def test_head_hands_the_estimates_once_initialised():
    head, feats, samples = head_batch('PartialLabelLinearClsHead')
    with pytest.raises(RuntimeError, match='LabelEstimatorHook'):
        head.loss(feats, samples)
    head.label_estimator.initialize(observed_labels(10, 4), seed=0)
    loss = head.loss(feats, samples)['loss']
    loss.backward()
    grad = head.label_estimator.logits.grad
    assert grad[[3, 7]].abs().sum() > 0
    rows = torch.ones(10, dtype=torch.bool)
    rows[[3, 7]] = False
    assert torch.all(grad[rows] == 0)
