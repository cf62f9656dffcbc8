"""EM + APL: EMAPLLoss against the official loss and its pseudo-label
checks (APLHook, which assigns the pseudo-labels, is tested in
``tests/test_hooks/test_apl_hook.py``)."""
import numpy as np
import pytest
import torch
from conftest import ROOT  # noqa: F401
from loss_checks import build, random_logits

from mmlml.models.losses import em_apl_loss, em_loss


def official_em_apl(preds, observed, alpha, beta, eps=0.0):
    """The official loss_EM_APL per element, in numpy: ``observed`` holds
    1, 0 and -s for a soft negative pseudo-label s."""

    def neg_log(x):
        return -np.log(x + eps)

    loss = np.zeros_like(preds)
    pos, unk, pl = observed == 1, observed == 0, observed < 0
    loss[pos] = neg_log(preds[pos])
    p = preds[unk]
    loss[unk] = -alpha * (p * neg_log(p) + (1 - p) * neg_log(1 - p))
    s, p = -observed[pl], preds[pl]
    loss[pl] = beta * (s * neg_log(p) + (1 - s) * neg_log(1 - p))
    return loss


def test_em_apl_matches_official():
    gen = torch.Generator().manual_seed(0)
    x = random_logits((6, 7), 2.0, seed=1, dtype=torch.float64)
    target = torch.zeros(6, 7, dtype=torch.float64)
    target[torch.arange(6), torch.arange(6)] = 1
    soft = torch.rand(6, 7, generator=gen, dtype=torch.float64) * 0.3
    chosen = (torch.rand(6, 7, generator=gen) < 0.4) & (target == 0)
    pseudo = soft.masked_fill(~chosen, float('nan'))
    observed = torch.where(chosen, -soft, target).numpy()
    expected = official_em_apl(x.sigmoid().numpy(), observed, 0.2, 0.7)
    got = em_apl_loss(
        x, target, 0.2, 0.7, pseudo_labels=pseudo, reduction='none')
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-10)
    # The official scale is the mean over N x C: loss_weight = 1 / C with
    # the head's avg_factor=N.
    loss = build(
        dict(type='EMAPLLoss', alpha=0.2, beta=0.7, loss_weight=1 / 7))
    np.testing.assert_allclose(
        float(loss(x, target, avg_factor=6, pseudo_labels=pseudo)),
        expected.mean(),
        rtol=1e-10)
    # With the official epsilon the two differ by O(1e-5 / p).
    with_eps = official_em_apl(x.sigmoid().numpy(), observed, 0.2, 0.7, 1e-5)
    np.testing.assert_allclose(got.numpy(), with_eps, atol=2e-3)


def test_without_pseudo_labels_equals_em():
    x = random_logits((4, 5), 3.0)
    target = torch.tensor([[1., 0, 0, -1, 0]] * 4)
    none = torch.full((4, 5), float('nan'))
    torch.testing.assert_close(
        em_apl_loss(x, target, 0.3, 0.9, pseudo_labels=none, reduction='none'),
        em_loss(x, target, 0.3, reduction='none'))
    # A pseudo-label on an observed entry is ignored.
    full = torch.full((4, 5), 0.5)
    torch.testing.assert_close(
        em_apl_loss(x, target, 0.3, 0.9, pseudo_labels=full,
                    reduction='none')[target != 0],
        em_loss(x, target, 0.3, reduction='none')[target != 0])


def test_bad_pseudo_labels():
    x, target = torch.zeros(2, 3), torch.tensor([0, 1])
    with pytest.raises(ValueError, match='shape'):
        em_apl_loss(x, target, pseudo_labels=torch.zeros(2, 4))
    with pytest.raises(ValueError, match=r'\[0, 1\]'):
        em_apl_loss(x, target, pseudo_labels=torch.full((2, 3), 1.5))
    with pytest.raises(TypeError, match='floating-point'):
        em_apl_loss(x, target, pseudo_labels=torch.zeros(2, 3).long())
