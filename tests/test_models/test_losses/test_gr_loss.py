"""GRLoss: formula, schedules, generic loss checks."""
import uuid

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from loss_checks import build, check_gradcheck, random_logits, tri_state_target
from mmengine.logging import MessageHub

from mmlml.models.losses import gce_term, gr_loss, gr_loss_with_weights


@pytest.fixture
def fresh_hub():
    """A MessageHub without training progress; left clean afterwards."""
    # get_instance makes a newly named hub the current one.
    hub = MessageHub.get_instance(f'test_losses_gr_{uuid.uuid4().hex}')
    yield hub
    MessageHub.get_instance(f'test_losses_gr_{uuid.uuid4().hex}')


def gr(**kwargs):
    loss = build(dict(type='GRLoss', **kwargs))
    loss.set_epoch(0, 8)
    return loss


def reference_gr(x, t, w, b, mu, sigma, q2=0.01, q3=1.0):
    """float64 numpy transcription of the official per-element loss from
    probabilities (no epsilon)."""
    x = np.asarray(x, dtype=np.float64)
    t = np.asarray(t)
    p = 1 / (1 + np.exp(-x))
    k = 1 / (1 + np.exp(-(w * p + b)))
    v = np.exp(-(p - mu)**2 / (2 * sigma**2))
    unknown = v * (k * (1 - p**q2) / q2 + (1 - k) * (1 - (1 - p)**q3) / q3)
    out = np.where(t == 1, -np.log(p), unknown)
    return np.where(t == -1, -np.log(1 - p), out)


def official_schedule(epoch0, total, n, beta, alpha):
    """Hand transcription of the official schedules (1-based epoch)."""
    e = epoch0 + 1
    fb = max(e - n - 1, 0) / (total - n)
    fa = max(e - n, 0) / (total - n)
    return dict(
        w=beta[0] + (beta[1] - beta[0]) * fb,
        b=beta[2] + (beta[3] - beta[2]) * fb,
        mu=alpha[0] + (alpha[2] - alpha[0]) * fa,
        sigma=alpha[1] + (alpha[3] - alpha[1]) * fa)


def test_matches_reference_at_several_epochs():
    x = random_logits((6, 7), scale=2.5)
    t = tri_state_target(6, 7)
    beta, alpha = (0.0, 10.0, -1.0, -8.0), (0.5, 2.0, 0.8, 0.5)
    loss = build(dict(type='GRLoss', beta=beta, alpha=alpha, q3=1.5))
    for epoch in (0, 3, 9):
        loss.set_epoch(epoch, 10)
        params = official_schedule(epoch, 10, 0, beta, alpha)
        expected = reference_gr(x.numpy(), t.numpy(), q3=1.5, **params)
        got = loss(x.double(), t, reduction_override='none')
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-10)


def test_official_schedule_values_and_off_by_one():
    loss = gr()  # beta (0, 2, -2, -2), alpha (0.5, 2, 0.8, 0.5)
    expected = {
        0: dict(w=0.0, b=-2.0, mu=0.5375, sigma=1.8125),
        1: dict(w=0.25, b=-2.0, mu=0.575, sigma=1.625),
        # Last epoch: w stops one step short of 2, mu and sigma arrive.
        7: dict(w=1.75, b=-2.0, mu=0.8, sigma=0.5),
    }
    for epoch, values in expected.items():
        loss.set_epoch(epoch, 8)
        got = loss.current_parameters()
        for key, value in values.items():
            assert got[key] == pytest.approx(value), (epoch, key)
    # Against the transcription, for every epoch and with linear_init.
    beta, alpha = (1.0, 10.0, -1.0, -8.0), (0.3, 1.0, 0.9, 0.2)
    for n in (0, 2):
        loss = build(
            dict(type='GRLoss', beta=beta, alpha=alpha, linear_init=n))
        for epoch in range(8):
            loss.set_epoch(epoch, 8)
            want = official_schedule(epoch, 8, n, beta, alpha)
            got = loss.current_parameters()
            for key in want:
                assert got[key] == pytest.approx(want[key]), (n, epoch, key)


def test_linear_init_holds_initial_values():
    loss = gr(linear_init=2)
    for epoch in (0, 1):
        loss.set_epoch(epoch, 8)
        assert loss.current_parameters()['w'] == 0
        assert loss.current_parameters()['mu'] == 0.5
    loss.set_epoch(2, 8)  # e = 3: mu moves (1/6), w not yet
    params = loss.current_parameters()
    assert params['w'] == 0
    assert params['mu'] == pytest.approx(0.5 + 0.3 / 6)
    loss.set_epoch(3, 8)
    assert loss.current_parameters()['w'] == pytest.approx(2 / 6)


def test_paper_schedule():
    loss = gr(schedule='paper')
    for epoch in range(8):
        loss.set_epoch(epoch, 8)
        got = loss.current_parameters()
        # Eq. 9-13: x(t) = x0 + (xT - x0) t / T, t = finished epochs.
        assert got['w'] == pytest.approx(2 * epoch / 8)
        assert got['b'] == pytest.approx(-2)
        assert got['mu'] == pytest.approx(0.5 + 0.3 * epoch / 8)
        assert got['sigma'] == pytest.approx(2 - 1.5 * epoch / 8)


def test_schedule_fractions_are_capped():
    """Past its own max_epochs (a run longer than the loss's ``T``), the
    schedules stay at their end."""
    loss = build(dict(type='GRLoss', max_epochs=8))
    loss.set_epoch(12)
    assert loss.current_parameters() == pytest.approx(
        dict(w=2.0, b=-2.0, mu=0.8, sigma=0.5))


def test_schedule_fractions_of_a_given_epoch_read_the_total():
    """An epoch given without its total is placed in the loss's own run."""
    loss = gr()
    assert loss.schedule_fractions(4) == loss.schedule_fractions(4, 8)


