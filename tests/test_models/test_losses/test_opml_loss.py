"""OPMLLoss, ZLPRLoss, HighRankRegularizer and LossSum."""
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from loss_checks import build, check_gradcheck, random_logits, tri_state_target

from mmlml.models.losses import high_rank_loss, opml_loss, zlpr_loss


def reference_opml(x, t, a=1.0, b=1.0):
    """float64 numpy transcription, sample by sample:
    log(a + sum_i t_i e^{-s_i}) + log(b + sum_i (1 - t_i) e^{s_i}),
    observed negatives (-1) counting as t = 0."""
    x = np.asarray(x, dtype=np.float64)
    t = np.maximum(np.asarray(t, dtype=np.float64), 0)
    out = []
    for s, ti in zip(x, t):
        out.append(
            np.log(a + np.sum(ti * np.exp(-s))) +
            np.log(b + np.sum((1 - ti) * np.exp(s))))
    return np.array(out)


# ----------------------------------------------------------------- OPML


def test_zlpr_hand_value():
    """One positive with s = 0 and two unknowns with s = 0:
    log(1 + 1) + log(1 + 2)."""
    for loss in (build(dict(type='ZLPRLoss')), build(dict(type='OPMLLoss'))):
        got = loss(
            torch.zeros(1, 3), torch.tensor([0]), reduction_override='sum')
        assert float(got) == pytest.approx(math.log(2) + math.log(3))


def test_matches_reference():
    x, t = random_logits((6, 7), scale=2.0), tri_state_target(6, 7)
    for a, b in ((1.0, 1.0), (0.3, 2.5)):
        loss = build(dict(type='OPMLLoss', a=a, b=b))
        got = loss(x.double(), t, reduction_override='none')
        assert got.shape == (6, )
        np.testing.assert_allclose(
            got.numpy(), reference_opml(x, t, a, b), rtol=1e-12)


def test_single_positive_form():
    """With one positive: log(a + e^{-s_p}) + log(b + sum_{j != p} e^{s_j})
    (METHODS' single-positive formula)."""
    x = torch.tensor([[0.5, -1.0, 2.0, 0.0]], dtype=torch.float64)
    got = opml_loss(x, torch.tensor([2]), a=0.5, b=2.0, reduction='sum')
    want = (
        math.log(0.5 + math.exp(-2.0)) +
        math.log(2.0 + math.exp(0.5) + math.exp(-1.0) + 1.0))
    assert float(got) == pytest.approx(want, rel=1e-12)


def test_soft_targets_and_observed_negatives():
    x = random_logits((4, 5), seed=4).double()
    soft = torch.rand(4, 5, generator=torch.Generator().manual_seed(5))
    soft[0, 0] = 0.0
    soft[1, 1] = 1.0
    soft[2, 2] = -1.0
    got = opml_loss(x, soft, a=0.7, b=1.3, reduction='none')
    np.testing.assert_allclose(
        got.numpy(), reference_opml(x, soft, 0.7, 1.3), rtol=1e-12)
    # An observed negative is an ordinary negative (t = 0).
    t = tri_state_target(4, 5)
    torch.testing.assert_close(
        opml_loss(x, t, reduction='none'),
        opml_loss(x, t.clamp(min=0), reduction='none'))


def test_zlpr_is_opml_with_unit_constants():
    x, t = random_logits((5, 6), seed=6), tri_state_target(5, 6)
    zlpr = build(dict(type='ZLPRLoss'))
    opml = build(dict(type='OPMLLoss', a=1.0, b=1.0))
    torch.testing.assert_close(zlpr(x, t), opml(x, t))
    torch.testing.assert_close(
        zlpr_loss(x, t, reduction='sum'), opml(x, t, reduction_override='sum'))
    assert (zlpr.a, zlpr.b) == (1.0, 1.0)


def test_positive_gradient_matches_bce():
    """Paper Sec. III-C: with a = 1 the single positive's gradient is
    BCE's, -sigmoid(-s_p)."""
    x = random_logits((3, 4), seed=7).double().requires_grad_()
    index = torch.tensor([0, 2, 3])
    zlpr_loss(x, index, reduction='sum').backward()
    rows = torch.arange(3)
    torch.testing.assert_close(x.grad[rows, index],
                               -torch.sigmoid(-x.detach()[rows, index]))


