"""GPRLoss: against a transcription of the official loss and schedules,
hand-computed edge cases (no pseudo-labels, every entry pseudo-labelled,
the two ends of the epoch schedules), the stopped gradients, and the
checks."""
import math

import numpy as np
import pytest
import torch
from loss_checks import build, random_logits

from mmlml.models.losses import gpr_loss

NAN = float('nan')


def official_schedule(epoch, num_epochs, beta, alpha, n=0):
    """``w, b, mu, sigma`` of the 1-based ``epoch`` as run_train computes
    them (Fsoft-AIC/AEVLP, train.py, commit
    0bad82a1a006455ec1506cd5426eeede85c5aa92)."""
    w0, w_t, b0, b_t = beta
    mu0, sigma0, mu_t, sigma_t = alpha
    late, early = max(epoch - n - 1, 0), max(epoch - n, 0)
    return (w0 + (w_t - w0) * late / (num_epochs - n),
            b0 + (b_t - b0) * late / (num_epochs - n),
            mu0 + (mu_t - mu0) * early / (num_epochs - n),
            sigma0 + (sigma_t - sigma0) * early / (num_epochs - n))


def official_gpr(preds, observed, pseudo, epoch, num_epochs, cfg, eps=0.0):
    """A numpy re-statement of ``GPR_loss`` (Fsoft-AIC/AEVLP, losses.py,
    commit 0bad82a1a006455ec1506cd5426eeede85c5aa92) with ``use_pl``, and
    of K and V (``KFunction``, ``VFunction`` in models.py) from the
    detached predictions.

    ``pseudo`` holds the code's 1 pseudo-positive, -1 pseudo-negative, 0
    none; ``cfg`` the settings of configs/*.json (``beta``, ``alpha``,
    ``q2``, ``q3``, ``lam``, ``rho``, ``reg``, ``expected``). Returns the
    loss matrix and the returned scalar (``loss_mtx.mean()`` plus the
    regulariser).
    """
    q2, q3, lam, rho = cfg['q2'], cfg['q3'], cfg['lam'], cfg['rho']

    def neg_log(x):
        return -np.log(x + eps)

    w, b, mu, sigma = official_schedule(epoch, num_epochs, cfg['beta'],
                                        cfg['alpha'])
    k = 1 / (1 + np.exp(-(w * preds + b)))
    v = np.exp(-0.5 * ((preds - mu) / sigma)**2)
    final = np.where(observed == 0, pseudo, observed)
    loss = np.zeros_like(preds)
    pos = observed == 1
    loss[pos] = neg_log(preds[pos])
    u = final == 0
    p = preds[u]
    loss[u] = v[u] * (
        k[u] * (1 - p**q2) / q2 + (1 - k[u]) * (1 - (1 - p)**q3) / q3)
    pseudo_pos = (observed == 0) & (pseudo == 1)
    v = v.copy()
    v[pseudo_pos] = np.where(v[pseudo_pos] > 1 - lam[0], v[pseudo_pos],
                             1 - lam[0])
    v[pseudo_pos] = np.where(v[pseudo_pos] < 1 - lam[1], v[pseudo_pos],
                             1 - lam[1])
    p = preds[pseudo_pos]
    loss[pseudo_pos] = (1 - v[pseudo_pos]) * (
        rho * neg_log(p) + (1 - rho) * neg_log(1 - p))
    neg = final == -1
    loss[neg] = v[neg] * neg_log(1 - preds[neg])
    num_classes = preds.shape[1]
    penalty = (preds.sum(1).mean(0) - cfg['expected'])**2 / num_classes**2
    return loss, loss.mean() + cfg['reg'] * penalty


def store_encoding(pseudo):
    """The code's -1 / 0 / 1 as the label store hands them over: 0 / NaN /
    1."""
    return torch.where(pseudo == 1, 1.0, torch.where(pseudo == -1, 0.0,
                                                     NAN)).double()


def gpr(epoch=0, num_epochs=8, **kwargs):
    loss = build(dict(type='GPRLoss', **{'expected_positives': 2.0, **kwargs}))
    loss.set_epoch(epoch, num_epochs)
    return loss


