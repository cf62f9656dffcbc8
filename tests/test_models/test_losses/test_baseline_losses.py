"""Baseline losses: AN, WAN, AN-LS, N-LS, MSE⁻, EPR, LL-R, LL-Ct, focal,
ASL and EntMin.

References are independent float64 numpy transcriptions of the official
formulas (Cole et al.'s ``-log(p + 1e-5)``, ASL's clamp at 1e-8, Large Loss
Matters' top-k), compared once with their epsilon (loose tolerance) and
once without it (tight tolerance).
"""
import math
import os.path as osp

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from conftest import ROOT  # noqa: E402
from loss_checks import build, random_logits, tri_state_target
from mmengine.config import Config
from mmengine.logging import MessageHub

from mmlml.models.losses import num_large_losses, select_large_losses

LN2 = math.log(2.0)

CONFIGS = {
    'an': dict(type='ANLoss'),
    'wan': dict(type='WANLoss'),
    'dw': dict(type='WANLoss', neg_weight=0.1),
    'an_ls': dict(type='ANLSLoss', smoothing=0.1),
    'n_ls': dict(type='ANLSLoss', smoothing=0.3, negatives_only=True),
    'mse_neg': dict(type='NegativeMSELoss'),
    'epr': dict(type='EPRLoss', expected_positives=1.5),
    'll_r': dict(type='LargeLoss', mode='rejection', delta_rel=0.05),
    'll_ct': dict(type='LargeLoss', mode='temporary', delta_rel=0.05),
    'focal': dict(type='PartialFocalLoss'),
    'asl': dict(type='PartialAsymmetricLoss'),
    'entmin': dict(type='EntMinLoss', alpha=0.4),
}


def make(name, **kwargs):
    loss = build({**CONFIGS[name], **kwargs})
    if hasattr(loss, 'set_epoch'):
        loss.set_epoch(2)  # third epoch: LL modifies ceil(N C 2 delta)
    return loss


def inputs(num=6, num_classes=5, seed=0, dtype=torch.float64, scale=2.0):
    return (random_logits((num, num_classes), scale, seed,
                          dtype), tri_state_target(num, num_classes,
                                                   seed).to(dtype))


# ---------------------------------------------------------------- generic

# ------------------------------------------------------------ references


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def neg_log(x, eps):
    return -np.log(x + eps)


def cole_matrix(name, x, t, eps, smoothing=0.1, neg_weight=None, alpha=None):
    """Cole et al.'s per-entry losses (``loss_mtx``), extended to observed
    negatives as each mmlml docstring says."""
    p = sigmoid(x)
    num_classes = x.shape[1]
    pos, unk, neg = t == 1, t == 0, t == -1
    lp, ln = neg_log(p, eps), neg_log(1 - p, eps)
    out = np.zeros_like(x)
    if name == 'an':
        out = np.where(pos, lp, ln)
    elif name == 'wan':
        w = 1.0 / (num_classes - 1) if neg_weight is None else neg_weight
        out = np.where(pos, lp, np.where(unk, w * ln, ln))
    elif name == 'an_ls':
        smooth_neg = (1 - smoothing) * ln + smoothing * lp
        out = np.where(pos, (1 - smoothing) * lp + smoothing * ln, smooth_neg)
    elif name == 'n_ls':
        out = np.where(
            pos, lp, np.where(unk, (1 - smoothing) * ln + smoothing * lp, ln))
    elif name == 'epr':
        out = np.where(pos, lp, np.where(neg, ln, 0.0))
    elif name == 'entmin':
        entropy = p * lp + (1 - p) * ln
        out = np.where(pos, lp, np.where(unk, alpha * entropy, ln))
    return out


def cole_total(name, x, t, eps, expected_positives=None, **kwargs):
    """``compute_batch_loss``: sum(loss_mtx / (N C)) + reg_loss."""
    num, num_classes = x.shape
    matrix = cole_matrix(name, x, t, eps, **kwargs)
    total = (matrix / (num * num_classes)).sum()
    if name == 'epr':
        reg = (sigmoid(x).sum(1).mean(0) - expected_positives)**2
        total += reg / num_classes**2
    return total


