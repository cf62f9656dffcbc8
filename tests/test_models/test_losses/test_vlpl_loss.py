"""VLPLLoss: against a transcription of the official loss, hand-computed
edge cases, and the pseudo-labels as the label store hands them over."""
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from loss_checks import build, random_logits

from mmlml.models.losses import em_loss, vlpl_loss
from mmlml.structures import LabelStore

NAN = float('nan')


def official_em_pl(preds, observed, pseudo, alpha, beta_pos, eps=0.0):
    """A numpy re-statement of ``loss_EM_PL`` (mvrl/VLPL, losses.py, commit
    ed09b592bbde3c1e2995f818261cd4cfbce97fca, the branch after the warm-up,
    which every official setting takes from the first epoch), per element.

    ``pseudo`` is the code's ``logits_pl``: 1 pseudo-positive, -1
    pseudo-negative, 0 none. Observed labels take precedence
    (``final_labels``); the pseudo-negative term is commented out in the
    code, so those entries keep a loss of 0.
    """

    def neg_log(x):
        return -np.log(x + eps)

    final = np.where(observed == 0, pseudo, observed)
    loss = np.zeros_like(preds)
    pos = observed == 1
    loss[pos] = neg_log(preds[pos])
    unknown = final == 0
    p = preds[unknown]
    loss[unknown] = -alpha * (p * neg_log(p) + (1 - p) * neg_log(1 - p))
    pseudo_pos = (observed == 0) & (pseudo == 1)
    p = preds[pseudo_pos]
    loss[pseudo_pos] = beta_pos * (0.9 * neg_log(p) + 0.1 * neg_log(1 - p))
    return loss


def store_encoding(pseudo):
    """The code's -1 / 0 / 1 pseudo-labels as the label store hands them to
    the loss: 0 / NaN / 1."""
    return torch.where(pseudo == 1, 1.0, torch.where(pseudo == -1, 0.0,
                                                     NAN)).double()


def official_inputs():
    gen = torch.Generator().manual_seed(0)
    x = random_logits((6, 7), 2.5, seed=3, dtype=torch.float64)
    target = torch.zeros(6, 7, dtype=torch.float64)
    target[torch.arange(6), torch.arange(6)] = 1
    pseudo = torch.randint(-1, 2, (6, 7), generator=gen).double()
    pseudo[0, 0] = 1  # a pseudo-label on an observed positive: ignored
    return x, target, pseudo


def test_matches_official():
    x, target, pseudo = official_inputs()
    expected = official_em_pl(x.sigmoid().numpy(), target.numpy(),
                              pseudo.numpy(), 0.2, 0.7)
    got = vlpl_loss(
        x,
        target,
        0.2,
        0.7,
        pseudo_labels=store_encoding(pseudo),
        reduction='none')
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-10)
    # The official scale (compute_batch_loss): the sum of loss / (N C), the
    # head's avg_factor=N with loss_weight = 1 / C.
    loss = build(dict(type='VLPLLoss', alpha=0.2, loss_weight=1 / 7))
    value = loss(x, target, avg_factor=6, pseudo_labels=store_encoding(pseudo))
    np.testing.assert_allclose(float(value), expected.mean(), rtol=1e-10)
    # With the official epsilon the two differ by O(1e-5 / p).
    with_eps = official_em_pl(
        x.sigmoid().numpy(),
        target.numpy(),
        pseudo.numpy(),
        0.2,
        0.7,
        eps=1e-5)
    np.testing.assert_allclose(got.numpy(), with_eps, atol=1e-3)


def test_without_pseudo_labels_equals_em():
    x = random_logits((4, 5), 3.0)
    target = torch.tensor([[1., 0, 0, -1, 0]] * 4)
    none = torch.full((4, 5), NAN)
    torch.testing.assert_close(
        vlpl_loss(x, target, 0.3, pseudo_labels=none, reduction='none'),
        em_loss(x, target, 0.3, reduction='none'))


