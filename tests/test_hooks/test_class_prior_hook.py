"""ClassPriorHook: the class-prior estimator (Eq. 2 of CRISP) against a
numpy transcription, on positive-unlabelled data with a known prior and
with few positives; the hook on a small store; a short training whose
priors move, are checkpointed and come back on resume; and a warm-up that
leaves no epoch trained with the estimated priors."""
import math
import os.path as osp
import sys
import uuid
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from conftest import ROOT, train_tiny
from mmengine.config import Config
from mmengine.logging import MessageHub
from mmengine.runner import Runner
from stateful_methods import HandOver, method_config, store_method

from mmlml.hooks import ClassPriorHook
from mmlml.hooks.class_prior_hook import estimate_class_priors
from mmlml.models.heads import LossInputs
from mmlml.structures import LabelStore

sys.path.insert(0, osp.join(ROOT, 'tools', 'analysis'))
import plot_class_priors  # noqa: E402

NAN = float('nan')


def test_warmup_ge_max_epochs_refused(tiny_train):
    """class-prior-hook-warmup-ge-max-epochs: a warm-up as long as the
    training refuses to start."""
    with pytest.raises(
            ValueError,
            match=r'ClassPriorHook: warmup_epochs=2 leaves no epoch trained '
            r'with the estimated priors in 2 epochs'):
        train_tiny(tiny_train, dict(type='CRISPLoss'),
                   dict(type='ClassPriorHook', warmup_epochs=2))


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