def test_matches_official_at_several_epochs():
    gen = torch.Generator().manual_seed(0)
    x = random_logits((6, 7), 2.5, seed=4, dtype=torch.float64)
    target = torch.zeros(6, 7, dtype=torch.float64)
    target[torch.arange(6), torch.arange(6)] = 1
    # 1 / 0 / -1 pseudo-labels (the official pseudo-labeller never makes
    # the -1s; the loss has their term) and one on an observed positive.
    pseudo = torch.randint(-1, 2, (6, 7), generator=gen).double()
    pseudo[0, 0] = 1
    settings = dict(
        beta=(0, 10, -2, -8), q3=1.5, lam=(0.8, 0.2), reg=0.01, rho=0.9)
    official = dict(settings, alpha=(0.5, 2, 0.8, 0.5), q2=0.01, expected=3.0)
    loss = gpr(**settings, expected_positives=3.0, loss_weight=1 / 7)
    for epoch in (0, 4, 9):  # 0-based, of 10
        loss.set_epoch(epoch, 10)
        matrix, scalar = official_gpr(x.sigmoid().numpy(), target.numpy(),
                                      pseudo.numpy(), epoch + 1, 10, official)
        got = loss(
            x,
            target,
            pseudo_labels=store_encoding(pseudo),
            reduction_override='none')
        share = scalar - matrix.mean()  # the regulariser of each element
        np.testing.assert_allclose(
            got.numpy(), 1 / 7 * (matrix + share), rtol=1e-10)
        # The official value: the head's avg_factor=N, loss_weight = 1 / C.
        value = loss(
            x, target, avg_factor=6, pseudo_labels=store_encoding(pseudo))
        np.testing.assert_allclose(float(value), scalar, rtol=1e-10)
    # With the official epsilon (1e-7) they differ by O(1e-7 / p).
    _, with_eps = official_gpr(
        x.sigmoid().numpy(),
        target.numpy(),
        pseudo.numpy(),
        10,
        10,
        official,
        eps=1e-7)
    np.testing.assert_allclose(float(value), with_eps, rtol=1e-5)


def test_without_pseudo_labels_and_regulariser_equals_gr():
    x = random_logits((4, 5), 3.0, dtype=torch.float64)
    target = torch.tensor([[1., 0, 0, -1, 0]] * 4)
    none = torch.full((4, 5), NAN)
    for epoch in (0, 7):
        got = gpr(
            epoch, reg=0.0)(
                x, target, pseudo_labels=none, reduction_override='none')
        gr = build(dict(type='GRLoss'))
        gr.set_epoch(epoch, 8)
        torch.testing.assert_close(got,
                                   gr(x, target, reduction_override='none'))


def test_schedule_ends_and_pseudo_positive_weight():
    """Every unannotated entry pseudo-labelled, at the first and the last
    epoch of 8 (lam = (0.7, 0.5): the weight 1 - v within [0.5, 0.7])."""
    x = torch.tensor([[0.0, -8.0, 0.0, 3.0]], dtype=torch.float64)
    target = torch.tensor([[0.0, 0.0, 0.0, 1.0]])
    pseudo = torch.tensor([[1.0, 1.0, 0.0, 0.0]], dtype=torch.float64)

    def sp(v):
        return math.log1p(math.exp(v))

    def positive_term(logit, weight):
        return weight * (0.9 * sp(-logit) + 0.1 * sp(logit))

    p = 1 / (1 + math.exp(8.0))
    # First epoch: mu = 0.5 + 0.3 / 8, sigma = 2 - 1.5 / 8 (the official
    # schedule moves them at e = 1); v > 0.9 everywhere, clipped to 0.5.
    mu, sigma = 0.5375, 1.8125
    first = gpr(
        0, reg=0.0)(
            x, target, pseudo_labels=pseudo, reduction_override='none')[0]
    expected = [
        positive_term(0.0, 0.5),
        positive_term(-8.0, 0.5),
        math.exp(-(0.5 - mu)**2 / (2 * sigma**2)) * math.log(2),
        sp(-3.0),
    ]
    torch.testing.assert_close(first, torch.tensor(expected).double())
    # Last epoch: mu = 0.8, sigma = 0.5. v(0.5) = exp(-0.18) is clipped
    # down to 0.5 (weight 0.5), v(p ~ 0) = exp(-(0.8 - p)^2 / 0.5) ~ 0.28
    # up to 0.3 (weight 0.7).
    last = gpr(
        7, reg=0.0)(
            x, target, pseudo_labels=pseudo, reduction_override='none')[0]
    assert math.exp(-(0.8 - p)**2 / 0.5) < 0.3
    expected = [
        positive_term(0.0, 0.5),
        positive_term(-8.0, 0.7),
        math.exp(-0.18) * math.log(2),
        sp(-3.0),
    ]
    torch.testing.assert_close(last, torch.tensor(expected).double())
    # Within the range the weight is 1 - v: v(0.7) = exp(-0.02) at the
    # last epoch with lam = (0.9, 0.0).
    logit = math.log(0.7 / 0.3)
    inside = gpr(
        7, reg=0.0, lam=(0.9, 0.0), expected_positives=1.0)(
            torch.tensor([[logit]], dtype=torch.float64),
            torch.zeros(1, 1),
            pseudo_labels=torch.ones(1, 1).double(),
            reduction_override='none')
    torch.testing.assert_close(
        inside,
        torch.tensor([[positive_term(logit, 1 - math.exp(-0.02))]]).double())