def test_every_entry_pseudo_labelled():
    """Pseudo-labels everywhere: no entropy term is left, observed entries
    keep their loss, and the hand values of both kinds of pseudo-label."""
    x = torch.tensor([[0.0, 2.0, -1.0, 0.5]], dtype=torch.float64)
    target = torch.tensor([[1.0, 0.0, 0.0, -1.0]])
    pseudo = torch.tensor([[0.0, 1.0, 0.0, 1.0]], dtype=torch.float64)
    got = vlpl_loss(
        x,
        target,
        0.2,
        beta_pos=0.7,
        beta_neg=0.3,
        pseudo_labels=pseudo,
        reduction='none')[0]

    def sp(v):
        return math.log1p(math.exp(v))

    expected = [
        math.log(2),  # observed positive: -log p
        0.7 * (0.9 * sp(-2.0) + 0.1 * sp(2.0)),  # pseudo-positive
        0.3 * (0.1 * sp(1.0) + 0.9 * sp(-1.0)),  # pseudo-negative
        sp(0.5),  # observed negative: -log(1 - p)
    ]
    torch.testing.assert_close(got, torch.tensor(expected).double())
    # The official beta_neg = 0: pseudo-negatives drop out of the loss.
    official = vlpl_loss(
        x, target, 0.2, pseudo_labels=pseudo, reduction='none')[0]
    assert official[2] == 0
    torch.testing.assert_close(official[1], got[1])


def test_smoothing_and_soft_values():
    x = torch.tensor([[1.5, -0.5]], dtype=torch.float64)
    target = torch.zeros(1, 2)
    # smoothing=0: plain cross-entropy with weight beta_pos.
    plain = vlpl_loss(
        x,
        target,
        smoothing=0.0,
        pseudo_labels=torch.ones(1, 2).double(),
        reduction='none')
    torch.testing.assert_close(
        plain, 0.7 * F.binary_cross_entropy_with_logits(
            x, torch.ones(1, 2).double(), reduction='none'))
    # A soft s moves the target and the weight linearly.
    soft = vlpl_loss(
        x,
        target,
        beta_pos=0.8,
        beta_neg=0.2,
        pseudo_labels=torch.full((1, 2), 0.25).double(),
        reduction='none')
    s_target, weight = 0.1 + 0.8 * 0.25, 0.2 + 0.6 * 0.25
    torch.testing.assert_close(
        soft,
        weight * F.binary_cross_entropy_with_logits(
            x, torch.full((1, 2), s_target).double(), reduction='none'))


def test_gradient_of_a_pseudo_positive():
    """d loss / dx = beta_pos (p - 0.9): the pseudo-positive pulls p to
    0.9, not to 1."""
    x = torch.linspace(-4, 4, 9, dtype=torch.float64)[None].requires_grad_()
    vlpl_loss(
        x,
        torch.zeros_like(x),
        pseudo_labels=torch.ones_like(x),
        reduction='sum').backward()
    torch.testing.assert_close(x.grad, 0.7 * (torch.sigmoid(x.detach()) - 0.9))


def test_pseudo_labels_from_the_label_store():
    """The contract with the pseudo-labeller: +1 / +0.0 written with
    ``assign`` are pseudo-positives / negatives; recorded scores (-p) and
    untouched entries (NaN) are none."""
    store = LabelStore(3, 4)
    store.assign(torch.tensor([0, 2]), torch.tensor([1, 3]), 1.0)
    store.assign(torch.tensor([1]), torch.tensor([2]), 0.0)
    store.record_scores(torch.tensor([0]), torch.full((1, 4), 0.8))
    pseudo = store.lookup(torch.tensor([0, 1, 2]))
    x = random_logits((3, 4), 2.0, seed=1)
    target = torch.tensor([[1., 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]])
    code = torch.zeros(3, 4)
    code[0, 1] = code[2, 3] = 1
    code[1, 2] = -1
    expected = official_em_pl(x.sigmoid().double().numpy(), target.numpy(),
                              code.numpy(), 0.1, 0.7)
    got = vlpl_loss(x, target, pseudo_labels=pseudo, reduction='none')
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize('kwargs', [
    dict(alpha=-0.1),
    dict(beta_pos=-1),
    dict(beta_neg=float('nan')),
    dict(smoothing=0.6),
])
def test_bad_hyperparameters(kwargs):
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        build(dict(type='VLPLLoss', **kwargs))