def test_margins():
    x, t = random_logits((3, 4), seed=8), tri_state_target(3, 4)
    by_margin = build(dict(type='OPMLLoss', pos_margin=0.5, neg_margin=-1.5))
    by_constant = build(
        dict(type='OPMLLoss', a=math.exp(-0.5), b=math.exp(-1.5)))
    torch.testing.assert_close(by_margin(x, t), by_constant(x, t))
    with pytest.raises(ValueError, match='either a or pos_margin'):
        build(dict(type='OPMLLoss', a=2.0, pos_margin=0.5))
    with pytest.raises(ValueError, match='neg_margin'):
        build(dict(type='OPMLLoss', neg_margin=float('inf')))


@pytest.mark.parametrize('kwargs, match', [
    (dict(a=0.0), 'a must'),
    (dict(b=-1.0), 'b must'),
    (dict(a=float('inf')), 'a must'),
])
def test_bad_constants(kwargs, match):
    with pytest.raises(ValueError, match=match):
        build(dict(type='OPMLLoss', **kwargs))
    with pytest.raises(ValueError, match=match):
        opml_loss(torch.zeros(1, 2), torch.tensor([0]), **kwargs)


def test_weights():
    loss = build(dict(type='OPMLLoss', b=2.0))
    x, t = random_logits((4, 5), seed=10).double(), tri_state_target()
    per_sample = loss(x, t, reduction_override='none')
    sample_weight = torch.linspace(0, 2, 4)
    torch.testing.assert_close(
        loss(x, t, weight=sample_weight, reduction_override='none'),
        per_sample * sample_weight.double())
    # Element-wise weights scale the exponentials inside the sums; a zero
    # weight removes the label.
    torch.testing.assert_close(
        loss(x, t, weight=torch.ones(4, 5), reduction_override='none'),
        per_sample)
    element_weight = torch.ones(4, 5)
    element_weight[:, 4] = 0
    torch.testing.assert_close(
        loss(x, t, weight=element_weight, reduction_override='none'),
        loss(x[:, :4], t[:, :4], reduction_override='none'))
    element_weight = torch.rand(
        4, 5, generator=torch.Generator().manual_seed(11))
    tt = t.clamp(min=0).double()
    ew = element_weight.double()
    want = (
        torch.log(1 + (ew * tt * torch.exp(-x)).sum(1)) +
        torch.log(2 + (ew * (1 - tt) * torch.exp(x)).sum(1)))
    torch.testing.assert_close(
        loss(x, t, weight=element_weight, reduction_override='none'), want)
    with pytest.raises(ValueError, match='weight'):
        loss(x, t, weight=torch.ones(5))
    with pytest.raises(ValueError, match='weight'):
        loss(x, t, weight=torch.ones(4, 6))
    with pytest.raises(ValueError, match='>= 0'):
        loss(x, t, weight=-torch.ones(4, 5))


def test_numerics():
    loss = build(dict(type='OPMLLoss', a=0.5, b=2.0))
    # Zero soft targets (log 0 = -inf inside logsumexp) next to +-100.
    x = torch.tensor([[100.0, -100.0, 100.0, -100.0]], requires_grad=True)
    t = torch.tensor([[0.0, 1.0, 0.0, 0.3]])
    value = loss(x, t, reduction_override='sum')
    value.backward()
    assert torch.isfinite(value) and torch.isfinite(x.grad).all()
    assert float(value.detach()) == pytest.approx(
        float(reference_opml(x.detach(), t, 0.5, 2.0)[0]), rel=1e-6)
    check_gradcheck(loss, random_logits((3, 5), seed=13),
                    tri_state_target(3, 5))
    soft = torch.rand(3, 5, generator=torch.Generator().manual_seed(14))
    soft[0, :2] = 0
    check_gradcheck(loss, random_logits((3, 5), seed=15), soft)


# ------------------------------------------------------------- High rank


def reference_logdet(x, eps):
    """The C x C form, in float64 numpy."""
    y = 1 / (1 + np.exp(-np.asarray(x, dtype=np.float64)))
    return np.linalg.slogdet(y.T @ y + eps * np.eye(y.shape[1]))[1]


