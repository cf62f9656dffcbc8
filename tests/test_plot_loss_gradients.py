"""Tests of tools/analysis/plot_loss_gradients.py."""
import csv
import importlib.util
import os.path as osp

import numpy as np
import pytest
import torch
import torch.nn as nn
from conftest import ROOT
from mmengine.logging import MessageHub

_SPEC = importlib.util.spec_from_file_location(
    'plot_loss_gradients',
    osp.join(ROOT, 'tools', 'analysis', 'plot_loss_gradients.py'))
plg = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(plg)

PROBS = np.linspace(0.01, 0.99, 33)


class BatchMeanLoss(nn.Module):
    """A loss with a term on the batch mean: not element-wise."""

    def forward(self,
                cls_score,
                target,
                weight=None,
                avg_factor=None,
                reduction_override=None):
        prob = cls_score.sigmoid()
        return prob.sum() + prob.mean(0).sum()**2


class SoftmaxLoss(nn.Module):
    """Couples the classes of a sample (log-sum-exp over classes)."""

    def forward(self,
                cls_score,
                target,
                weight=None,
                avg_factor=None,
                reduction_override=None):
        return torch.logsumexp(cls_score, dim=1).sum()


class EpochScaledLoss(nn.Module):
    """``epoch / max_epochs * x``: the gradient is the training progress."""

    def __init__(self):
        super().__init__()
        self.progress = None

    def set_epoch(self, epoch, max_epochs=None):
        self.progress = epoch / max_epochs

    def forward(self,
                cls_score,
                target,
                weight=None,
                avg_factor=None,
                reduction_override=None):
        return (self.progress * cls_score).sum()


@pytest.mark.parametrize('kind,value', [('negative', 0), ('positive', 1),
                                        ('observed_negative', -1)])
def test_sigmoid_cross_entropy_gradient_is_p_minus_y(kind, value):
    loss = plg.build_loss('CrossEntropyLoss(use_sigmoid=True)')
    grad = plg.loss_gradient(loss, PROBS, value)
    # MMPretrain's losses know no -1: an observed negative is a 0.
    label = 1.0 if value == 1 else 0.0
    np.testing.assert_allclose(grad, PROBS - label, atol=1e-6)


@pytest.mark.parametrize('value', [0, 1, -1])
def test_an_loss_gradient_is_p_minus_y(value):
    if plg.MODELS.get('ANLoss') is None:
        pytest.skip('ANLoss is not registered')
    grad = plg.loss_gradient(plg.build_loss('ANLoss'), PROBS, value)
    np.testing.assert_allclose(
        grad, PROBS - (1.0 if value == 1 else 0.0), atol=1e-6)


def test_loss_weight_and_context_do_not_change_elementwise_losses():
    loss = plg.build_loss('CrossEntropyLoss(use_sigmoid=True, '
                          'loss_weight=2.0)')
    grad = plg.loss_gradient(loss, PROBS, 0, num_classes=3, context_logit=4.0)
    np.testing.assert_allclose(grad, 2 * PROBS, atol=1e-6)
    assert plg.gradient_coupling(loss, PROBS, 0) == dict(
        batch=False, classes=False)


def test_batch_coupled_loss_is_refused_without_context():
    loss = BatchMeanLoss()
    assert plg.gradient_coupling(loss, PROBS, 0)['batch']
    with pytest.raises(plg.NotElementwiseError, match='batch'):
        plg.loss_gradient(loss, PROBS, 0)
    # In a batch of 4 with 3 context samples (2 classes, all logits 0 but
    # the grid's): L = sum p + (sum_c mean_n p_nc)^2.
    grad = plg.loss_gradient(
        loss, PROBS, 0, batch_context=3, num_classes=2, context_logit=0.0)
    dp = PROBS * (1 - PROBS)
    total = (PROBS + 3 * 0.5) / 4 + 0.5
    np.testing.assert_allclose(grad, dp + 2 * total * dp / 4, atol=1e-6)


