"""SPLCLoss against a transcription of the official algorithm."""
import math

import loss_checks as checks
import numpy as np
import pytest
import torch
from mmengine.logging import MessageHub

from mmlml.models.losses import SPLC_BASES, splc_corrected_target, splc_loss


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def ref_splc(x,
             t,
             tau=0.6,
             margin=1.0,
             gamma_pos=2.0,
             gamma_neg=2.0,
             clip=0.0,
             correct=True,
             pseudo_margin=False):
    """The official SPLC step by step in float64 (-1 never corrected):
    shift observed positives, threshold sigmoid of the result, focal terms
    on both sides."""
    x, t = np.asarray(x, np.float64), np.asarray(t, np.float64)
    shifted = np.where(t == 1, x - margin, x)
    new_t = t.copy()
    if correct:
        new_t = np.where((t == 0) & (_sigmoid(shifted) > tau), 1.0, t)
    if pseudo_margin:
        shifted = np.where(new_t == 1, x - margin, x)
    p = _sigmoid(shifted)
    pos = -((1 - p)**gamma_pos) * np.log(p)
    p_c = np.maximum(_sigmoid(x) - clip, 0.0)
    neg = -(p_c**gamma_neg) * np.log(1 - p_c)
    return np.where(new_t == 1, pos, neg)


@pytest.fixture
def hub_epoch():
    """Publish an epoch in the current MessageHub as a Runner does; the
    hub's runtime info is restored afterwards."""
    hub = MessageHub.get_current_instance()
    saved = dict(hub.runtime_info)
    hub.runtime_info.pop('epoch', None)
    hub.runtime_info.pop('loop_stage', None)

    def publish(epoch):
        hub.update_info_dict(
            dict(loop_stage='train', epoch=epoch, max_epochs=10))

    yield publish
    hub.runtime_info.clear()
    hub.runtime_info.update(saved)


def _splc(epoch=1, **kwargs):
    loss = checks.build(dict(type='SPLCLoss', **kwargs))
    loss.set_epoch(epoch)
    return loss


def _inputs(seed=0):
    # Logits on a grid away from the thresholds used below (tau = 0.6 is
    # logit 0.405, 0.5 is 0); rows mix every target value.
    gen = torch.Generator().manual_seed(seed)
    grid = torch.tensor([-3.1, -1.2, -0.3, 0.2, 0.8, 1.6, 2.9, 4.4])
    cls_score = grid[torch.randint(0, 8, (4, 6), generator=gen)]
    cls_score[0, :3] = torch.tensor([0.8, 1.6, -1.2])
    target = checks.tri_state_target(4, 6, seed=seed)
    target[0, :3] = torch.tensor([0.0, 0.0, 0.0])
    target[1, :2] = torch.tensor([-1.0, 1.0])
    cls_score[1, :2] = torch.tensor([2.9, -0.3])
    return cls_score, target


# --------------------------------------------------------------- hand values
def test_hand_values_after_start_epoch():
    loss = _splc(reduction='none')
    cls_score = torch.tensor([[1.0, 1.0, 0.0, 1.0]])
    target = torch.tensor([[1.0, 0.0, 0.0, -1.0]])
    p1 = 1 / (1 + math.exp(-1))
    expected = torch.tensor([[
        0.25 * math.log(2),  # focal margin at x - m = 0
        -(1 - p1)**2 * math.log(p1),  # pseudo-positive, no margin
        0.25 * math.log(2),  # focal negative at p = 0.5 <= tau
        -(p1**2) * math.log(1 - p1),  # observed negative, not corrected
    ]])
    torch.testing.assert_close(loss(cls_score, target), expected)


@pytest.mark.parametrize('epoch, correct', [(0, False), (1, True), (5, True)])
def test_default_matches_official(epoch, correct):
    cls_score, target = _inputs(1)
    loss = _splc(epoch=epoch, reduction='none')
    expected = ref_splc(cls_score.numpy(), target.numpy(), correct=correct)
    torch.testing.assert_close(
        loss(cls_score, target).double(),
        torch.from_numpy(expected),
        atol=1e-6,
        rtol=1e-5)


@pytest.mark.parametrize('base', sorted(SPLC_BASES))
@pytest.mark.parametrize('pseudo_margin', [False, True])
def test_bases_match_reference(base, pseudo_margin):
    cls_score, target = _inputs(2)
    loss = _splc(
        **SPLC_BASES[base], pseudo_margin=pseudo_margin, reduction='none')
    params = SPLC_BASES[base]
    expected = ref_splc(
        cls_score.numpy(),
        target.numpy(),
        pseudo_margin=pseudo_margin,
        **params)
    torch.testing.assert_close(
        loss(cls_score, target).double(),
        torch.from_numpy(expected),
        atol=1e-6,
        rtol=1e-5)


def test_before_start_epoch_is_base_loss_with_margin_on_positives():
    cls_score, target = _inputs(3)
    splc = _splc(epoch=0)
    focal_margin = checks.build(dict(type='FocalMarginLoss', gamma_neg=2.0))
    torch.testing.assert_close(
        splc(cls_score, target, reduction_override='none'),
        focal_margin(cls_score, target, reduction_override='none'))
    # Only the correction depends on the epoch.
    late = _splc(epoch=1)(cls_score, target, reduction_override='none')
    changed = late != splc(cls_score, target, reduction_override='none')
    assert changed.any()
    prob = torch.sigmoid(cls_score)
    assert bool((target[changed] == 0).all())
    assert bool((prob[changed] > 0.6).all())


