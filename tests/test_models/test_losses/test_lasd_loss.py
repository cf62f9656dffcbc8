"""LASDLoss against eq. 6 of the paper and its special cases."""
import math

import loss_checks as checks
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from mmpretrain.models.losses import asymmetric_loss

from mmlml.models.losses import lasd_lambda_neg, lasd_loss


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def ref_lasd(x,
             t,
             lambda_pos,
             lambda_neg,
             tau,
             gamma_pos=0.0,
             gamma_neg=4.0,
             observed_negative_weight=None):
    """Eq. 6 element by element in float64; ``lambda_neg`` a number or one
    value per row; observed negatives (-1) take the negative term."""
    x, t = np.asarray(x, np.float64), np.asarray(t, np.float64)
    lambda_neg = np.broadcast_to(
        np.asarray(lambda_neg, np.float64).reshape(-1, 1), x.shape)
    p = _sigmoid(x)
    l_pos = -((1 - p)**gamma_pos) * np.log(p)
    l_neg = -(p**gamma_neg) * np.log(1 - p)
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        for k in range(x.shape[1]):
            if t[i, k] == 1:
                out[i, k] = l_pos[i, k]
            elif t[i, k] == 0 and p[i, k] > tau:
                out[i, k] = lambda_pos * l_pos[i, k]
            elif t[i, k] == -1 and observed_negative_weight is not None:
                out[i, k] = observed_negative_weight * l_neg[i, k]
            else:
                out[i, k] = lambda_neg[i, k] * l_neg[i, k]
    return out


def _inputs(seed=0, num_classes=6):
    # Logits on a grid away from the thresholds used below (tau = 0.9 is
    # logit 2.197, 0.6 is 0.405).
    gen = torch.Generator().manual_seed(seed)
    grid = torch.tensor([-3.1, -1.2, -0.3, 0.2, 0.8, 1.6, 2.9, 4.4])
    cls_score = grid[torch.randint(0, 8, (4, num_classes), generator=gen)]
    target = checks.tri_state_target(4, num_classes, seed=seed)
    cls_score[0, :3] = torch.tensor([2.9, 4.4, 0.8])
    target[0, :3] = 0
    target[1, :2] = torch.tensor([-1.0, 1.0])
    cls_score[1, :2] = torch.tensor([4.4, -1.2])
    return cls_score, target


def _compare(loss_value, expected):
    torch.testing.assert_close(
        loss_value.double(),
        torch.from_numpy(np.asarray(expected)),
        atol=1e-6,
        rtol=1e-5)


# ------------------------------------------------------------------ lambda-
def test_theorem_5_4_lambda_neg():
    assert lasd_lambda_neg(0.1, 1.5, 20) == pytest.approx(1.05 / 18.5)
    assert lasd_lambda_neg(0.03, 2.9, 80) == pytest.approx(
        (1 + 0.03 * 1.9) / 77.1)
    # One positive per image: 1 / (K - 1), WAN's weight, for any lambda+.
    assert lasd_lambda_neg(0.7, 1, 20) == pytest.approx(1 / 19)
    # Per-sample counts, a count of 0 counts as 1.
    counts = torch.tensor([[0.0], [1.0], [3.0]])
    torch.testing.assert_close(
        lasd_lambda_neg(0.1, counts, 5),
        torch.tensor([[1 / 4], [1 / 4], [1.2 / 2]]))
    # The consistency condition of Theorem 5.4 holds.
    lam_pos, num_pos, num_classes = 0.2, 2.5, 20
    lam_neg = lasd_lambda_neg(lam_pos, num_pos, num_classes)
    assert 1 + lam_pos * (num_pos - 1) == pytest.approx(
        lam_neg * (num_classes - num_pos))


def test_hand_values():
    loss = checks.build(
        dict(type='LASDLoss', expected_positives=2, reduction='none'))
    cls_score = torch.tensor([[0.0, 3.0, 0.0, 3.0]])
    target = torch.tensor([[1.0, 0.0, 0.0, -1.0]])
    lam_neg = (1 + 0.1 * (2 - 1)) / (4 - 2)
    p3 = 1 / (1 + math.exp(-3))
    expected = torch.tensor([[
        math.log(2),  # observed positive, gamma+ = 0
        -0.1 * math.log(p3),  # pseudo-positive: p > 0.9
        -lam_neg * 0.5**4 * math.log(0.5),  # pseudo-negative
        -lam_neg * p3**4 * math.log(1 - p3),  # observed negative
    ]])
    torch.testing.assert_close(loss(cls_score, target), expected)


@pytest.mark.parametrize('kwargs', [
    dict(),
    dict(lambda_pos=0.03, tau=0.6, gamma_pos=1.0, gamma_neg=2.0),
    dict(lambda_pos=0.5, lambda_neg=0.2, tau=0.95),
    dict(expected_positives=1.5),
    dict(observed_negative_weight=1.0),
])
def test_matches_reference(kwargs):
    cls_score, target = _inputs(1)
    num_classes = cls_score.size(1)
    loss = checks.build(dict(type='LASDLoss', reduction='none', **kwargs))
    lambda_pos = kwargs.get('lambda_pos', 0.1)
    if 'lambda_neg' in kwargs:
        lambda_neg = kwargs['lambda_neg']
    elif 'expected_positives' in kwargs:
        e = kwargs['expected_positives']
        lambda_neg = (1 + lambda_pos * (e - 1)) / (num_classes - e)
    else:  # per sample, from the observed positives (at least one)
        count = np.maximum((target.numpy() == 1).sum(1), 1)
        lambda_neg = (1 + lambda_pos * (count - 1)) / (num_classes - count)
    expected = ref_lasd(cls_score.numpy(), target.numpy(), lambda_pos,
                        lambda_neg, kwargs.get('tau', 0.9),
                        kwargs.get('gamma_pos', 0.0),
                        kwargs.get('gamma_neg', 4.0),
                        kwargs.get('observed_negative_weight'))
    _compare(loss(cls_score, target), expected)
    torch.testing.assert_close(
        lasd_loss(cls_score, target, reduction='sum', **kwargs),
        loss(cls_score, target).sum())