@pytest.mark.parametrize('shape', [(3, 8), (8, 8), (10, 4)])
def test_high_rank_value_is_the_class_gram_form(shape):
    x = random_logits(shape, scale=2.0, seed=16)
    reg = build(dict(type='HighRankRegularizer', loss_weight=0.1, eps=1e-2))
    got = reg(x, torch.zeros(shape))
    assert got.shape == () and got.dtype == torch.float32
    assert float(got) == pytest.approx(
        -0.1 * reference_logdet(x, 1e-2), rel=1e-5)


def test_high_rank_gradient_matches_class_gram_form():
    x = random_logits((3, 7), seed=17).double().requires_grad_()
    high_rank_loss(x, eps=1e-3).backward()
    grad = x.grad.clone()
    x.grad = None
    y = torch.sigmoid(x)
    direct = -torch.logdet(y.T @ y + 1e-3 * torch.eye(7, dtype=x.dtype))
    direct.backward()
    torch.testing.assert_close(grad, x.grad)


def test_high_rank_rewards_diverse_predictions():
    """Rows predicting different labels give a lower value than identical
    rows."""
    same = torch.full((4, 4), -5.0)
    same[:, 0] = 5.0
    diverse = torch.full((4, 4), -5.0)
    diverse.fill_diagonal_(5.0)
    assert high_rank_loss(diverse) < high_rank_loss(same)


def test_high_rank_numerics():
    reg = build(dict(type='HighRankRegularizer'))
    assert reg.loss_weight == 1e-3 and reg.eps == 1e-3
    x = torch.tensor([[100.0, -100.0, 100.0], [100.0, -100.0, -100.0]],
                     requires_grad=True)
    value = reg(x)
    value.backward()
    assert torch.isfinite(value) and torch.isfinite(x.grad).all()
    layer = torch.nn.Linear(6, 6)
    with torch.autocast('cpu', dtype=torch.bfloat16):
        logits = layer(torch.randn(4, 6) * 50)
        assert logits.dtype == torch.bfloat16
        value = reg(logits, torch.zeros(4, 6), avg_factor=4)
    assert value.dtype == torch.float32 and torch.isfinite(value)
    value.backward()
    assert torch.isfinite(layer.weight.grad).all()
    x = random_logits((3, 5), seed=18).double().requires_grad_()
    assert torch.autograd.gradcheck(
        lambda s: high_rank_loss(s, eps=1e-2), (x, ), eps=1e-6, atol=1e-5)


def test_high_rank_bad_input():
    reg = build(dict(type='HighRankRegularizer'))
    x = torch.zeros(2, 3)
    with pytest.raises(ValueError, match="'none'"):
        reg(x, reduction_override='none')
    torch.testing.assert_close(reg(x, reduction_override='sum'), reg(x))
    with pytest.raises(ValueError, match='weight'):
        reg(x, weight=torch.ones(2))
    with pytest.raises(ValueError, match='shape'):
        reg(x, torch.zeros(2, 4))
    with pytest.raises(ValueError, match='shape'):
        reg(torch.zeros(6))
    with pytest.raises(TypeError, match='floating-point'):
        reg(torch.zeros(2, 3, dtype=torch.long))
    with pytest.raises(ValueError, match='eps'):
        build(dict(type='HighRankRegularizer', eps=0.0))


# --------------------------------------------------------------- LossSum


def test_loss_sum():
    cfg = dict(
        type='LossSum',
        losses=[
            dict(type='CrossEntropyLoss', use_sigmoid=True),
            dict(type='HighRankRegularizer', loss_weight=0.5)
        ])
    total = build(cfg)
    x = random_logits((4, 6), seed=19)
    t = F.one_hot(torch.tensor([0, 1, 2, 5]), 6).float()
    bce = F.binary_cross_entropy_with_logits(x, t, reduction='sum') / 4
    want = bce + 0.5 * high_rank_loss(x)
    torch.testing.assert_close(total(x, t, avg_factor=4), want)
    with pytest.raises(ValueError, match='non-empty'):
        build(dict(type='LossSum', losses=[]))
    with pytest.raises(TypeError, match='config dict or an nn.Module'):
        build(dict(type='LossSum', losses=['OPMLLoss']))
