"""HillLoss and FocalMarginLoss against hand computations and the paper."""
import math

import loss_checks as checks
import numpy as np
import pytest
import torch

from mmlml.models.losses import focal_margin_loss, hill_loss


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def ref_focal_margin_pos(x, margin, gamma):
    p_m = _sigmoid(x - margin)
    return -((1.0 - p_m)**gamma) * np.log(p_m)


def ref_hill(x, t, lamb=1.5, margin=1.0, gamma=2.0):
    """Eq. 5 and 11 of the Hill paper, element by element, in float64."""
    x, t = np.asarray(x, np.float64), np.asarray(t)
    p = _sigmoid(x)
    return np.where(t == 1, ref_focal_margin_pos(x, margin, gamma),
                    (lamb - p) * p**2)


def ref_focal_margin(x, t, margin=1.0, gamma=2.0, gamma_neg=0.0):
    x, t = np.asarray(x, np.float64), np.asarray(t)
    p = _sigmoid(x)
    return np.where(t == 1, ref_focal_margin_pos(x, margin, gamma),
                    -(p**gamma_neg) * np.log(1.0 - p))


def _inputs(seed=0):
    return (checks.random_logits(
        (4, 5), seed=seed), checks.tri_state_target(4, 5, seed=seed))


# --------------------------------------------------------------- hand values
def test_hill_hand_values():
    loss = checks.build(dict(type='HillLoss', reduction='none'))
    cls_score = torch.tensor([[0.0, 0.0, 1.0, 50.0, -50.0]])
    target = torch.tensor([[0.0, -1.0, 1.0, 0.0, 0.0]])
    expected = torch.tensor([[(1.5 - 0.5) * 0.25, 0.25, 0.25 * math.log(2),
                              0.5, 0.0]])
    torch.testing.assert_close(loss(cls_score, target), expected)


def test_focal_margin_hand_values():
    loss = checks.build(dict(type='FocalMarginLoss', reduction='none'))
    cls_score = torch.tensor([[1.0, 0.0, 0.0, 1.0]])
    target = torch.tensor([[1.0, 0.0, -1.0, -1.0]])
    expected = torch.tensor([[
        0.25 * math.log(2),
        math.log(2),
        math.log(2),
        math.log(1 + math.e),  # -log(1 - sigmoid(1))
    ]])
    torch.testing.assert_close(loss(cls_score, target), expected)


@pytest.mark.parametrize('kwargs', [
    dict(),
    dict(lamb=2.0, margin=0.5, gamma=1.0),
    dict(lamb=1.0, margin=0.0, gamma=0.0),
])
def test_hill_matches_reference(kwargs):
    cls_score, target = _inputs(1)
    loss = checks.build(dict(type='HillLoss', reduction='none', **kwargs))
    expected = ref_hill(cls_score.numpy(), target.numpy(), **kwargs)
    torch.testing.assert_close(
        loss(cls_score, target).double(),
        torch.from_numpy(expected),
        atol=1e-6,
        rtol=1e-5)
    # The functional form is the same computation.
    torch.testing.assert_close(
        hill_loss(cls_score, target, reduction='sum', **kwargs),
        loss(cls_score, target).sum())


@pytest.mark.parametrize(
    'kwargs',
    [
        dict(),
        dict(margin=0.5, gamma=1.0, gamma_neg=2.0),
        dict(margin=0.0, gamma=2.0, gamma_neg=2.0),  # focal loss
        dict(margin=0.0, gamma=0.0),  # BCE
    ])
def test_focal_margin_matches_reference(kwargs):
    cls_score, target = _inputs(2)
    loss = checks.build(
        dict(type='FocalMarginLoss', reduction='none', **kwargs))
    expected = ref_focal_margin(cls_score.numpy(), target.numpy(), **kwargs)
    torch.testing.assert_close(
        loss(cls_score, target).double(),
        torch.from_numpy(expected),
        atol=1e-6,
        rtol=1e-5)
    torch.testing.assert_close(
        focal_margin_loss(cls_score, target, avg_factor=4, **kwargs),
        loss(cls_score, target).sum() / 4)


def test_focal_margin_without_margin_is_bce_at_gamma_zero():
    cls_score, target = _inputs(3)
    loss = checks.build(dict(type='FocalMarginLoss', margin=0, gamma=0))
    bce = torch.nn.functional.binary_cross_entropy_with_logits(
        cls_score, (target == 1).float(), reduction='sum')
    torch.testing.assert_close(loss(cls_score, target, avg_factor=1), bce)


def test_hill_lambda_flattens_curvature_at_half():
    """The paper chooses lambda = 1.5 so that the second derivative of the
    negative loss in the logit vanishes at p = 0.5."""
    target = torch.zeros(1, 1, dtype=torch.float64)

    def slope(at):
        x = torch.full((1, 1), at, dtype=torch.float64, requires_grad=True)
        (grad, ) = torch.autograd.grad(
            hill_loss(x, target, reduction='sum'), x)
        return grad.item()

    # The loss gives first derivatives only: the second by central
    # differences of the first (error O(h^2)).
    step = 1e-4
    second = (slope(step) - slope(-step)) / (2 * step)
    assert abs(second) < 1e-7
    # d/dx = (2 lamb p - 3 p^2) p (1 - p) = (1.5 - 0.75) * 0.25
    assert slope(0.0) == pytest.approx(0.1875)


def test_hill_down_weights_confident_negatives():
    """The Hill gradient peaks in the middle and vanishes at p -> 1, unlike
    BCE's (Fig. 3 of the paper)."""
    x = torch.tensor([[-2.0, 0.5, 6.0]], requires_grad=True)
    hill_loss(x, torch.zeros(1, 3), reduction='sum').backward()
    grad = x.grad[0]
    assert grad[1] > grad[0] and grad[1] > grad[2]
    assert grad[2] < 0.01


def test_default_reduction_is_mean_over_samples_with_head_avg_factor():
    loss = checks.build(dict(type='HillLoss'))
    cls_score, target = _inputs(5)
    expected = ref_hill(cls_score.numpy(), target.numpy()).sum() / 4
    assert loss(
        cls_score, target, avg_factor=4).item() == pytest.approx(
            expected, rel=1e-5)


@pytest.mark.parametrize('cfg, name', [
    (dict(type='HillLoss', lamb=0.5), 'lamb'),
    (dict(type='HillLoss', margin=-1.0), 'margin'),
    (dict(type='HillLoss', gamma=float('nan')), 'gamma'),
    (dict(type='HillLoss', gamma='2'), 'gamma'),
    (dict(type='HillLoss', reduction='avg'), 'reduction'),
    (dict(type='FocalMarginLoss', gamma_neg=-2.0), 'gamma_neg'),
    (dict(type='FocalMarginLoss', margin=float('inf')), 'margin'),
])
def test_bad_hyperparameters(cfg, name):
    with pytest.raises(ValueError, match=name):
        checks.build(cfg)


def test_functional_checks_hyperparameters():
    with pytest.raises(ValueError, match='lamb'):
        hill_loss(torch.zeros(1, 2), torch.zeros(1, 2), lamb=0.9)