def test_observed_negatives_are_never_pseudo_positives():
    loss = checks.build(dict(type='LASDLoss', lambda_neg=0.5))
    cls_score = torch.tensor([[30.0, 30.0]])
    as_unknown = loss(
        cls_score, torch.tensor([[1.0, 0.0]]), reduction_override='none')
    as_negative = loss(
        cls_score, torch.tensor([[1.0, -1.0]]), reduction_override='none')
    assert as_unknown[0, 1] < 1e-6  # pseudo-positive, confident
    assert as_negative[0, 1] == pytest.approx(0.5 * 30.0, rel=1e-4)


# ------------------------------------------------------------ special cases
def test_unit_leverage_is_splc_without_margin():
    cls_score, target = _inputs(2)
    lasd = checks.build(
        dict(type='LASDLoss', lambda_pos=1.0, lambda_neg=1.0, tau=0.6))
    splc = checks.build(
        dict(type='SPLCLoss', tau=0.6, margin=0, gamma_pos=0, gamma_neg=4))
    splc.set_epoch(1)
    torch.testing.assert_close(
        lasd(cls_score, target, reduction_override='none'),
        splc(cls_score, target, reduction_override='none'))


def test_unit_leverage_and_tau_is_asl_without_shift():
    cls_score, target = _inputs(3)
    target = target.clamp(min=0)  # 0/1 targets for MMPretrain's ASL
    lasd = checks.build(
        dict(type='LASDLoss', lambda_pos=1.0, lambda_neg=1.0, tau=1.0))
    asl = asymmetric_loss(
        cls_score,
        target,
        gamma_pos=0.0,
        gamma_neg=4.0,
        clip=0.0,
        reduction='none')
    torch.testing.assert_close(
        lasd(cls_score, target, reduction_override='none'),
        asl,
        atol=1e-6,
        rtol=1e-5)


@pytest.mark.parametrize('lambda_neg', [1.0, 0.2])
def test_tau_one_without_focusing_is_wan(lambda_neg):
    cls_score, target = _inputs(4)
    lasd = checks.build(
        dict(
            type='LASDLoss',
            lambda_pos=0.3,
            lambda_neg=lambda_neg,
            tau=1.0,
            gamma_pos=0.0,
            gamma_neg=0.0))
    positive = (target == 1).float()
    bce = F.binary_cross_entropy_with_logits(
        cls_score, positive, reduction='none')
    wan = bce * (positive + lambda_neg * (1 - positive))
    torch.testing.assert_close(
        lasd(cls_score, target, reduction_override='none'), wan)
    if lambda_neg == 1.0:  # AN: plain BCE with every non-positive negative
        torch.testing.assert_close(
            lasd(cls_score, target, avg_factor=4),
            F.binary_cross_entropy_with_logits(
                cls_score, positive, reduction='sum') / 4)


def test_tau_one_never_pseudo_labels_saturated_logits():
    loss = checks.build(dict(type='LASDLoss', lambda_neg=1.0, tau=1.0))
    value = loss(
        torch.tensor([[0.0, 100.0]]),
        torch.tensor([[1.0, 0.0]]),
        reduction_override='none')
    assert value[0, 1] > 1  # the negative term of a logit of 100


def test_single_positive_default_is_wan_weight():
    """Without expected_positives, single positive data get 1 / (K - 1)."""
    cls_score = torch.tensor([[0.3, -0.4, 0.1, -2.0]])
    loss = checks.build(dict(type='LASDLoss', lambda_pos=0.5))
    ref = checks.build(dict(type='LASDLoss', lambda_pos=0.5, lambda_neg=1 / 3))
    torch.testing.assert_close(
        loss(cls_score, torch.tensor([2])), ref(cls_score, torch.tensor([2])))


# ------------------------------------------------------------ configuration
@pytest.mark.parametrize('cfg, name', [
    (dict(lambda_pos=-0.1), 'lambda_pos'),
    (dict(lambda_neg=-1.0), 'lambda_neg'),
    (dict(lambda_neg=0.1, expected_positives=2.0), 'not both'),
    (dict(expected_positives=0.5), 'expected_positives'),
    (dict(tau=1.01), 'tau'),
    (dict(gamma_pos=-1.0), 'gamma_pos'),
    (dict(gamma_neg='4'), 'gamma_neg'),
    (dict(observed_negative_weight=-1.0), 'observed_negative_weight'),
    (dict(reduction='avg'), 'reduction'),
])
def test_bad_hyperparameters(cfg, name):
    with pytest.raises(ValueError, match=name):
        checks.build(dict(type='LASDLoss', **cfg))


def test_expected_positives_must_be_below_num_classes():
    loss = checks.build(dict(type='LASDLoss', expected_positives=5))
    with pytest.raises(ValueError, match='expected_positives'):
        loss(torch.zeros(2, 5), torch.zeros(2, 5))