@pytest.mark.parametrize('name,cfg,kwargs', [
    ('an', dict(type='ANLoss'), {}),
    ('wan', dict(type='WANLoss'), {}),
    ('wan', dict(type='WANLoss', neg_weight=0.02), dict(neg_weight=0.02)),
    ('an_ls', dict(type='ANLSLoss', smoothing=0.1), dict(smoothing=0.1)),
    ('an_ls', dict(type='ANLSLoss', smoothing=0.3), dict(smoothing=0.3)),
    ('n_ls', dict(type='ANLSLoss', smoothing=0.3,
                  negatives_only=True), dict(smoothing=0.3)),
    ('entmin', dict(type='EntMinLoss', alpha=0.4), dict(alpha=0.4)),
])
@pytest.mark.parametrize('with_negatives', [False, True])
def test_cole_family_matches_reference(name, cfg, kwargs, with_negatives):
    cls_score, target = inputs(num=7, num_classes=6, seed=11)
    if not with_negatives:  # the official code accepts {0, 1} only
        target = target.clamp(min=0)
    loss = build(cfg)
    x, t = cls_score.numpy(), target.numpy()
    matrix = loss(cls_score, target, reduction_override='none').numpy()
    np.testing.assert_allclose(
        matrix, cole_matrix(name, x, t, 0.0, **kwargs), rtol=1e-12, atol=1e-12)
    # The official scale: mean over N x C, i.e. loss_weight=1/C in the head.
    official = cole_total(name, x, t, 1e-5, **kwargs)
    head = build({**cfg, 'loss_weight': 1 / x.shape[1]})
    value = head(cls_score, target, avg_factor=x.shape[0]).item()
    assert value == pytest.approx(official, abs=2e-4)
    assert loss(cls_score, target).item() == pytest.approx(official, abs=2e-4)


def test_hand_computed_values():
    ln3 = math.log(3.0)  # sigmoid(ln 3) = 3/4
    x = torch.tensor([[0.0, ln3, 0.0]])
    t = torch.tensor([[1.0, 0.0, -1.0]])

    def none(cfg):
        return build(cfg)(x, t, reduction_override='none')[0].tolist()

    assert none(dict(type='ANLoss')) == pytest.approx([LN2, math.log(4), LN2])
    assert none(dict(type='WANLoss')) == pytest.approx(
        [LN2, math.log(4) / 2, LN2])
    assert none(dict(type='ANLSLoss', smoothing=0.1)) == pytest.approx(
        [LN2, -(0.1 * math.log(0.75) + 0.9 * math.log(0.25)), LN2])
    assert none(dict(type='NegativeMSELoss')) == pytest.approx(
        [LN2, 0.5625, 0.25])
    assert none(dict(type='PartialFocalLoss')) == pytest.approx(
        [0.75 * 0.25 * LN2, 0.25 * 0.5625 * math.log(4), 0.25 * 0.25 * LN2])
    assert none(dict(type='PartialAsymmetricLoss')) == pytest.approx(
        [LN2, 0.7**4 * -math.log(0.3), 0.45**4 * -math.log(0.55)])
    entropy = -(0.75 * math.log(0.75) + 0.25 * math.log(0.25))
    assert none(dict(type='EntMinLoss',
                     alpha=0.5)) == pytest.approx([LN2, 0.5 * entropy, LN2])
    # EPR: p = 1/2 everywhere, N = 2, C = 4, k = 1: mean log-loss
    # 2 ln2 / 8, regulariser (2 - 1)^2 / 4^2.
    epr = build(dict(type='EPRLoss', expected_positives=1.0))
    value = epr(torch.zeros(2, 4), torch.tensor([0, 3]))
    assert value.item() == pytest.approx(LN2 / 4 + 1 / 16)


# -------------------------------------------------------------- identities


def test_an_equals_bce_with_logits_and_mmpretrain():
    cls_score, target = inputs(dtype=torch.float32)
    dense = (target == 1).float()
    an = build(dict(type='ANLoss'))
    torch.testing.assert_close(
        an(cls_score, target, reduction_override='none'),
        F.binary_cross_entropy_with_logits(cls_score, dense, reduction='none'))
    stock = build(dict(type='CrossEntropyLoss', use_sigmoid=True))
    torch.testing.assert_close(
        an(cls_score, dense, avg_factor=6),
        stock(cls_score, dense, avg_factor=6))


