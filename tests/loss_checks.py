"""Generic checks every mmlml loss should pass.

Each function takes a loss module (already built through the registry and,
for epoch-dependent losses, with its epoch set) and raises an
``AssertionError`` when the loss misbehaves. Loss test files call them with
inputs that exercise the loss's own branches.
"""
import pytest
import torch

import mmlml  # noqa: F401  (registers the losses)
from mmlml.registry import MODELS


def build(cfg):
    """Build a loss through MMPretrain's registry."""
    return MODELS.build(dict(cfg))


def tri_state_target(num_samples=4, num_classes=5, seed=0):
    """A random float target in {-1, 0, 1} with every value present."""
    gen = torch.Generator().manual_seed(seed)
    target = torch.randint(-1, 2, (num_samples, num_classes), generator=gen)
    target.view(-1)[:3] = torch.tensor([1, 0, -1])
    return target.float()


def random_logits(shape, scale=3.0, seed=0, dtype=torch.float32):
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=gen) * scale).to(dtype)


def check_reductions(loss, cls_score, target, atol=1e-6):
    """'none' is (N, C); 'sum', 'mean', avg_factor and loss_weight agree
    with it; reduction_override wins over the configured reduction."""
    elementwise = loss(cls_score, target, reduction_override='none')
    assert elementwise.shape == cls_score.shape
    total = elementwise.sum()
    summed = loss(cls_score, target, reduction_override='sum')
    torch.testing.assert_close(summed, total, atol=atol, rtol=1e-6)
    mean = loss(cls_score, target, reduction_override='mean')
    torch.testing.assert_close(mean, elementwise.mean(), atol=atol,
                               rtol=1e-6)
    num = cls_score.size(0)
    per_sample = loss(cls_score, target, reduction_override='mean',
                      avg_factor=num)
    torch.testing.assert_close(per_sample, total / num, atol=atol,
                               rtol=1e-5)
    # 'sum' ignores avg_factor, so it works inside the stock head.
    torch.testing.assert_close(
        loss(cls_score, target, reduction_override='sum', avg_factor=num),
        total, atol=atol, rtol=1e-6)
    with pytest.raises(ValueError, match='reduction'):
        loss(cls_score, target, reduction_override='average')
    old_weight = loss.loss_weight
    try:
        loss.loss_weight = 2.5
        torch.testing.assert_close(
            loss(cls_score, target, reduction_override='sum'), 2.5 * total,
            atol=atol, rtol=1e-6)
    finally:
        loss.loss_weight = old_weight
    return elementwise


def check_weights(loss, cls_score, target, atol=1e-6):
    """Sample-wise (N,) and element-wise (N, C) weights multiply the
    per-element loss; a weight of another shape is refused."""
    elementwise = loss(cls_score, target, reduction_override='none')
    num, num_classes = cls_score.shape
    sample_weight = torch.linspace(0.0, 2.0, num)
    torch.testing.assert_close(
        loss(cls_score, target, weight=sample_weight,
             reduction_override='sum'),
        (elementwise * sample_weight[:, None]).sum(), atol=atol, rtol=1e-6)
    element_weight = torch.rand(num, num_classes,
                                generator=torch.Generator().manual_seed(1))
    torch.testing.assert_close(
        loss(cls_score, target, weight=element_weight,
             reduction_override='none'),
        elementwise * element_weight, atol=atol, rtol=1e-6)
    with pytest.raises(ValueError, match='weight'):
        loss(cls_score, target, weight=torch.ones(num + 1))


def check_index_target(loss, cls_score, atol=1e-6):
    """Class indices (N,) and (N, 1) mean one observed positive per sample,
    everything else unannotated."""
    num, num_classes = cls_score.shape
    index = torch.arange(num) % num_classes
    dense = torch.zeros(num, num_classes)
    dense[torch.arange(num), index] = 1
    expected = loss(cls_score, dense, reduction_override='none')
    for target in (index, index[:, None]):
        torch.testing.assert_close(
            loss(cls_score, target, reduction_override='none'), expected,
            atol=atol, rtol=1e-6)


def check_bad_input(loss, num_classes=5):
    """Shape mismatch, values outside {-1, 0, 1} and integer logits raise
    clear errors."""
    cls_score = torch.zeros(2, num_classes)
    with pytest.raises(ValueError, match='shape'):
        loss(cls_score, torch.zeros(2, num_classes + 1))
    with pytest.raises(ValueError, match='target values'):
        bad = torch.zeros(2, num_classes)
        bad[0, 0] = 0.5
        loss(cls_score, bad)
    with pytest.raises(ValueError, match='target values'):
        bad = torch.zeros(2, num_classes)
        bad[1, 1] = 2
        loss(cls_score, bad)
    with pytest.raises(TypeError, match='floating-point'):
        loss(torch.zeros(2, num_classes, dtype=torch.long),
             torch.zeros(2, num_classes))
    with pytest.raises(ValueError, match='class indices'):
        loss(cls_score, torch.tensor([0, num_classes]))


def _extreme_inputs():
    """Every target value against logits of -100, -30, 0, 30, 100."""
    values = torch.tensor([-100.0, -30.0, 0.0, 30.0, 100.0])
    targets = torch.tensor([1.0, 0.0, -1.0])
    cls_score = values.repeat(3, 1)
    target = targets[:, None].expand(3, values.numel()).contiguous()
    return cls_score, target


def check_finite_extremes(loss):
    """Finite loss and gradients for logits of +-100 in float32."""
    cls_score, target = _extreme_inputs()
    cls_score.requires_grad_(True)
    value = loss(cls_score, target, reduction_override='sum')
    assert torch.isfinite(value), value
    value.backward()
    assert torch.isfinite(cls_score.grad).all(), cls_score.grad


def check_autocast(loss, num_classes=5):
    """Finite loss and gradients for bfloat16 and float16 logits from a
    layer run under CPU autocast, including logits of +-100."""
    for dtype in (torch.bfloat16, torch.float16):
        cls_score, target = _extreme_inputs()
        layer = torch.nn.Linear(cls_score.size(1), cls_score.size(1))
        with torch.no_grad():
            layer.weight.copy_(torch.eye(cls_score.size(1)))
            layer.bias.zero_()
        with torch.autocast('cpu', dtype=dtype):
            logits = layer(cls_score)
            assert logits.dtype == dtype
            value = loss(logits, target, avg_factor=cls_score.size(0))
        assert value.dtype == torch.float32
        assert torch.isfinite(value), (dtype, value)
        value.backward()
        assert torch.isfinite(layer.weight.grad).all(), dtype


def check_gradcheck(loss, cls_score, target):
    """``torch.autograd.gradcheck`` in float64 (keep ``cls_score`` away
    from any threshold of the loss)."""
    cls_score = cls_score.detach().double().requires_grad_(True)
    target = target.double()
    assert torch.autograd.gradcheck(
        lambda x: loss(x, target, reduction_override='none'), (cls_score, ),
        eps=1e-6, atol=1e-5)
