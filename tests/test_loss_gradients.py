"""Tests of mmlml.analysis.loss_gradients and of its command line,
tools/analysis/plot_loss_gradients.py."""
import csv
import os.path as osp
import sys

import numpy as np
import pytest
import torch
import torch.nn as nn
from conftest import ROOT
from mmengine.logging import MessageHub

from mmlml.analysis import loss_gradients as lg

sys.path.insert(0, osp.join(ROOT, 'tools', 'analysis'))
import plot_loss_gradients  # noqa: E402

PROBS = np.linspace(0.01, 0.99, 33)


class BatchMeanLoss(nn.Module):
    """A loss with a term on the batch mean: not element-wise."""

    def forward(self, cls_score, target, **kwargs):
        prob = cls_score.sigmoid()
        return prob.sum() + prob.mean(0).sum()**2


class SoftmaxLoss(nn.Module):
    """Couples the classes of a sample (log-sum-exp over classes)."""

    def forward(self, cls_score, target, **kwargs):
        return torch.logsumexp(cls_score, dim=1).sum()


class HubProgressLoss(nn.Module):
    """``epoch / max_epochs * x``: the gradient is the training progress,
    read from the MessageHub."""

    progress = None

    def forward(self, cls_score, target, **kwargs):
        progress = self.progress
        if progress is None:
            hub = MessageHub.get_current_instance()
            progress = hub.get_info('epoch') / hub.get_info('max_epochs')
        return (progress * cls_score).sum()


class EpochScaledLoss(HubProgressLoss):
    """The same, with the progress set by ``set_epoch``."""

    def set_epoch(self, epoch, max_epochs=None):
        self.progress = epoch / max_epochs