@pytest.mark.parametrize(
    'other',
    [
        dict(type='WANLoss', neg_weight=1.0),
        dict(type='ANLSLoss', smoothing=0.0),
        dict(type='ANLSLoss', smoothing=0.0, negatives_only=True),
        dict(type='PartialAsymmetricLoss', gamma_neg=0.0, clip=0.0),
        dict(type='LargeLoss', delta_rel=0.5),  # epoch 0: nothing modified
        dict(type='LargeLoss', mode='temporary', delta_rel=0.5),
    ])
def test_reduces_to_an(other):
    cls_score, target = inputs()
    loss = build(other)
    if hasattr(loss, 'set_epoch'):
        loss.set_epoch(0)
    expected = build(dict(type='ANLoss'))(
        cls_score, target, reduction_override='none')
    torch.testing.assert_close(
        loss(cls_score, target, reduction_override='none'), expected)


def test_focal_identities():
    cls_score, target = inputs()
    an = build(dict(type='ANLoss'))(cls_score, target, avg_factor=6)
    half = build(dict(type='PartialFocalLoss', gamma=0.0, alpha=0.5))
    torch.testing.assert_close(half(cls_score, target, avg_factor=6), an / 2)
    plain = build(dict(type='PartialFocalLoss', gamma=0.0, alpha=None))
    torch.testing.assert_close(plain(cls_score, target, avg_factor=6), an)


def test_wan_default_weight_reads_num_classes():
    cls_score, target = inputs(num_classes=5)
    torch.testing.assert_close(
        build(dict(type='WANLoss'))(cls_score, target),
        build(dict(type='WANLoss', neg_weight=0.25))(cls_score, target))
    with pytest.raises(ValueError, match='C >= 2'):
        build(dict(type='WANLoss'))(torch.zeros(2, 1), torch.ones(2, 1))


def test_n_ls_keeps_hard_targets_for_observed_labels():
    """AN-LS smooths every label, N-LS the assumed negatives only."""
    x = torch.zeros(1, 3, dtype=torch.float64, requires_grad=True)
    t = torch.tensor([[1.0, 0.0, -1.0]], dtype=torch.float64)
    for negatives_only, soft in ((False, [0.8, 0.2,
                                          0.2]), (True, [1.0, 0.2, 0.0])):
        loss = build(
            dict(
                type='ANLSLoss', smoothing=0.2, negatives_only=negatives_only))
        (grad, ) = torch.autograd.grad(loss(x, t, reduction_override='sum'), x)
        # d/dx BCE(x, s) = p - s with p = 1/2
        torch.testing.assert_close(
            grad, 0.5 - torch.tensor([soft], dtype=torch.float64))


# --------------------------------------------------------------------- EPR


def test_epr_scales_relate_to_official_value():
    cls_score, target = inputs(num=5, num_classes=7, seed=4)
    x, t = cls_score.numpy(), target.numpy()
    k = 2.9
    official = cole_total('epr', x, t, 0.0, expected_positives=k)
    official_eps = cole_total('epr', x, t.clip(0), 1e-5, expected_positives=k)
    loss = build(dict(type='EPRLoss', expected_positives=k))
    num, num_classes = x.shape
    assert loss(cls_score, target).item() == pytest.approx(official, rel=1e-12)
    matrix = loss(cls_score, target, reduction_override='none')
    assert matrix.mean().item() == pytest.approx(official, rel=1e-12)
    assert loss(cls_score, target, reduction_override='sum').item() == \
        pytest.approx(num * num_classes * official, rel=1e-12)
    # MMPretrain's head (avg_factor=N): C times the official value.
    assert loss(
        cls_score, target, avg_factor=num).item() == pytest.approx(
            num_classes * official, rel=1e-6)
    head = build(
        dict(
            type='EPRLoss', expected_positives=k, loss_weight=1 / num_classes))
    value = head(cls_score, target.clamp(min=0), avg_factor=num).item()
    assert value == pytest.approx(official_eps, abs=2e-4)
    # Unannotated entries carry the regulariser's share only.
    share = (torch.sigmoid(cls_score).sum(1).mean() - k)**2 / num_classes**2
    torch.testing.assert_close(matrix[target == 0],
                               share.expand(int((target == 0).sum())))


