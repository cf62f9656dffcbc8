"""Inputs and helpers shared by the loss tests (the contract every loss
keeps is checked once, in ``test_loss_contract.py``)."""
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


def check_gradcheck(loss, cls_score, target, reduction='none'):
    """``torch.autograd.gradcheck`` in float64 of
    ``loss(x, target, reduction_override=reduction)`` (keep ``cls_score``
    away from any threshold of the loss)."""
    cls_score = cls_score.detach().double().requires_grad_(True)
    target = target.double()
    assert torch.autograd.gradcheck(
        lambda x: loss(x, target, reduction_override=reduction), (cls_score, ),
        eps=1e-6,
        atol=1e-5)
