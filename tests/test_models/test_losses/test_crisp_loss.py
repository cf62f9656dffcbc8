"""CRISP: CRISPLoss against hand values and a direct transcription of the
paper's Eq. (7), its absolute value, the AN warm-up; the class-prior
estimator (Eq. 2) against a numpy transcription, on positive-unlabelled
data with a known prior and with few positives; ClassPriorHook on a small
store; and a short training whose priors move, are checkpointed and come
back on resume."""
import math
import os.path as osp
import sys
import uuid
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from conftest import ROOT
from loss_checks import build
from mmengine.config import Config
from mmengine.logging import MessageHub
from mmengine.runner import Runner
from stateful_methods import method_config, store_method

from mmlml.hooks import ClassPriorHook
from mmlml.hooks.class_prior_hook import estimate_class_priors
from mmlml.models.heads import LossInputs
from mmlml.models.losses import crisp_loss
from mmlml.structures import LabelStore

sys.path.insert(0, osp.join(ROOT, 'tools', 'analysis'))
import plot_class_priors  # noqa: E402

NAN = float('nan')


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


def numpy_estimate(scores, positives, delta, tau):
    """Eq. (2) transcribed directly: every distinct score a threshold, the
    first (highest) of the smallest objectives."""
    priors = np.full(scores.shape[1], np.nan)
    for c in range(scores.shape[1]):
        scored = ~np.isnan(scores[:, c])
        every = scores[scored, c]
        pos = scores[scored & positives[:, c], c]
        if len(pos) == 0:
            continue
        bound = (1 + tau) * (
            np.sqrt(np.log(4 / delta) / (2 * len(every))) +
            np.sqrt(np.log(4 / delta) / (2 * len(pos))))
        best = np.inf
        for z in np.unique(every)[::-1]:
            q, q_pos = np.mean(every >= z), np.mean(pos >= z)
            if q_pos == 0:
                continue
            objective = q / q_pos + bound / q_pos
            if objective < best - 1e-12:
                best, prior = objective, q / q_pos
        priors[c] = min(prior, 1.0)
    return priors


@pytest.mark.parametrize('delta, tau', [(0.01, 0.01), (0.5, 0.0), (0.1, 1.)])
def test_estimator_matches_numpy(delta, tau):
    """Random scores with ties (float16) and unscored samples; a class
    without a positive is NaN."""
    gen = torch.Generator().manual_seed(0)
    scores = torch.rand(300, 6, generator=gen).half().float()
    scores[torch.rand(300, 6, generator=gen) < 0.1] = NAN
    positives = torch.rand(300, 6, generator=gen) < 0.1
    positives[:, 5] = False
    got = estimate_class_priors(scores, positives, delta, tau)
    expected = numpy_estimate(scores.numpy(), positives.numpy(), delta, tau)
    assert torch.isnan(got[5]) and np.isnan(expected[5])
    np.testing.assert_allclose(got[:5].numpy(), expected[:5], rtol=1e-6)


def test_estimator_recovers_a_known_prior():
    """Positive-unlabelled data with a pure top bin: the scores of the
    positives lie in [0.5, 1], those of the negatives in [0, 0.7], 40% of
    the positives are observed (at random); the estimate is the fraction
    of positives."""
    rng = np.random.default_rng(0)
    num = 5000
    for prior in (0.1, 0.3, 0.6):
        positive = rng.random(num) < prior
        scores = np.where(positive, rng.uniform(0.5, 1.0, num),
                          rng.uniform(0.0, 0.7, num))
        observed = positive & (rng.random(num) < 0.4)
        got = estimate_class_priors(
            torch.from_numpy(scores)[:, None],
            torch.from_numpy(observed)[:, None])
        assert abs(got.item() - positive.mean()) < 0.03, (prior, got)


def test_estimator_with_few_positives():
    """With few observed positives the confidence term dominates: the
    threshold is the lowest score of an observed positive (here the 3
    positives score 0.9, 0.8, 0.3 among 100 samples at 0.01 ... 1.0), and
    the estimate the fraction of samples at or above it."""
    scores = torch.arange(1, 101, dtype=torch.float64)[:, None] / 100
    positives = torch.zeros(100, 1, dtype=torch.bool)
    positives[[89, 79, 29], 0] = True
    got = estimate_class_priors(scores, positives)
    assert got.item() == pytest.approx(71 / 100)
    # 400 positives, 300 of them spread low to high and the 100 highest
    # samples: the top bin is trusted, 100 of 1000 samples / 100 of 400
    # positives.
    many = torch.zeros(1000, 1, dtype=torch.bool)
    many[torch.arange(0, 900, 3), 0] = True
    many[900:, 0] = True
    scores = torch.arange(1, 1001, dtype=torch.float64)[:, None] / 1000
    assert estimate_class_priors(scores, many).item() == pytest.approx(0.4)