def test_epr_gradient_of_regulariser():
    """Unannotated entries get gradient only from the regulariser:
    2 (k_hat - k) p (1 - p) / (N C^2)."""
    cls_score, target = inputs(num=4, num_classes=5, seed=2)
    cls_score.requires_grad_(True)
    k = 1.9
    loss = build(dict(type='EPRLoss', expected_positives=k))
    (grad, ) = torch.autograd.grad(loss(cls_score, target), cls_score)
    p = torch.sigmoid(cls_score.detach())
    expected = 2 * (p.sum(1).mean() - k) * p * (1 - p) / (4 * 25)
    torch.testing.assert_close(grad[target == 0], expected[target == 0])


def test_epr_requires_expected_positives():
    with pytest.raises(ValueError, match='expected_positives is required'):
        build(dict(type='EPRLoss'))
    with pytest.raises(ValueError, match='expected_positives'):
        build(dict(type='EPRLoss', expected_positives=-1))
    with pytest.raises(ValueError, match='exceeds the number of classes'):
        build(dict(type='EPRLoss',
                   expected_positives=31.4))(torch.zeros(2, 20),
                                             torch.tensor([0, 1]))


# ---------------------------------------------------------------------- LL


def official_large_loss(x, t, epoch, delta, mode):
    """Large Loss Matters' ``compute_batch_loss`` with 0-based ``epoch``
    (its ``1 - clean_rate`` is ``epoch * delta``), target clipped at 0."""
    num, num_classes = x.shape
    y = np.clip(t, 0, None)
    softplus = np.logaddexp(0.0, x)
    loss = y * (softplus - x) + (1 - y) * softplus
    corrected = (1 - y) * (softplus - x) + y * softplus
    if epoch == 0:
        return loss
    k = math.ceil(num * num_classes * epoch * delta)
    unobserved = (t == 0) * loss
    threshold = np.sort(unobserved.ravel())[::-1][k - 1]
    other = corrected if mode == 'temporary' else np.zeros_like(loss)
    return np.where(unobserved < threshold, loss, other)


@pytest.mark.parametrize('mode', ['rejection', 'temporary'])
@pytest.mark.parametrize('epoch', [0, 1, 3])
def test_large_loss_matches_official(mode, epoch):
    cls_score, target = inputs(num=8, num_classes=6, seed=7)
    loss = build(dict(type='LargeLoss', mode=mode, delta_rel=0.04))
    loss.set_epoch(epoch)
    expected = official_large_loss(cls_score.numpy(), target.numpy(), epoch,
                                   0.04, mode)
    np.testing.assert_allclose(
        loss(cls_score, target, reduction_override='none').numpy(),
        expected,
        rtol=1e-12,
        atol=1e-12)
    # Official scale: mean over N x C.
    assert loss(cls_score, target).item() == pytest.approx(expected.mean())


def test_large_loss_hand_computed():
    x = torch.tensor([[0.0, 1.0, 2.0, 3.0]])
    t = torch.tensor([[1.0, 0.0, 0.0, 0.0]])
    # epoch 1 (0-based), delta 0.5: k = ceil(4 * 1 * 0.5) = 2 -> x = 2, 3.
    sp = F.softplus
    loss = build(dict(type='LargeLoss', delta_rel=0.5))
    loss.set_epoch(1)
    torch.testing.assert_close(
        loss(x, t, reduction_override='none'),
        torch.stack(
            [sp(-x[0, 0]),
             sp(x[0, 1]),
             x.new_zeros(()),
             x.new_zeros(())])[None])
    loss = build(dict(type='LargeLoss', mode='temporary', delta_rel=0.5))
    loss.set_epoch(1)
    torch.testing.assert_close(
        loss(x, t, reduction_override='none'),
        torch.stack([sp(-x[0, 0]),
                     sp(x[0, 1]),
                     sp(-x[0, 2]),
                     sp(-x[0, 3])])[None])