def test_threshold_is_strict_and_spares_observed_negatives():
    cls_score = torch.tensor([[0.0, 0.0, 30.0]])
    target = torch.tensor([[0.0, 1.0, -1.0]])
    corrected = splc_corrected_target(cls_score, target, tau=0.5)
    torch.testing.assert_close(corrected, target)  # sigmoid(0) == 0.5
    corrected = splc_corrected_target(cls_score, target, tau=0.49)
    torch.testing.assert_close(corrected, torch.tensor([[1.0, 1.0, -1.0]]))


def test_correction_is_per_batch():
    loss = _splc(reduction='none')
    target = torch.zeros(1, 2)
    high, low = torch.tensor([[3.0, 2.0]]), torch.tensor([[0.2, -1.0]])
    first = loss(high, target)
    uncorrected = splc_loss(high, target, correct=False, reduction='none')
    assert (first < uncorrected).all()  # both became pseudo-positives
    # The next batch is not affected by the first one's pseudo-labels.
    torch.testing.assert_close(
        loss(low, target),
        splc_loss(low, target, correct=False, reduction='none'))


def test_threshold_decision_carries_no_gradient():
    """A pseudo-positive's gradient is that of the unshifted positive term,
    with nothing from the decision."""
    x = torch.tensor([[2.0]], dtype=torch.float64, requires_grad=True)
    _splc()(x, torch.zeros(1, 1), reduction_override='sum').backward()
    y = torch.tensor([[2.0]], dtype=torch.float64, requires_grad=True)
    checks.build(dict(type='FocalMarginLoss', margin=0.0))(
        y, torch.ones(1, 1), reduction_override='sum').backward()
    torch.testing.assert_close(x.grad, y.grad)


def test_detach_focal_weight_changes_gradient_only():
    cls_score, target = _inputs(4)
    x1 = cls_score.clone().requires_grad_(True)
    x2 = cls_score.clone().requires_grad_(True)
    v1 = _splc()(x1, target)
    v2 = _splc(detach_focal_weight=True)(x2, target)
    torch.testing.assert_close(v1, v2)
    v1.backward()
    v2.backward()
    assert not torch.allclose(x1.grad, x2.grad)


# ------------------------------------------------------------ configuration
def test_defaults_base_presets_and_overrides():
    import inspect
    defaults = {
        name: p.default
        for name, p in inspect.signature(checks.MODELS.get(
            'SPLCLoss')).parameters.items()
    }
    assert (defaults['tau'], defaults['change_epoch'], defaults['margin'],
            defaults['gamma']) == (0.6, 1, 1.0, 2.0)
    loss = checks.build(dict(type='SPLCLoss'))
    assert (loss.margin, loss.gamma_pos, loss.gamma_neg,
            loss.clip) == (1.0, 2.0, 2.0, 0.0)
    loss = checks.build(dict(type='SPLCLoss', **SPLC_BASES['asl']))
    assert (loss.margin, loss.gamma_pos, loss.gamma_neg,
            loss.clip) == (0.0, 0.0, 4.0, 0.05)
    loss = checks.build(dict(type='SPLCLoss', margin=0.5, gamma=1))
    assert (loss.margin, loss.gamma_pos, loss.gamma_neg,
            loss.clip) == (0.5, 1.0, 1.0, 0.0)
    loss = checks.build(dict(type='SPLCLoss', gamma=3, gamma_neg=4))
    assert (loss.gamma_pos, loss.gamma_neg) == (3.0, 4.0)


def test_epoch_from_message_hub(hub_epoch):
    loss = checks.build(dict(type='SPLCLoss', reduction='none'))
    cls_score = torch.tensor([[2.0]])
    target = torch.zeros(1, 1)
    with pytest.raises(RuntimeError, match='set_epoch'):
        loss(cls_score, target)
    hub_epoch(0)
    before = loss(cls_score, target)
    hub_epoch(1)
    after = loss(cls_score, target)
    torch.testing.assert_close(
        before, splc_loss(cls_score, target, correct=False, reduction='none'))
    torch.testing.assert_close(after,
                               splc_loss(cls_score, target, reduction='none'))
    # set_epoch overrides the hub; None goes back to it.
    loss.set_epoch(0)
    torch.testing.assert_close(loss(cls_score, target), before)
    loss.set_epoch(None)
    torch.testing.assert_close(loss(cls_score, target), after)


def test_change_epoch_zero_needs_no_epoch(hub_epoch):
    loss = checks.build(dict(type='SPLCLoss', change_epoch=0))
    assert torch.isfinite(loss(torch.randn(2, 3), torch.zeros(2, 3)))


def test_repr_needs_no_epoch(hub_epoch):
    text = repr(checks.build(dict(type='SPLCLoss')))
    assert 'tau=0.6' in text and 'change_epoch=1' in text


@pytest.mark.parametrize('cfg, name', [
    (dict(tau=1.5), 'tau'),
    (dict(tau=-0.1), 'tau'),
    (dict(change_epoch=-1), 'change_epoch'),
    (dict(change_epoch=1.5), 'change_epoch'),
    (dict(gamma=-1), 'gamma'),
    (dict(margin=-0.5), 'margin'),
    (dict(gamma_pos=-1), 'gamma_pos'),
    (dict(gamma_neg=float('nan')), 'gamma_neg'),
    (dict(clip=1.0), 'clip'),
    (dict(reduction='avg'), 'reduction'),
])
def test_bad_hyperparameters(cfg, name):
    with pytest.raises(ValueError, match=name):
        checks.build(dict(type='SPLCLoss', **cfg))