def test_class_coupled_loss_uses_the_context():
    loss = SoftmaxLoss()
    coupling = plg.gradient_coupling(loss, PROBS, 0, num_classes=3)
    assert coupling == dict(batch=False, classes=True)
    grad = plg.loss_gradient(loss, PROBS, 0, num_classes=3)
    odds = PROBS / (1 - PROBS)  # e^x; the two context logits are 0
    np.testing.assert_allclose(grad, odds / (odds + 2), atol=1e-6)


def test_epoch_is_passed_to_set_epoch_of_a_copy():
    loss = EpochScaledLoss()
    grad = plg.loss_gradient(loss, PROBS, 0, epoch=3, max_epochs=12)
    np.testing.assert_allclose(grad, 0.25)
    assert loss.progress is None  # the original is untouched


def test_training_progress_restores_the_message_hub():
    info = MessageHub.get_current_instance().runtime_info
    before = dict(info)
    with plg.training_progress(4, 9):
        assert info['epoch'] == 4 and info['max_epochs'] == 9
    assert dict(info) == before


def test_parse_loss_spec_forms():
    spec = plg.parse_loss_spec('FocalMarginLoss(margin=0.5, gamma=2)')
    assert spec.cfg == dict(type='FocalMarginLoss', margin=0.5, gamma=2)
    assert spec.describe() == 'FocalMarginLoss(margin=0.5, gamma=2)'
    spec = plg.parse_loss_spec('GRLoss(beta=(0, 2, -2, -2))@3/8')
    assert spec.cfg['beta'] == (0, 2, -2, -2)
    assert (spec.epoch, spec.max_epochs) == (3, 8)
    spec = plg.parse_loss_spec(
        "{'type': 'WANLoss', 'neg_weight': 0.1, '_label': 'DW', "
        "'_targets': 'negative'}")
    assert spec.cfg == dict(type='WANLoss', neg_weight=0.1)
    assert spec.display_name() == 'DW' and spec.targets == ('negative', )
    spec = plg.parse_loss_spec('{"type": "HillLoss", "margin": 1.0}@2')
    assert spec.cfg['margin'] == 1.0 and spec.epoch == 2
    for bad in ('HillLoss(0.5)', "HillLoss(margin=__import__('os'))",
                'hill loss', '{"margin": 1}', 'HillLoss(_colour=1)'):
        with pytest.raises(plg.LossSpecError):
            plg.parse_loss_spec(bad)


def test_unknown_loss_gives_a_clear_error(tmp_path, capsys):
    with pytest.raises(plg.UnknownLossError) as info:
        plg.build_loss('HilLoss')
    message = str(info.value)
    assert "unknown loss 'HilLoss'" in message
    assert 'Registered losses' in message and 'CrossEntropyLoss' in message
    out = tmp_path / 'grad.png'
    assert plg.main(['--losses', 'NoSuchLoss', '--out', str(out)]) == 2
    assert "unknown loss 'NoSuchLoss'" in capsys.readouterr().err
    assert not out.exists()


def test_cli_writes_png_and_csv(tmp_path):
    png, table = tmp_path / 'out' / 'grad.png', tmp_path / 'grad.csv'
    status = plg.main([
        '--losses', 'CrossEntropyLoss(use_sigmoid=True)',
        'AsymmetricLoss(gamma_neg=4.0, clip=0.05)', '--out',
        str(png), '--csv',
        str(table), '--points', '20', '--sign', 'magnitude'
    ])
    assert status == 0
    assert png.read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'
    with open(table) as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 2 * 2 * 20
    bce_pos = [
        r for r in rows if r['target'] == 'positive'
        and r['loss'] == 'CrossEntropyLoss(use_sigmoid=True)'
    ]
    for row in bce_pos:
        p, grad = float(row['p']), float(row['dL_dx'])
        assert grad == pytest.approx(p - 1, abs=1e-5)
        assert float(row['plotted']) == pytest.approx(1 - p, abs=1e-5)


@pytest.mark.parametrize('preset', sorted(plg.PRESETS))
def test_presets_run(preset, tmp_path):
    out = tmp_path / f'{preset}.png'
    assert plg.main(['--preset', preset, '--out',
                     str(out), '--points', '30']) == 0
    assert out.stat().st_size > 0