def test_large_loss_never_touches_observed_labels():
    """Observed negatives with the largest logits stay negatives; observed
    positives keep -log p, however large k is."""
    cls_score = torch.tensor([[9.0, 8.0, 1.0, -1.0, -9.0],
                              [7.0, -8.0, 2.0, 0.5, 3.0]])
    target = torch.tensor([[-1.0, -1.0, 0.0, 0.0, 1.0],
                           [-1.0, 1.0, 0.0, 0.0, 0.0]])
    an = build(dict(type='ANLoss'))(
        cls_score, target, reduction_override='none')
    observed = target != 0
    for mode in ('rejection', 'temporary'):
        loss = build(dict(type='LargeLoss', mode=mode, delta_rel=1.0))
        loss.set_epoch(1)
        matrix = loss(cls_score, target, reduction_override='none')
        torch.testing.assert_close(matrix[observed], an[observed])
        if mode == 'rejection':  # huge delta rejects every unannotated
            assert (matrix[~observed] == 0).all()
        else:
            torch.testing.assert_close(matrix[~observed],
                                       F.softplus(-cls_score)[~observed])


def test_large_loss_huge_delta_keeps_observed_only():
    cls_score, target = inputs(num=5, num_classes=4, seed=9)
    loss = build(dict(type='LargeLoss', delta_rel=1.0))
    loss.set_epoch(4)
    an = build(dict(type='ANLoss'))(
        cls_score, target, reduction_override='none')
    torch.testing.assert_close(
        loss(cls_score, target, reduction_override='sum'),
        an[target != 0].sum())


def test_num_large_losses_is_exact():
    assert num_large_losses(1000, 0, 0.5) == 0
    assert num_large_losses(1000, 1, 0.002) == 2  # float: 2.0000000000000018
    assert num_large_losses(16 * 20, 1, 0.002) == 1  # 0.64
    assert num_large_losses(16 * 80, 3, 0.002) == 8  # 7.68
    assert num_large_losses(8 * 20, 9, 0.004) == 6  # 5.76


def test_select_large_losses_ties_and_clamp():
    loss = torch.tensor([[3.0, 2.0, 2.0, 5.0, 1.0]])
    candidates = torch.tensor([[True, True, True, False, True]])
    # Ties with the k-th value are all selected; non-candidates never.
    assert select_large_losses(
        loss, candidates, 2).tolist() == [[True, True, True, False, False]]
    assert select_large_losses(loss, candidates, 99).tolist() == \
        candidates.tolist()
    assert not select_large_losses(loss, candidates, 0).any()


def test_large_loss_reads_epoch_from_message_hub():
    x = torch.tensor([[0.0, 1.0, 2.0, 3.0]])
    t = torch.tensor([[1.0, 0.0, 0.0, 0.0]])
    loss = build(dict(type='LargeLoss', delta_rel=0.5))
    hub = MessageHub.get_instance('mmlml-test-large-loss-epoch')
    try:
        hub.update_info_dict(dict(loop_stage='train', epoch=0, max_epochs=5))
        first = loss(x, t, reduction_override='none')
        hub.update_info('epoch', 1)
        second = loss(x, t, reduction_override='none')
    finally:
        hub.runtime_info.clear()
    assert (first > 0).all()
    assert (second[0, 2:] == 0).all()
    with pytest.raises(RuntimeError, match='set_epoch'):
        loss(x, t)
    assert 'delta_rel=0.5' in repr(loss)  # printing needs no epoch


def test_large_loss_bad_arguments():
    with pytest.raises(ValueError, match='mode'):
        build(dict(type='LargeLoss', mode='reject'))
    with pytest.raises(ValueError, match='percent'):
        build(dict(type='LargeLoss', delta_rel=20))


# -------------------------------------------------------------- focal, ASL