def test_estimator_without_samples_estimates_nothing():
    """No sample (an empty epoch of scores): every class is NaN, as a class
    without a scored positive, instead of an ``argmin`` IndexError."""
    for num_classes in (3, 0):
        got = estimate_class_priors(
            torch.zeros(0, num_classes),
            torch.zeros(0, num_classes, dtype=torch.bool))
        assert got.shape == (num_classes, ) and got.dtype == torch.float32
        assert torch.isnan(got).all()


class HandOver:
    """A head's side of the loss-input hand-over (``pop_loss_inputs``)."""

    inputs = None

    def pop_loss_inputs(self):
        inputs, self.inputs = self.inputs, None
        return inputs


class Messages:
    """A logger that keeps its messages."""

    def __init__(self):
        self.lines = []

    def info(self, message):
        self.lines.append(message)


def small_hook(observed, **kwargs):
    kwargs.setdefault('extra_pass', False)  # scores from the training passes
    hook = ClassPriorHook(**kwargs)
    hook.dataset = SimpleNamespace(observed_labels=observed)
    hook.store = LabelStore(*observed.shape)
    hook.head = HandOver()
    hook.init_state()
    return hook


class Scalars:
    """A visualiser that keeps its scalars."""

    def __init__(self):
        self.records = []

    def add_scalars(self, scalars, step):
        self.records.append((step, scalars))


def epoch_runner(epoch):
    hub = MessageHub.get_instance(f'crisp_{uuid.uuid4().hex}')
    return SimpleNamespace(
        epoch=epoch, logger=Messages(), message_hub=hub, visualizer=Scalars())


#: 8 samples x 3 classes; class 2 has no observed positive.
OBSERVED = np.zeros((8, 3), dtype=np.int8)
OBSERVED[[0, 1], 0] = 1
OBSERVED[[2, 3, 4, 5], 1] = 1
OBSERVED[6, 2] = -1
#: Probabilities exact in float16, one column per class.
PROBS = torch.tensor([[15, 8, 14, 4, 2, 1, 12, 6], [1, 2, 8, 8, 12, 14, 8, 4],
                      [3, 5, 7, 9, 11, 13, 15, 1]],
                     dtype=torch.float32).T / 16


def test_hook_updates_the_store():
    """Scored in two batches from the head's loss inputs; the estimate
    after the epoch by hand: class 0 thresholds at 8/16 (4 of 8 samples
    above, both positives): 1/2; class 1 at 8/16 (5 of 8, all 4
    positives): 5/8; class 2 stays in the warm-up."""
    hook = small_hook(OBSERVED, delta=0.1)
    rates = torch.tensor([2 / 8, 4 / 8, 0.0])
    state = hook.store.class_state
    torch.testing.assert_close(state['positive_rates'], rates)
    torch.testing.assert_close(state['prior_estimated'], torch.zeros(3))
    hook.before_train_epoch(None)
    runner = epoch_runner(0)
    for rows in (torch.arange(4), torch.arange(4, 8)):
        hook.head.inputs = LossInputs(rows, torch.logit(PROBS[rows]),
                                      torch.zeros(4, 3))
        hook.after_train_iter(runner, 0)
        assert hook.head.inputs is None  # read once
    torch.testing.assert_close(hook.store.scores(), PROBS, atol=1e-3, rtol=0)
    hook.after_train_epoch(runner)
    expected = torch.tensor([0.5, 0.625, 0.0])
    torch.testing.assert_close(state['class_priors'], expected)
    torch.testing.assert_close(state['prior_estimated'],
                               torch.tensor([1., 1., 0.]))
    assert runner.logger.lines == [
        'ClassPriorHook: epoch 1: class priors [0.5000, 0.6250, nan] '
        '(mean 0.5625; 2 of 3 classes estimated).'
    ]
    logged = runner.message_hub.get_info('class_priors')
    assert logged[:2] == pytest.approx([0.5, 0.625]) and math.isnan(logged[2])
    assert runner.visualizer.records == [(1, {
        'class_prior/0': 0.5,
        'class_prior/1': 0.625
    })]
    # The same in chunks of one class; the estimate equals the function's.
    for chunk in (1, 2):
        again = small_hook(OBSERVED, delta=0.1)
        again.store.record_scores(torch.arange(8), PROBS)
        torch.testing.assert_close(again.update_priors(chunk=chunk), expected)
    # Too few positives for min_positives=3: class 0 is not estimated.
    few = small_hook(OBSERVED, delta=0.1, min_positives=3, num_logged=1)
    few.store.record_scores(torch.arange(8), PROBS)
    few.after_train_epoch(runner)
    torch.testing.assert_close(few.store.class_state['prior_estimated'],
                               torch.tensor([0., 1., 0.]))
    assert runner.logger.lines[-1].startswith(
        'ClassPriorHook: epoch 1: class priors [nan, ...] (mean 0.6250; 1 ')
    # The priors are checkpointed with the store, and a resumed store keeps
    # them.
    restored = LabelStore(8, 3)
    restored.load_state_dict(hook.store.state_dict())
    torch.testing.assert_close(restored.class_state['class_priors'], expected)
    resumed = small_hook(OBSERVED)
    resumed.store = restored
    resumed.init_state()
    torch.testing.assert_close(restored.class_state['class_priors'], expected)
    torch.testing.assert_close(restored.class_state['prior_estimated'],
                               torch.tensor([1., 1., 0.]))