def test_set_epoch_past_max_epochs_is_refused():
    loss = gr()
    with pytest.raises(ValueError, match=r'epoch 8 is past .*max_epochs=8'):
        loss.set_epoch(8, 8)
    loss.set_epoch(7, 8)


def test_epochs_from_message_hub_and_overrides(fresh_hub):
    loss = build(dict(type='GRLoss'))
    with pytest.raises(RuntimeError, match='epoch'):
        loss(torch.zeros(2, 3), torch.tensor([0, 1]))
    fresh_hub.update_info_dict(dict(loop_stage='train', epoch=7, max_epochs=8))
    assert loss.current_parameters()['mu'] == pytest.approx(0.8)
    # The constructor's max_epochs wins over the Runner's...
    loss = build(dict(type='GRLoss', max_epochs=16))
    assert loss.total_epochs() == 16
    assert loss.current_parameters()['mu'] == pytest.approx(0.5 + 0.3 / 2)
    # ... and set_epoch's over both.
    loss.set_epoch(1, 4)
    assert loss.total_epochs() == 4
    loss.set_epoch(1)
    assert loss.total_epochs() == 16
    assert 'GRLoss' in repr(build(dict(type='GRLoss')))  # no epoch needed


def test_linear_init_must_be_below_epochs():
    loss = gr(linear_init=8)
    with pytest.raises(ValueError, match='linear_init'):
        loss(torch.zeros(2, 3), torch.tensor([0, 1]))


def test_k0_v1_approaches_assume_negative():
    x = random_logits((5, 6), scale=4.0).double()
    t = tri_state_target(5, 6).clamp(min=0).double()
    an = F.binary_cross_entropy_with_logits(x, t, reduction='none')
    exact = gr_loss_with_weights(x, t, k=0.0, v=1.0, q3=0.0, reduction='none')
    torch.testing.assert_close(exact, an, rtol=1e-12, atol=1e-12)
    near = gr_loss_with_weights(x, t, k=0.0, v=1.0, q3=1e-6, reduction='none')
    torch.testing.assert_close(near, an, rtol=1e-4, atol=1e-4)
    far = gr_loss_with_weights(x, t, k=0.0, v=1.0, q3=0.5, reduction='none')
    assert not torch.allclose(far, an, atol=1e-2)


def test_gce_term_limits():
    log_prob = torch.log(
        torch.tensor([1e-30, 0.1, 0.5, 1.0], dtype=torch.float64))
    torch.testing.assert_close(gce_term(log_prob, 1.0), 1 - log_prob.exp())
    torch.testing.assert_close(gce_term(log_prob, 0.0), -log_prob)
    torch.testing.assert_close(
        gce_term(log_prob, 2.0), (1 - log_prob.exp()**2) / 2)


def test_observed_states_and_q1():
    x = torch.tensor([[-2.0, 0.5, 3.0]], dtype=torch.float64)
    pos = gr()(x, torch.ones(1, 3), reduction_override='none')
    torch.testing.assert_close(pos, -F.logsigmoid(x))
    neg = gr()(x, -torch.ones(1, 3), reduction_override='none')
    torch.testing.assert_close(neg, -F.logsigmoid(-x))
    paper_pos = gr(q1=0.01)(x, torch.ones(1, 3), reduction_override='none')
    p = torch.sigmoid(x)
    torch.testing.assert_close(paper_pos, (1 - p**0.01) / 0.01)


def test_gradient_stops_through_k_and_v():
    """Unannotated gradient is the paper's Eq. 18 times v:
    v [(1 - k)(1 - p)^q3 p - k p^q2 (1 - p)], k and v constants."""
    x = torch.linspace(-4, 4, 9, dtype=torch.float64)[None].requires_grad_()
    w, b, mu, sigma, q2, q3 = 3.0, -1.0, 0.6, 0.7, 0.01, 1.5
    gr_loss(
        x, torch.zeros_like(x), w, b, mu, sigma, q2=q2, q3=q3,
        reduction='sum').backward()
    p = torch.sigmoid(x.detach())
    k = torch.sigmoid(w * p + b)
    v = torch.exp(-0.5 * ((p - mu) / sigma)**2)
    expected = v * ((1 - k) * (1 - p)**q3 * p - k * p**q2 * (1 - p))
    torch.testing.assert_close(x.grad, expected)


def test_gradcheck():
    x, t = random_logits((3, 5), seed=1), tri_state_target(3, 5)
    gen = torch.Generator().manual_seed(2)
    k = torch.rand(3, 5, generator=gen, dtype=torch.float64)
    v = torch.rand(3, 5, generator=gen, dtype=torch.float64)

    def loss(cls_score, target, reduction_override):
        return gr_loss_with_weights(
            cls_score,
            target,
            k,
            v,
            q1=0.01,
            q3=1.5,
            reduction=reduction_override)

    check_gradcheck(loss, x, t)


@pytest.mark.parametrize('kwargs, match', [
    (dict(q2=-0.1), 'q2'),
    (dict(q3=float('nan')), 'q3'),
    (dict(beta=(0, 2, -2)), 'beta'),
    (dict(alpha=(0.5, 0, 0.8, 0.5)), 'sigma'),
    (dict(linear_init=-1), 'linear_init'),
    (dict(schedule='cosine'), 'schedule'),
    (dict(max_epochs=0), 'max_epochs'),
])
def test_bad_hyperparameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        build(dict(type='GRLoss', **kwargs))


def test_functional_bad_sigma():
    with pytest.raises(ValueError, match='sigma'):
        gr_loss(torch.zeros(1, 2), torch.tensor([0]), 0.0, 0.0, 0.5, 0.0)