def official_asl(x, t, gamma_pos, gamma_neg, clip, eps=1e-8):
    """ASL's ``AsymmetricLoss.forward`` (element-wise, before ``-sum``),
    unannotated and observed negatives as y = 0."""
    y = (t == 1).astype(float)
    xs_pos = sigmoid(x)
    xs_neg = 1 - xs_pos
    if clip > 0:
        xs_neg = np.minimum(xs_neg + clip, 1)
    loss = y * np.log(np.maximum(xs_pos, eps))
    loss += (1 - y) * np.log(np.maximum(xs_neg, eps))
    pt = xs_pos * y + xs_neg * (1 - y)
    loss *= (1 - pt)**(gamma_pos * y + gamma_neg * (1 - y))
    return -loss


@pytest.mark.parametrize('gamma_pos,gamma_neg,clip', [(0.0, 4.0, 0.05),
                                                      (1.0, 2.0, 0.2),
                                                      (0.0, 1.0, 0.0)])
def test_asl_matches_official(gamma_pos, gamma_neg, clip):
    cls_score, target = inputs(num=6, num_classes=5, seed=5)
    loss = build(
        dict(
            type='PartialAsymmetricLoss',
            gamma_pos=gamma_pos,
            gamma_neg=gamma_neg,
            clip=clip))
    expected = official_asl(cls_score.numpy(), target.numpy(), gamma_pos,
                            gamma_neg, clip)
    np.testing.assert_allclose(
        loss(cls_score, target, reduction_override='none').numpy(),
        expected,
        rtol=1e-10,
        atol=1e-12)
    # Official scale: sum, i.e. loss_weight = batch size in the head.
    head = build(
        dict(
            type='PartialAsymmetricLoss',
            gamma_pos=gamma_pos,
            gamma_neg=gamma_neg,
            clip=clip,
            loss_weight=6))
    assert head(
        cls_score, target, avg_factor=6).item() == pytest.approx(
            expected.sum(), rel=1e-6)


def test_asl_focal_weight_is_detached():
    """The official training computes the focal weight without gradient."""
    cls_score, target = inputs(num=3, num_classes=4, seed=6)
    cls_score.requires_grad_(True)
    for detach in (True, False):
        loss = build(
            dict(
                type='PartialAsymmetricLoss',
                gamma_pos=1.0,
                detach_focal_weight=detach))
        (grad, ) = torch.autograd.grad(
            loss(cls_score, target, reduction_override='sum'), cls_score)
        x = cls_score.detach().clone().requires_grad_(True)
        y = (target == 1).double()
        p = torch.sigmoid(x)
        xs_neg = (1 - p + 0.05).clamp(max=1)
        log_term = y * torch.log(p) + (1 - y) * torch.log(xs_neg)
        pt = p * y + xs_neg * (1 - y)
        focal = (1 - pt)**(1.0 * y + 4.0 * (1 - y))
        if detach:
            focal = focal.detach()
        (expected, ) = torch.autograd.grad(-(log_term * focal).sum(), x)
        torch.testing.assert_close(grad, expected)


def test_focal_matches_reference():
    cls_score, target = inputs(num=6, num_classes=5, seed=8)
    x, t = cls_score.numpy(), target.numpy()
    p = sigmoid(x)
    expected = np.where(t == 1, 0.75 * (1 - p)**2 * -np.log(p),
                        0.25 * p**2 * -np.log(1 - p))
    loss = build(dict(type='PartialFocalLoss'))
    np.testing.assert_allclose(
        loss(cls_score, target, reduction_override='none').numpy(),
        expected,
        rtol=1e-10)


# ---------------------------------------------------------- MSE-, EntMin


def test_negative_mse_matches_reference():
    cls_score, target = inputs(num=6, num_classes=5, seed=10)
    x, t = cls_score.numpy(), target.numpy()
    p = sigmoid(x)
    expected = np.where(t == 1, -np.log(p), p**2)
    loss = build(dict(type='NegativeMSELoss'))
    np.testing.assert_allclose(
        loss(cls_score, target, reduction_override='none').numpy(),
        expected,
        rtol=1e-10)


