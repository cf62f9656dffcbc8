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


def test_soft_bce_is_exact_at_zero_and_one():
    """The soft-target BCE is -log(1 - p) for s = 0 and -log p for s = 1 to
    the precision of softplus, also for confident logits (no
    cancellation), and its slope is p - s."""
    import torch.nn.functional as F

    from mmlml.models.losses.utils import soft_bce
    x = torch.tensor([-100., -30., -8., -0.5, 0., 0.5, 8., 30., 100.],
                     requires_grad=True)
    for s, expected in ((0.0, F.softplus(x)), (1.0, F.softplus(-x))):
        value = soft_bce(x, torch.full_like(x, s))
        torch.testing.assert_close(value, expected, rtol=1e-6, atol=1e-30)
        (slope, ) = torch.autograd.grad(value.sum(), x)
        torch.testing.assert_close(slope, torch.sigmoid(x) - s)


def test_stateful_losses_get_a_representative_state():
    """VLPL without a pseudo-label on the plotted label is EM on it; with
    the pseudo-positive 1 it is the weighted, smoothed cross-entropy
    ``beta_pos (p - (1 - eps))``; the legend names the state."""
    vlpl = dict(type='VLPLLoss', alpha=0.2, beta_pos=0.7, smoothing=0.1)
    em = lg.loss_gradient(
        lg.build_loss(dict(type='EMLoss', alpha=0.2)), PROBS, 0)
    curves, messages = lg.compute_curves([lg.CurveSpec(vlpl)], ('negative', ),
                                         PROBS)
    assert not messages
    np.testing.assert_allclose(curves[0].grad, em, rtol=1e-5, atol=1e-7)
    assert curves[0].notes == ['state: no pseudo-label']
    settings = lg.EvalSettings(pseudo_label=1.0)
    (curve, ), _ = lg.compute_curves([lg.CurveSpec(vlpl)], ('negative', ),
                                     PROBS, settings)
    np.testing.assert_allclose(
        curve.grad, 0.7 * (PROBS - 0.9), rtol=1e-5, atol=1e-6)
    assert curve.label() == ('VLPLLoss(alpha=0.2, beta_pos=0.7, '
                             'smoothing=0.1) [state: pseudo-label 1]')


def test_every_stateful_method_has_a_curve():
    """CRISP (prior estimated: the unannotated label's gradient is
    ``p (1 - p)``, the mean prediction above the prior), EM + APL, LL-Cp,
    GPR, OPML-SP and ROLE: each drawn with the state named."""
    specs = [
        lg.CurveSpec(dict(type='CRISPLoss')),
        lg.CurveSpec(dict(type='EMAPLLoss')),
        lg.CurveSpec(dict(type='LargeLoss', mode='permanent')),
        lg.CurveSpec(dict(type='GPRLoss', expected_positives=2.9)),
        lg.CurveSpec(dict(type='OPMLSPLoss')),
        lg.CurveSpec(dict(type='ROLELoss', expected_positives=2.9)),
    ]
    settings = lg.EvalSettings(batch_context=4, epoch=0, max_epochs=10)
    curves, messages = lg.compute_curves(specs, ('negative', ), PROBS,
                                         settings)
    assert not messages
    assert len(curves) == len(specs)
    np.testing.assert_allclose(
        curves[0].grad, PROBS * (1 - PROBS), rtol=1e-5, atol=1e-7)
    notes = [[n for n in c.notes if n.startswith('state:')] for c in curves]
    assert notes == [['state: prior 0.1, positive rate 0.05, prior estimated'],
                     ['state: no pseudo-label'], ['state: no pseudo-label'],
                     ['state: no pseudo-label'],
                     ['state: no pseudo-label, class AP 0.5'],
                     ['state: label estimates 0.5']]
    assert all(np.all(np.isfinite(c.grad)) for c in curves)
    with pytest.raises(ValueError, match='pseudo_label'):
        lg.EvalSettings(pseudo_label=2)
    with pytest.raises(ValueError, match='class_prior'):
        lg.EvalSettings(class_prior=0)


def test_cli_plots_a_stateful_config(tmp_path, capsys):
    """The CRISP and VLPL demo configs, whose losses read the state that
    their hooks keep (CRISP's absolute value couples the batch: context
    samples at p = 0.5, above the prior)."""
    for name in ('crisp', 'vlpl'):
        table = tmp_path / f'{name}.csv'
        assert plot_loss_gradients.main([
            '--config',
            osp.join(ROOT, 'configs', 'demo', f'{name}.py'), '--csv',
            str(table), '--points', '5', '--pseudo-label', '1',
            '--class-prior', '0.2', '--batch-context', '2'
        ]) == 0
        labels = {r['label'] for r in read_csv(table)}
        assert all('[state: ' in label for label in labels), labels
    assert 'pseudo-label 1]' in ' '.join(labels)
    assert plot_loss_gradients.main([
        '--losses', 'VLPLLoss', '--pseudo-label', '3', '--csv',
        str(tmp_path / 'x.csv')
    ]) == 2
    assert 'pseudo_label must lie in [0, 1]' in capsys.readouterr().err


def test_legends_stay_inside_the_figure():
    """Long labels (a stateful loss's state, a config's name) are wrapped
    and every panel's legend is drawn inside the figure, below its
    panel, never over the curves' panel or past the edge."""
    specs = [
        lg.CurveSpec(dict(type='HillLoss')),
        lg.CurveSpec(dict(type='CRISPLoss'))
    ]
    specs[0].label = ('a_config_with_a_long_name_for_its_experiment.py: '
                      'HillLoss(lamb=1.5, margin=1.0, gamma=2.0)')
    curves, _ = lg.compute_curves(
        specs, ('negative', 'positive'),
        lg.probability_grid(10, (0.01, 0.99), 'prob'), lg.EvalSettings())
    fig = plot_loss_gradients.figure(curves, 'signed', 'prob', 'panels',
                                     'title')
    fig.canvas.draw()
    box = fig.bbox
    for ax in fig.axes:
        legend = ax.get_legend().get_window_extent()
        assert box.x0 <= legend.x0 and legend.x1 <= box.x1
        assert box.y0 <= legend.y0 and legend.y1 <= box.y1
        assert legend.y1 <= ax.get_window_extent().y0  # below the panel
