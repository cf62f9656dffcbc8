"""EMLoss: formula, official form, generic loss checks."""

import numpy as np
import pytest
import torch
from loss_checks import build, random_logits, tri_state_target

from mmlml.models.losses import em_loss


def reference_em(x, t, alpha, eps=0.0):
    """float64 numpy transcription of the per-element loss; ``eps=1e-5`` is
    the official code's ``-log(x + 1e-5)``."""
    x = np.asarray(x, dtype=np.float64)
    t = np.asarray(t)
    p = 1 / (1 + np.exp(-x))

    def neg_log(v):
        return -np.log(v + eps)

    entropy = p * neg_log(p) + (1 - p) * neg_log(1 - p)
    out = np.where(t == 1, neg_log(p), -alpha * entropy)
    return np.where(t == -1, neg_log(1 - p), out)


def test_matches_reference():
    x, t = random_logits((6, 7), scale=3.0), tri_state_target(6, 7)
    loss = build(dict(type='EMLoss', alpha=0.2))
    got = loss(x.double(), t, reduction_override='none')
    np.testing.assert_allclose(
        got.numpy(), reference_em(x, t, 0.2), rtol=1e-10, atol=1e-12)
    # The official epsilon moves -log(q) by about 1e-5 / q.
    p = torch.sigmoid(x.double()).numpy()
    bound = 2e-5 / np.minimum(p, 1 - p)
    diff = np.abs(got.numpy() - reference_em(x, t, 0.2, eps=1e-5))
    assert (diff <= bound).all()


def test_hand_values():
    x = torch.zeros(1, 3)
    t = torch.tensor([[1.0, 0.0, -1.0]])
    got = build(dict(type='EMLoss', alpha=0.5))(
        x, t, reduction_override='none')
    log2 = float(np.log(2))
    torch.testing.assert_close(got, torch.tensor([[log2, -0.5 * log2, log2]]))


def test_default_alpha_and_official_scale():
    loss = build(dict(type='EMLoss'))
    assert loss.alpha == 0.1
    x, t = random_logits((4, 5)), tri_state_target(4, 5).clamp(min=0)
    # Official: mean over N x C == loss_weight 1/C with avg_factor N.
    official = reference_em(x, t, 0.1).mean()
    scaled = build(dict(type='EMLoss', loss_weight=1 / 5))
    assert float(scaled(x, t, avg_factor=4)) == pytest.approx(
        official, rel=1e-6)


def test_gradient_matches_paper():
    """Eq. 5: dL/dg = -e^{-g}/(1+e^{-g}) for positives and
    alpha * g * p (1 - p) for unannotated labels."""
    g = torch.linspace(-6, 6, 13, dtype=torch.float64)
    x = torch.stack([g, g]).requires_grad_()
    t = torch.stack([torch.ones_like(g), torch.zeros_like(g)])
    em_loss(x, t, alpha=0.3, reduction='sum').backward()
    p = torch.sigmoid(g)
    torch.testing.assert_close(x.grad[0], -torch.exp(-g) / (1 + torch.exp(-g)))
    torch.testing.assert_close(x.grad[1], 0.3 * g * p * (1 - p))


def test_alpha_zero_ignores_unannotated():
    x = random_logits((3, 4))
    t = torch.zeros(3, 4)
    t[:, 0] = 1
    got = em_loss(x, t, alpha=0.0, reduction='none')
    assert (got[:, 1:] == 0).all()


@pytest.mark.parametrize('alpha', [-0.1, float('inf'), 'x'])
def test_bad_alpha(alpha):
    with pytest.raises(ValueError, match='alpha'):
        build(dict(type='EMLoss', alpha=alpha))
    with pytest.raises(ValueError, match='alpha'):
        em_loss(torch.zeros(1, 2), torch.tensor([0]), alpha=alpha)