def test_hook_warmup_and_extra_pass():
    """No scores and no estimate before the end of epoch warmup_epochs;
    with extra_pass the scores come from the separate pass only."""
    hook = small_hook(OBSERVED, warmup_epochs=2, extra_pass=True)
    passes = []

    def score_training_set(runner):
        passes.append(runner.epoch)
        hook.store.record_scores(torch.arange(8), PROBS)

    hook.score_training_set = score_training_set
    for epoch in (0, 1):
        runner = epoch_runner(epoch)
        hook.before_train_epoch(runner)
        hook.head.inputs = LossInputs(
            torch.arange(8), torch.zeros(8, 3), torch.zeros(8, 3))
        hook.after_train_iter(runner, 0)
        assert hook.head.inputs is None
        assert torch.isnan(hook.store.scores()).all()  # not recorded
        hook.after_train_epoch(runner)
        assert len(runner.logger.lines) == epoch  # estimated after epoch 2
    assert passes == [1]
    torch.testing.assert_close(hook.store.class_state['prior_estimated'],
                               torch.tensor([1., 1., 0.]))


def test_hook_arguments():
    for bad in (dict(delta=0), dict(delta=1.0), dict(tau=-0.1),
                dict(warmup_epochs=0), dict(min_positives=0),
                dict(num_logged=-1)):
        with pytest.raises(ValueError, match=next(iter(bad))):
            ClassPriorHook(**bad)


def test_training_moves_the_priors_and_resumes(tiny_demo_config, tmp_path):
    """Two epochs of the tiny demo: AN in the first, the priors estimated
    after each and saved in every checkpoint; resumed from the first
    checkpoint, the second epoch ends with the same priors and weights."""
    method = store_method(dict(type='CRISPLoss'), dict(type='ClassPriorHook'))
    runner = Runner.from_cfg(
        Config.fromfile(
            method_config(
                tiny_demo_config, tmp_path, method, 'crisp', max_epochs=2)))
    runner.train()
    state = runner.model.head.label_store.class_state
    rates, priors = state['positive_rates'], state['class_priors']
    # The classes without an observed positive in the 51 samples stay AN.
    done = rates > 0
    assert torch.equal(state['prior_estimated'], done.float())
    assert ((priors >= rates - 1e-6) & (priors <= 1)).all()
    logged = torch.tensor(runner.message_hub.get_info('class_priors'))
    torch.testing.assert_close(logged[done], priors[done])
    assert torch.isnan(logged[~done]).all()
    saved = [
        torch.load(
            osp.join(tmp_path, 'crisp', f'epoch_{epoch}.pth'),
            weights_only=False)['label_store']['class_state']
        for epoch in (1, 2)
    ]
    torch.testing.assert_close(saved[1]['class_priors'], priors)
    assert torch.equal(saved[0]['prior_estimated'], done.float())
    assert not torch.equal(saved[0]['class_priors'], priors)

    cfg = Config.fromfile(
        method_config(
            tiny_demo_config, tmp_path, method, 'resumed', max_epochs=2))
    cfg.resume = True
    cfg.load_from = osp.join(tmp_path, 'crisp', 'epoch_1.pth')
    resumed = Runner.from_cfg(cfg)
    resumed.train()
    again = resumed.model.head.label_store.class_state
    for key, value in state.items():
        assert torch.equal(again[key], value), key
    weights = resumed.model.state_dict()
    for key, value in runner.model.state_dict().items():
        assert torch.equal(weights[key], value), key
    assert math.isfinite(
        resumed.message_hub.get_scalar('train/loss').current())

    # The priors of the run against the true ones.
    out = tmp_path / 'priors.png'
    plot_class_priors.main([
        osp.join(tmp_path, 'crisp.py'),
        osp.join(tmp_path, 'crisp'), '--out',
        str(out), '--csv',
        str(tmp_path / 'priors.csv')
    ])
    assert out.stat().st_size > 0
    rows = (tmp_path / 'priors.csv').read_text().splitlines()
    assert rows[0] == 'class,name,true_prior,observed_rate,epoch_1,epoch_2'
    last = [float(row.split(',')[-1]) for row in rows[1:]]
    np.testing.assert_allclose(
        np.array(last)[done.numpy()], priors[done].numpy(), atol=1e-6)