def test_regulariser_hand_value():
    """Zero logits: every p = 1/2, so the regulariser is
    reg (C/2 - kappa)^2 / C^2, shared by the N x C elements."""
    x, target = torch.zeros(3, 4), torch.zeros(3, 4)
    none = torch.full((3, 4), NAN)
    with_reg = gpr(reg=0.5, expected_positives=3.5)
    without = gpr(reg=0.0, expected_positives=3.5)
    difference = with_reg(
        x, target, pseudo_labels=none, reduction_override='sum') - without(
            x, target, pseudo_labels=none, reduction_override='sum')
    torch.testing.assert_close(difference,
                               torch.tensor(12 * 0.5 * (2 - 3.5)**2 / 16))


def test_gradient_stops_through_v():
    """A pseudo-positive's gradient is w+ (p - rho), a pseudo-negative's
    v p: the weights are constants of the backward pass."""
    x = torch.linspace(-4, 4, 9, dtype=torch.float64)[None]
    loss = gpr(7, reg=0.0)
    for value in (1.0, 0.0):
        logits = x.clone().requires_grad_()
        loss(
            logits,
            torch.zeros_like(x),
            pseudo_labels=torch.full_like(x, value),
            reduction_override='sum').backward()
        p = torch.sigmoid(x)
        v = torch.exp(-(p - 0.8)**2 / (2 * 0.5**2))
        expected = (1 - v.clamp(0.3, 0.5)) * (p - 0.9) if value else v * p
        torch.testing.assert_close(logits.grad, expected)


def test_functional_form_and_empty_batch():
    """The functional form at the module's schedule values is the module;
    an empty batch is a zero loss."""
    x = random_logits((3, 5), 2.0, seed=2, dtype=torch.float64)
    target = torch.tensor([0, 2, 4])
    pseudo = torch.full((3, 5), NAN, dtype=torch.float64)
    pseudo[0, 1], pseudo[1, 3] = 1, 0
    loss = gpr(3, expected_positives=1.5)
    params = loss.current_parameters()
    got = gpr_loss(
        x,
        target,
        params['w'],
        params['b'],
        params['mu'],
        params['sigma'],
        expected_positives=1.5,
        pseudo_labels=pseudo,
        reduction='none')
    torch.testing.assert_close(
        got, loss(x, target, pseudo_labels=pseudo, reduction_override='none'))
    empty = gpr_loss(
        torch.zeros(0, 5),
        torch.zeros(0, 5),
        **params,
        expected_positives=1.5,
        pseudo_labels=torch.zeros(0, 5))
    assert empty.item() == 0


@pytest.mark.parametrize('kwargs, match', [
    (dict(lam=(0.4, 0.7)), 'lam'),
    (dict(lam=(1.2, 0.5)), 'lam'),
    (dict(lam=(0.7, )), 'lam'),
    (dict(rho=1.5), 'rho'),
    (dict(reg=-1), 'reg'),
    (dict(expected_positives=0), 'expected_positives'),
    (dict(alpha=(0.5, 0, 0.8, 0.5)), 'sigma'),
])
def test_bad_hyperparameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        build(dict(type='GPRLoss', **{'expected_positives': 2.9, **kwargs}))


def test_takes_gr_settings_through_grloss():
    """GPRLoss takes its own settings and passes GR's on to GRLoss through
    ``**kwargs``: a GR setting in its config is stored and checked there;
    a misspelt one is refused by the first constructor without
    ``**kwargs`` (``PartialLabelLoss``'s), naming it."""
    loss = build(
        dict(
            type='GPRLoss',
            expected_positives=2.9,
            q3=1.5,
            beta=(0, 10, -2, -8),
            loss_weight=0.5))
    assert (loss.q3, loss.beta, loss.loss_weight) == (1.5, (0, 10, -2, -8),
                                                      0.5)
    assert loss.q2 == 0.01 and loss.linear_init == 0  # GRLoss's defaults
    with pytest.raises(ValueError, match=r'q3 must lie in \[0, inf\]'):
        build(dict(type='GPRLoss', expected_positives=2.9, q3=-1))
    with pytest.raises(
            TypeError,
            match="GPRLoss has no setting 'q_3': did you mean 'q3'"):
        build(dict(type='GPRLoss', expected_positives=2.9, q_3=1.5))


def test_expected_positives_required_and_bounded():
    with pytest.raises(ValueError, match='expected_positives is required'):
        build(dict(type='GPRLoss'))
    with pytest.raises(ValueError, match='exceeds the number of classes'):
        gpr(expected_positives=6.0)(
            torch.zeros(2, 5),
            torch.tensor([0, 1]),
            pseudo_labels=torch.full((2, 5), NAN))
