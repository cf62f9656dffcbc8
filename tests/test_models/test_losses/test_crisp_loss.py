"""CRISP: CRISPLoss against hand values and a direct transcription of the
paper's Eq. (7), its absolute value, the AN warm-up and its state checks
(ClassPriorHook, which estimates the class priors, is tested in
``tests/test_hooks/test_class_prior_hook.py``)."""
import pytest
import torch
from loss_checks import build

from mmlml.models.losses import crisp_loss


def eq7(x, target, priors, correction='abs'):
    """Eq. (7) transcribed on the batch as the whole training set:
    sum_j 2 pi_j / n^p_j sum_{x in S^L_j} (1 - f_j(x))
    + |1/n sum_i f_j(x_i) - pi_j|."""
    prob = torch.sigmoid(x)
    total = x.new_zeros(())
    for j in range(x.size(1)):
        positives = target[:, j] == 1
        if positives.any():
            total = total + 2 * priors[j] / positives.sum() * (
                1 - prob[positives, j]).sum()
        aligned = prob[:, j].mean() - priors[j]
        total = total + (aligned.abs() if correction == 'abs' else aligned)
    return total


def crisp(x, target, priors, rates=None, estimated=None, **kwargs):
    """The functional loss, every class estimated by default, with the
    observed rates of the batch."""
    if rates is None:
        rates = (target == 1).to(x).mean(0)
    if estimated is None:
        estimated = torch.ones_like(priors)
    return crisp_loss(
        x,
        target,
        class_priors=priors,
        positive_rates=rates,
        prior_estimated=estimated,
        **kwargs)


def test_hand_values():
    """3 samples x 2 classes, by hand: class 0 has 1 observed positive of
    3 (2 pi / rho = 2 * 0.6 * 3 = 3.6) and a mean prediction below its
    prior, class 1 one positive too (2 * 0.2 * 3 = 1.2) and a mean above."""
    x = torch.tensor([[2.0, -1.0], [0.0, 1.0], [-1.0, 0.0]])
    t = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    priors = torch.tensor([0.6, 0.2])
    s = torch.sigmoid(x)
    got = crisp(x, t, priors, reduction='none')
    mean0, mean1 = s[:, 0].mean(), s[:, 1].mean()
    assert mean0 < 0.6 and mean1 > 0.2
    expected = torch.stack([
        torch.stack([3.6 * (1 - s[0, 0]) - (s[0, 0] - 0.6), s[0, 1] - 0.2]),
        torch.stack([-(s[1, 0] - 0.6), 1.2 * (1 - s[1, 1]) + s[1, 1] - 0.2]),
        torch.stack([-(s[2, 0] - 0.6), s[2, 1] - 0.2]),
    ])
    torch.testing.assert_close(got, expected)
    risk = (1.2 * (1 - s[0, 0]) + (0.6 - mean0) + 0.4 * (1 - s[1, 1]) +
            (mean1 - 0.2))
    loss = build(dict(type='CRISPLoss'))
    assert loss.state_inputs == ('class_priors', 'positive_rates',
                                 'prior_estimated')
    rates, done = torch.full((2, ), 1 / 3), torch.ones(2)
    value = loss(
        x,
        t,
        avg_factor=3,
        class_priors=priors,
        positive_rates=rates,
        prior_estimated=done)
    assert value.item() == pytest.approx(risk.item(), rel=1e-6)
    torch.testing.assert_close(value, eq7(x, t, priors))
    # Class indices are one observed positive each.
    torch.testing.assert_close(
        crisp(x, torch.tensor([0, 1, 1]), priors, rates, avg_factor=3),
        crisp(
            x,
            torch.tensor([[1., 0.], [0., 1.], [0., 1.]]),
            priors,
            rates,
            avg_factor=3))