class CountingLoss(nn.Module):
    """A stateful loss: its value grows with the number of calls."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, cls_score, target, **kwargs):
        self.calls += 1
        return self.calls * cls_score.sum()


def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize('value', [0, 1, -1])
def test_sigmoid_cross_entropy_gradient_is_p_minus_y(value):
    loss = lg.build_loss(dict(type='CrossEntropyLoss', use_sigmoid=True))
    assert not lg.uses_tri_state_targets(loss)
    # MMPretrain's losses know no -1: an observed negative is a 0.
    np.testing.assert_allclose(
        lg.loss_gradient(loss, PROBS, value),
        PROBS - (1.0 if value == 1 else 0.0),
        atol=1e-6)


@pytest.mark.parametrize('value', [0, 1, -1])
def test_an_loss_gradient_is_p_minus_y(value):
    grad = lg.loss_gradient(lg.build_loss('ANLoss'), PROBS, value)
    np.testing.assert_allclose(
        grad, PROBS - (1.0 if value == 1 else 0.0), atol=1e-6)


def test_hill_gradient_on_negatives():
    loss = lg.build_loss(dict(type='HillLoss', lamb=1.5))
    grad = lg.loss_gradient(loss, PROBS, 0)
    np.testing.assert_allclose(grad, 3 * PROBS**2 * (1 - PROBS)**2, atol=1e-6)
    peak = lg.loss_gradient(loss, [0.5], 0, check_batch=False)
    assert peak[0] == pytest.approx(0.1875, abs=1e-6)


def test_tri_state_targets_for_mmlml_losses_only():
    for cfg in ('ANLoss', 'HighRankRegularizer',
                dict(type='LossSum', losses=[dict(type='ANLoss')])):
        assert lg.uses_tri_state_targets(lg.build_loss(cfg))
    assert not lg.uses_tri_state_targets(lg.build_loss('AsymmetricLoss'))


def test_loss_weight_and_context_do_not_change_elementwise_losses():
    loss = lg.build_loss(
        dict(type='CrossEntropyLoss', use_sigmoid=True, loss_weight=2.0))
    grad = lg.loss_gradient(loss, PROBS, 0, lg.EvalSettings(3, 4.0))
    np.testing.assert_allclose(grad, 2 * PROBS, atol=1e-6)
    assert lg.gradient_coupling(loss, PROBS, 0) == dict(
        batch=False, classes=False)


def test_batch_coupled_loss_is_refused_without_context():
    loss = BatchMeanLoss()
    assert lg.gradient_coupling(loss, PROBS, 0)['batch']
    with pytest.raises(ValueError, match='batch'):
        lg.loss_gradient(loss, PROBS, 0)
    # In a batch of 4 with 3 context samples (2 classes, all logits 0 but
    # the grid's): L = sum p + (sum_c mean_n p_nc)^2.
    settings = lg.EvalSettings(num_classes=2, batch_context=3)
    grad = lg.loss_gradient(loss, PROBS, 0, settings)
    dp = PROBS * (1 - PROBS)
    total = (PROBS + 3 * 0.5) / 4 + 0.5
    np.testing.assert_allclose(grad, dp + 2 * total * dp / 4, atol=1e-6)


def test_class_coupled_loss_uses_the_context():
    loss = SoftmaxLoss()
    settings = lg.EvalSettings(num_classes=3)
    coupling = lg.gradient_coupling(loss, PROBS, 0, settings)
    assert coupling == dict(batch=False, classes=True)
    grad = lg.loss_gradient(loss, PROBS, 0, settings)
    odds = PROBS / (1 - PROBS)  # e^x; the two context logits are 0
    np.testing.assert_allclose(grad, odds / (odds + 2), atol=1e-6)


def test_epoch_is_passed_to_set_epoch_of_a_copy():
    loss = EpochScaledLoss()
    grad = lg.loss_gradient(loss, PROBS, 0,
                            lg.EvalSettings(epoch=3, max_epochs=12))
    np.testing.assert_allclose(grad, 0.25)
    assert loss.progress is None  # the original is untouched
    # A loss that reads the MessageHub sees the epoch there.
    loss = HubProgressLoss()
    assert not lg.is_epoch_dependent(loss)
    grad = lg.loss_gradient(loss, PROBS, 0,
                            lg.EvalSettings(epoch=6, max_epochs=8))
    np.testing.assert_allclose(grad, 0.75)


def test_stateful_loss_is_evaluated_on_a_copy():
    loss = CountingLoss()
    for _ in range(2):
        np.testing.assert_allclose(lg.loss_gradient(loss, PROBS, 0), 1.0)
    assert loss.calls == 0


def test_settings_are_checked():
    for kwargs in (dict(num_classes=1), dict(batch_context=-1)):
        with pytest.raises(ValueError):
            lg.EvalSettings(**kwargs)
    for probs, value in (([0.0, 0.5], 0), ([0.5], 2)):
        with pytest.raises(ValueError):
            lg.loss_gradient(lg.build_loss('ANLoss'), probs, value)


def test_training_progress_restores_the_message_hub():
    info = MessageHub.get_current_instance().runtime_info
    before = dict(info)
    with lg.training_progress(4, 9):
        assert info['epoch'] == 4 and info['max_epochs'] == 9
    assert dict(info) == before


def test_probability_grid():
    grid = lg.probability_grid(5, (0.1, 0.9), 'logit')
    logits = np.log(grid / (1 - grid))
    np.testing.assert_allclose(np.diff(logits), np.diff(logits)[0])
    assert grid[0] == pytest.approx(0.1) and grid[-1] == pytest.approx(0.9)
    np.testing.assert_allclose(
        lg.probability_grid(3, (0.2, 0.6)), [0.2, 0.4, 0.6])
    for args in ((1, ), (5, (0.0, 0.5)), (5, (0.1, 0.9), 'log')):
        with pytest.raises(ValueError):
            lg.probability_grid(*args)


def test_compute_curves_epochs_and_skips():
    specs = [
        lg.CurveSpec(dict(type='GRLoss', max_epochs=8)),
        lg.CurveSpec(dict(type='HighRankRegularizer')),
        lg.CurveSpec(
            dict(type='ZLPRLoss'),
            label='ZLPR',
            targets=('observed_negative', )),
    ]
    curves, messages = lg.compute_curves(specs, ('negative', ), PROBS)
    kinds = [(c.spec.cfg['type'], c.kind) for c in curves]
    assert kinds == [('GRLoss', 'negative'), ('ZLPRLoss', 'observed_negative')]
    assert curves[0].label() == 'GRLoss(max_epochs=8) [epoch 0]'
    assert curves[1].label() == 'ZLPR [ctx: C=20, x_ctx=0]'
    assert 'evaluated at epoch 0' in messages[0]
    assert 'skipped HighRankRegularizer (negative)' in messages[1]
    assert '--batch-context' in messages[1]
    settings = lg.EvalSettings(batch_context=2, epoch=7, max_epochs=8)
    curves, messages = lg.compute_curves(specs[:2], ('negative', ), PROBS,
                                         settings)
    assert not messages
    assert curves[0].notes == ['epoch 7/8']
    assert curves[1].notes == ['batch ctx: 2']
    assert not np.allclose(
        curves[0].grad,
        lg.compute_curves(specs[:1], ('negative', ), PROBS)[0][0].grad)


def test_unknown_loss_gives_a_clear_error():
    with pytest.raises(ValueError) as info:
        lg.build_loss('HilLoss')
    message = str(info.value)
    assert "unknown loss 'HilLoss'" in message
    assert 'Did you mean HillLoss' in message
    assert 'Registered losses' in message and 'CrossEntropyLoss' in message
    with pytest.raises(ValueError, match='cannot build'):
        lg.build_loss(dict(type='HillLoss', colour=1))


def test_presets_are_registered_losses_and_copies():
    for name, preset in lg.PRESETS.items():
        specs = lg.preset_curves(name)
        assert len(specs) == len(preset['curves'])
        for spec in specs:
            lg.build_loss(spec.cfg)
            assert spec.label
    lg.preset_curves('hill-fig3')[0].cfg['type'] = 'changed'
    assert lg.preset_curves('hill-fig3')[0].cfg['type'] == 'ANLoss'
    with pytest.raises(ValueError, match='unknown preset'):
        lg.preset_curves('nope')


def test_cli_unknown_loss(tmp_path, capsys):
    out = tmp_path / 'grad.png'
    argv = ['--losses', 'NoSuchLoss', '--out', str(out)]
    assert plot_loss_gradients.main(argv) == 2
    assert "unknown loss 'NoSuchLoss'" in capsys.readouterr().err
    assert not out.exists()
    assert plot_loss_gradients.main([
        '--losses', 'HillLoss', '--cfg-options', 'FocalLoss.gamma=1', '--out',
        str(out)
    ]) == 2
    assert 'FocalLoss.gamma' in capsys.readouterr().err
    with pytest.raises(SystemExit):
        plot_loss_gradients.main(['--losses', "{'margin': 1}"])


def test_cli_writes_png_and_csv(tmp_path):
    png, table = tmp_path / 'out' / 'grad.png', tmp_path / 'grad.csv'
    status = plot_loss_gradients.main([
        '--losses', 'CrossEntropyLoss',
        "{'type': 'AsymmetricLoss', 'gamma_neg': 4.0, 'clip': 0.05}",
        '--cfg-options', 'CrossEntropyLoss.use_sigmoid=True', '--out',
        str(png), '--csv',
        str(table), '--points', '20', '--sign', 'magnitude'
    ])
    assert status == 0
    assert png.read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'
    rows = read_csv(table)
    assert len(rows) == 2 * 2 * 20
    losses = {r['loss'] for r in rows}
    assert losses == {
        'CrossEntropyLoss(use_sigmoid=True)',
        'AsymmetricLoss(gamma_neg=4.0, clip=0.05)'
    }
    bce_pos = [
        r for r in rows if r['target'] == 'positive'
        and r['loss'] == 'CrossEntropyLoss(use_sigmoid=True)'
    ]
    assert len(bce_pos) == 20
    for row in bce_pos:
        p, grad = float(row['p']), float(row['dL_dx'])
        assert row['target_value'] == '1'
        assert grad == pytest.approx(p - 1, abs=1e-5)
        assert float(row['plotted']) == pytest.approx(1 - p, abs=1e-5)


def test_cli_overrides_epochs_and_config(tmp_path):
    config = tmp_path / 'cfg.py'
    config.write_text("model = dict(head=dict(loss=dict(type='HillLoss')))\n"
                      'train_cfg = dict(max_epochs=8)\n')
    table = tmp_path / 'grad.csv'
    assert plot_loss_gradients.main([
        '--preset', 'hill-fig4', '--losses', 'GRLoss', '--config',
        str(config), '--cfg-options', '1.margin=0.25', 'GRLoss.q3=1.5',
        'model.head.loss.margin=0.5', '--epoch', '7', '--csv',
        str(table), '--points', '5', '--targets', 'negative'
    ]) == 0
    labels = list(dict.fromkeys(r['label'] for r in read_csv(table)))
    assert labels == [
        'BCE', 'FocalMarginLoss(margin=0.25, gamma=2.0)',
        'Focal margin (m=0.5)', 'Focal margin (m=1.0)', 'Focal margin (m=1.5)',
        'GRLoss(q3=1.5) [epoch 7/8]', 'cfg.py: HillLoss(margin=0.5)'
    ]


def test_cli_presets(tmp_path, capsys):
    assert plot_loss_gradients.main(['--list-presets']) == 0
    listed = capsys.readouterr().out
    for name in lg.PRESETS:
        assert name in listed
        out = tmp_path / f'{name}.png'
        assert plot_loss_gradients.main(
            ['--preset', name, '--out',
             str(out), '--points', '30']) == 0
        assert out.stat().st_size > 0


# The value-and-gradient terms of mmlml.models.losses.terms: the faster
# paths of the losses (shared values, blocks of rows, outputs written in
# place, the mirrored focal term, the packed search for few entries, the
# derivative scaled in place) give the values of the plain ones.


def _logits_with_extremes(shape, seed, dtype=torch.float32):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=gen) * 4
    x.view(-1)[:6] = torch.tensor([-100., -30., -0.5, 0., 30., 100.])
    return x.to(dtype)


@pytest.mark.parametrize('shape', [(7, 33), (130, 70)])
@pytest.mark.parametrize('dtype', [torch.float32, torch.float64])
@pytest.mark.parametrize('gamma,detach', [(0.0, False), (1.0, False),
                                          (2.0, False), (2.5, True)])
def test_mirrored_focal_term_is_the_two_terms_selected(gamma, detach, dtype,
                                                       shape):
    """Equal to the last bit, for logs by softplus (few entries) and from
    the shared log1p_exp (more)."""
    from mmlml.models.losses import terms
    x = _logits_with_extremes(shape, seed=1, dtype=dtype)
    above = terms.probability_above(0.6)
    positive, negative = terms.focal_terms(
        gamma, gamma, detach_focal_weight=detach)
    logits = terms.Logits(x)
    mask = above(logits)
    expected = [
        torch.lerp(neg, pos, mask) for neg, pos in zip(
            negative(terms.Logits(x), grad=True),
            positive(terms.Logits(x), grad=True))
    ]
    got = terms.mirrored_focal_value_grad(
        terms.Logits(x), above, gamma=gamma, detach_focal_weight=detach)
    for a, b in zip(got, expected):
        assert torch.isfinite(a).all()
        torch.testing.assert_close(a, b, rtol=0, atol=0)


def _term_cases():
    import functools

    from mmlml.models.losses import terms
    positive, negative = terms.focal_terms(2.0, 4.0, margin=0.5, clip=0.05)
    return {
        'positive':
        positive,
        'positive-plain-scaled':
        terms.scaled(terms.focal_terms()[0], torch.tensor([[0.5], [2.0],
                                                           [1.0]])),
        'positive-detached-scaled':
        terms.scaled(
            terms.focal_terms(3.0, detach_focal_weight=True)[0], 0.25),
        'negative-clip':
        negative,
        'negative-clip-plain':
        terms.scaled(terms.focal_terms(clip=0.1)[1], 0.3),
        'negative-focal-scaled':
        terms.scaled(terms.focal_terms(0, 2.0)[1], 0.75),
        'soft-bce':
        functools.partial(terms.soft_bce_value_grad, soft_target=0.0),
        'soft-bce-smooth-scaled':
        terms.scaled(
            functools.partial(terms.soft_bce_value_grad, soft_target=0.9),
            0.1),
        'hill':
        functools.partial(terms.hill_negative_value_grad, lamb=1.5),
        'squared':
        terms.squared_probability_value_grad,
        'entropy':
        terms.scaled(terms.entropy_value_grad, -0.2),
        'mirrored':
        functools.partial(
            terms.mirrored_focal_value_grad,
            positive=terms.probability_above(0.4),
            gamma=2.0),
        'generic-scaled':
        terms.scaled(
            lambda logits, grad: (logits.prob * 2, logits.comp * 3
                                  if grad else None), 0.5),
        'soft-bce-tensor-scaled':
        terms.scaled(
            functools.partial(
                terms.soft_bce_value_grad,
                soft_target=torch.tensor([[0.0], [1.0], [0.3]])), 0.5),
        'zero':
        terms.zero_value_grad,
        'summed':
        terms.summed(positive, terms.scaled(negative, 0.5)),
    }


@pytest.mark.parametrize('columns', [9, 3000])
@pytest.mark.parametrize('name', list(_term_cases()))
def test_terms_write_into_given_outputs(name, columns):
    """A term given output tensors returns the values it returns without
    them (and the shared values it writes there are the right ones)."""
    from mmlml.models.losses import terms
    term = _term_cases()[name]
    x = _logits_with_extremes((3, columns), seed=2)
    expected = term(terms.Logits(x), grad=True)
    outputs = (torch.full_like(x,
                               float('nan')), torch.full_like(x, float('nan')))
    got = term(terms.Logits(x), grad=True, out=outputs)
    for out, a, b in zip(outputs, got, expected):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
        if a is not out:  # the caller copies what is not written there
            out.copy_(a)
        torch.testing.assert_close(out, b, rtol=0, atol=0)
    value, slope = term(terms.Logits(x), grad=False)
    assert slope is None
    torch.testing.assert_close(value, expected[0], rtol=0, atol=0)


@pytest.mark.parametrize('cfg', [
    dict(type='SPLCLoss'),
    dict(type='SPLCLoss', margin=0, gamma_pos=0, gamma_neg=4, clip=0.05),
    dict(type='LASDLoss'),
    dict(type='LASDLoss', expected_positives=2.5),
    dict(type='GRLoss', max_epochs=10),
    dict(type='HillLoss'),
    dict(type='ANLSLoss', smoothing=0.2),
    dict(type='PartialAsymmetricLoss'),
    dict(type='EMLoss'),
    dict(type='OPMLLoss', a=0.5, b=2.0),
    dict(type='LargeLoss', mode='temporary', delta_rel=0.05),
    dict(type='EPRLoss', expected_positives=2.0),
])
def test_blocks_of_rows_give_the_whole(cfg, monkeypatch):
    """Evaluating by blocks of rows (here of one row, and of three) gives
    the values and gradients of one block, per-sample weights included."""
    import mmlml  # noqa: F401
    from mmlml.models.losses import terms
    from mmlml.registry import MODELS
    loss = MODELS.build(dict(cfg, reduction='none'))
    if hasattr(loss, 'set_epoch'):
        loss.set_epoch(5, 10)
    x = _logits_with_extremes((7, 11), seed=3)
    target = torch.zeros(7, 11)
    target[:, 0] = 1
    target[2, 3:5] = 1
    target[4, 6:9] = -1

    def run():
        cls_score = x.clone().requires_grad_(True)
        value = loss(cls_score, target)
        value.backward(torch.linspace(0.5, 1.5, value.numel()).view_as(value))
        return value.detach(), cls_score.grad

    monkeypatch.setattr(terms, 'BLOCK_ELEMENTS', 10**9)
    whole = run()
    for elements in (1, 33):
        monkeypatch.setattr(terms, 'BLOCK_ELEMENTS', elements)
        for a, b in zip(run(), whole):
            torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-7)


def test_gr_weights_given_as_tensors_follow_the_blocks(monkeypatch):
    from mmlml.models.losses import gr_loss_with_weights, terms
    gen = torch.Generator().manual_seed(4)
    x = torch.randn(6, 5, generator=gen)
    target = torch.tensor([0, 1, 2, 3, 4, 0])
    k = torch.rand(6, 5, generator=gen)
    v = torch.rand(6, 1, generator=gen).double()  # cast to the logits'

    def run():
        return gr_loss_with_weights(x, target, k, v, reduction='none')

    monkeypatch.setattr(terms, 'BLOCK_ELEMENTS', 10**9)
    whole = run()
    monkeypatch.setattr(terms, 'BLOCK_ELEMENTS', 5)
    # Equal up to the rounding of the vectorised and the scalar code of
    # the transcendental functions, which blocks share out differently.
    torch.testing.assert_close(run(), whole, rtol=1e-6, atol=1e-7)
    assert whole.dtype == torch.float32


@pytest.mark.parametrize('shape,share', [((7, 13), 0.1), ((1, 5), 0.5),
                                         ((64, 80), 0.0), ((3, 8), 1.0)])
def test_packed_nonzero_is_nonzero(shape, share, monkeypatch):
    from mmlml.models.losses import terms
    monkeypatch.setattr(terms, 'BLOCK_ELEMENTS', 1)  # packed from 1 entry
    gen = torch.Generator().manual_seed(5)
    mask = (torch.rand(shape, generator=gen) < share).float()
    mask[mask.bool() & (torch.rand(shape, generator=gen) < 0.5)] = -1
    for a, b in zip(terms._nonzero(mask), mask.nonzero(as_tuple=True)):
        assert torch.equal(a, b)


def test_derivative_scaled_in_place_only_when_the_graph_is_freed():
    """The saved derivative is scaled in place by the backward pass only
    when the graph is freed: a retained graph gives the same gradient
    again, and the element-wise values handed out stay unchanged."""
    import mmlml  # noqa: F401
    from mmlml.registry import MODELS
    loss = MODELS.build(dict(type='PartialFocalLoss', reduction='none'))
    x = _logits_with_extremes((4, 6), seed=6).requires_grad_(True)
    value = loss(x, torch.tensor([0, 1, 2, 3]))
    kept = value.detach().clone()
    (first, ) = torch.autograd.grad(value.sum() * 3, x, retain_graph=True)
    (second, ) = torch.autograd.grad(value.sum() * 3, x, retain_graph=True)
    (third, ) = torch.autograd.grad(value.sum() * 3, x)
    assert torch.equal(first, second) and torch.equal(first, third)
    assert torch.equal(value.detach(), kept)
    y = x.detach().clone().requires_grad_(True)
    (loss(y, torch.tensor([0, 1, 2, 3])).sum() * 3).backward()
    assert torch.equal(y.grad, first)


def test_probability_above_selects_splc_pseudo_positives():
    """The predicate SPLC and LASD evaluate by blocks selects the
    unannotated labels of ``splc_pseudo_positives`` (observed negatives
    never, whatever their probability; observed positives take their own
    term)."""
    from mmlml.models.losses import splc_pseudo_positives, terms
    torch.manual_seed(3)
    x = torch.randn(16, 40) * 3
    target = torch.randint(-1, 2, (16, 40)).float()
    for tau in (0.0, 0.3, 0.9, 1.0):
        mask = terms.probability_above(tau)(terms.Logits(x, labels=target))
        expected = splc_pseudo_positives(x, target, tau)
        unannotated = target == 0
        assert torch.equal(mask.bool()[unannotated], expected[unannotated])
        assert not mask.bool()[target == -1].any()


def test_soft_bce_with_a_tensor_target_is_exact_at_zero_and_one():
    """The tensor form max(x, 0) - s x + log(1 + exp(-|x|)) is -log(1 - p)
    for s = 0 and -log p for s = 1 to the precision of softplus, also for
    confident logits (no cancellation), and its slope is p - s."""
    import functools

    import torch.nn.functional as F

    from mmlml.models.losses import terms
    x = torch.tensor([-100., -30., -8., -0.5, 0., 0.5, 8., 30., 100.])
    for s, expected in ((0.0, F.softplus(x)), (1.0, F.softplus(-x))):
        term = functools.partial(
            terms.soft_bce_value_grad, soft_target=torch.full_like(x, s))
        value, slope = term(terms.Logits(x), grad=True)
        torch.testing.assert_close(value, expected, rtol=1e-6, atol=1e-30)
        torch.testing.assert_close(slope, torch.sigmoid(x) - s)