def test_entmin_minimises_entropy():
    """Unannotated entries are pushed away from 1/2; observed negatives
    get no entropy term."""
    x = torch.tensor([[0.5, -0.5, 0.5]],
                     dtype=torch.float64,
                     requires_grad=True)
    t = torch.tensor([[0.0, 0.0, -1.0]], dtype=torch.float64)
    loss = build(dict(type='EntMinLoss', alpha=1.0))
    (grad, ) = torch.autograd.grad(loss(x, t, reduction_override='sum'), x)
    assert grad[0, 0] < 0 < grad[0, 1]  # descent moves away from 0
    assert grad[0, 2] == pytest.approx(torch.sigmoid(x[0, 2]).item())


@pytest.mark.parametrize('cfg,match', [
    (dict(type='EntMinLoss'), 'alpha is required'),
    (dict(type='EntMinLoss', alpha=-0.1), 'alpha'),
    (dict(type='WANLoss', neg_weight=-1), 'neg_weight'),
    (dict(type='WANLoss', neg_weight=float('inf')), 'neg_weight'),
    (dict(type='ANLSLoss', smoothing=0.6), 'smoothing'),
    (dict(type='PartialFocalLoss', alpha=1.5), 'alpha'),
    (dict(type='PartialFocalLoss', gamma=-1), 'gamma'),
    (dict(type='PartialAsymmetricLoss', gamma_neg=-1), 'gamma_neg'),
    (dict(type='PartialAsymmetricLoss', clip=1.0), 'clip'),
])
def test_bad_hyperparameters(cfg, match):
    with pytest.raises(ValueError, match=match):
        build(cfg)


# ----------------------------------------------------------- demo configs

DEMOS = {
    'an_mmlml': 'ANLoss',
    'wan': 'WANLoss',
    'an_ls': 'ANLSLoss',
    'n_ls': 'ANLSLoss',
    'epr': 'EPRLoss',
    'll_r': 'LargeLoss',
    'll_ct': 'LargeLoss',
    'focal': 'PartialFocalLoss',
    'asl': 'PartialAsymmetricLoss',
    'entmin': 'EntMinLoss',
    'mse_neg': 'NegativeMSELoss',
}


def test_demo_an_mmlml_matches_an():
    cfg_an = Config.fromfile(osp.join(ROOT, 'configs', 'demo', 'an.py'))
    cfg_mmlml = Config.fromfile(
        osp.join(ROOT, 'configs', 'demo', 'an_mmlml.py'))
    cls_score = random_logits((4, cfg_an.num_classes))
    target = torch.tensor([0, 3, 7, 19])
    one_hot = F.one_hot(target, cfg_an.num_classes).float()
    torch.testing.assert_close(
        build(cfg_mmlml.model.head.loss)(cls_score, target, avg_factor=4),
        build(cfg_an.model.head.loss)(cls_score, one_hot, avg_factor=4))


@pytest.mark.parametrize('k', [1, 50, 3000, 10**6])
@pytest.mark.parametrize('with_pseudo_labels', [False, True])
def test_large_loss_selection_ranks_the_losses_of_the_candidates(
        k, with_pseudo_labels):
    """Ranking the logits arithmetically selects what ranking the losses
    -log(1 - p) of the candidates (unannotated, without a pseudo-label)
    selects, ties with the k-th included."""
    import torch.nn.functional as F

    from mmlml.models.losses import large_loss_selection
    gen = torch.Generator().manual_seed(k)
    logits = (torch.randn(256, 300, generator=gen) * 3).round(decimals=1)
    target = torch.randint(-1, 2, (256, 300), generator=gen).float()
    pseudo_labels = None
    candidates = target == 0
    if with_pseudo_labels:
        pseudo_labels = torch.full((256, 300), math.nan)
        chosen = torch.rand(256, 300, generator=gen) < 0.2
        pseudo_labels[chosen] = 1.0
        candidates &= ~chosen
    epoch, delta = 1, min(1.0, k / logits.numel())
    selected = large_loss_selection(logits, target, epoch, 'rejection', delta,
                                    pseudo_labels)
    count = num_large_losses(logits.numel(), epoch, delta, 'rejection')
    expected = select_large_losses(F.softplus(logits), candidates, count)
    assert selected.dtype == torch.bool
    assert torch.equal(selected, expected)