@pytest.mark.parametrize('correction', ['abs', 'none'])
def test_batch_is_eq7_value_and_gradient(correction):
    """With the batch as the training set (rho = n^p / n), the mean over
    the samples is Eq. (7) (or Eq. 5 without the absolute value), value
    and gradient; priors on both sides of the mean predictions."""
    gen = torch.Generator().manual_seed(0)
    x = (torch.randn(12, 6, generator=gen) * 3).double()
    t = torch.zeros(12, 6, dtype=torch.float64)
    t[torch.arange(12), torch.arange(12) % 5] = 1  # class 5: no positive
    priors = torch.linspace(0.05, 0.9, 6, dtype=torch.float64)
    x1, x2 = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
    ours = crisp(x1, t, priors, correction=correction, avg_factor=12)
    expected = eq7(x2, t, priors, correction)
    torch.testing.assert_close(ours, expected)
    ours.backward()
    expected.backward()
    torch.testing.assert_close(x1.grad, x2.grad)


def test_absolute_value_keeps_the_risk_non_negative():
    """A mean prediction below the prior makes Eq. (5)'s second term
    negative: the absolute value turns it and its gradient around."""
    x = torch.tensor([[4.0], [-3.0], [-3.0], [-3.0]])
    t = torch.tensor([[1.0], [0.0], [0.0], [0.0]])
    priors = torch.tensor([0.7])
    values, grads = {}, {}
    for correction in ('none', 'abs'):
        logits = x.clone().requires_grad_(True)
        values[correction] = crisp(
            logits, t, priors, correction=correction, avg_factor=4)
        values[correction].backward()
        grads[correction] = logits.grad
    s = torch.sigmoid(x)
    positive = 2 * 0.7 * (1 - s[0, 0])
    aligned = s.mean() - 0.7
    assert aligned < 0 and positive + aligned < 0
    assert values['none'].item() == pytest.approx((positive + aligned).item())
    assert values['abs'].item() == pytest.approx((positive - aligned).item())
    ds = s * (1 - s)
    pos_grad = torch.zeros_like(x)
    pos_grad[0] = -2 * 0.7 * ds[0]
    torch.testing.assert_close(grads['none'], pos_grad + ds / 4)
    torch.testing.assert_close(grads['abs'], pos_grad - ds / 4)


def test_warmup_is_an():
    """prior_estimated = 0 trains AN (BCE, unannotated labels negative),
    value and gradient; per class when mixed."""
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(8, 5, generator=gen) * 2
    t = torch.zeros(8, 5)
    t[torch.arange(8), torch.arange(8) % 5] = 1
    t[0, 3] = -1  # an observed negative is a negative of AN
    priors = torch.full((5, ), 0.3)
    x1, x2 = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
    ours = crisp(x1, t, priors, estimated=torch.zeros(5), avg_factor=8)
    an = build(dict(type='ANLoss'))(x2, t, avg_factor=8)
    torch.testing.assert_close(ours, an)
    ours.backward()
    an.backward()
    torch.testing.assert_close(x1.grad, x2.grad)
    mixed = torch.tensor([1., 0., 1., 0., 0.])
    got = crisp(x, t, priors, estimated=mixed, reduction='none')
    full = crisp(x, t, priors, reduction='none')
    an = build(dict(type='ANLoss'))(x, t, reduction_override='none')
    torch.testing.assert_close(got[:, [0, 2]], full[:, [0, 2]])
    torch.testing.assert_close(got[:, [1, 3, 4]], an[:, [1, 3, 4]])


def test_bad_state():
    x, t = torch.zeros(2, 3), torch.tensor([0, 1])
    good = torch.full((3, ), 0.5)
    with pytest.raises(ValueError, match=r'class_priors.*\(3,\)'):
        crisp(x, t, torch.zeros(4), good)
    with pytest.raises(ValueError, match=r'positive_rates must lie in \[0, 1'):
        crisp(x, t, good, torch.full((3, ), 2.))
    with pytest.raises(ValueError, match='prior_estimated'):
        crisp(x, t, good, good, torch.ones(2))
    with pytest.raises(ValueError, match='correction'):
        build(dict(type='CRISPLoss', correction='square'))
