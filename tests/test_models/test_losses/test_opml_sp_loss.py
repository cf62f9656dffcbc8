"""OPML-SP: OPMLSPLoss against hand values and its class-AP checks
(ClassAPCorrectionHook, which measures the AP and corrects the labels, is
tested in ``tests/test_hooks/test_class_ap_correction_hook.py``)."""
import math

import pytest
import torch
from conftest import ROOT  # noqa: F401
from loss_checks import build, check_gradcheck, random_logits

from mmlml.models.losses import opml_loss, opml_sp_loss, opml_sp_targets

NAN = float('nan')


def sigmoid(x):
    return 1 / (1 + math.exp(-x))


def test_hand_values():
    """t = 1 for the observed positive and the correction, AP_c^rho * p for
    the unobserved entry, 0 for the observed negative."""
    x = torch.tensor([[0.0, 1.0, 2.0, 3.0]])
    target = torch.tensor([[1.0, 0.0, 0.0, -1.0]])
    pseudo = torch.tensor([[NAN, 1.0, NAN, NAN]])
    class_ap = torch.tensor([0.5, 0.25, 0.81, 1.0])
    t2 = 0.81**0.5 * sigmoid(2.0)
    torch.testing.assert_close(
        opml_sp_targets(x, target, pseudo, class_ap, rho=0.5),
        torch.tensor([[1.0, 1.0, t2, 0.0]]))
    expected = (
        math.log(0.5 + 1 + math.exp(-1) + t2 * math.exp(-2)) +
        math.log(2.0 + (1 - t2) * math.exp(2) + math.exp(3)))
    loss = build(dict(type='OPMLSPLoss', a=0.5, b=2.0, rho=0.5))
    assert loss.state_inputs == ('pseudo_labels', 'class_ap')
    value = loss(
        x,
        target,
        reduction_override='none',
        pseudo_labels=pseudo,
        class_ap=class_ap)
    torch.testing.assert_close(value, torch.tensor([expected]))
    torch.testing.assert_close(
        opml_sp_loss(
            x,
            target,
            pseudo,
            class_ap,
            a=0.5,
            b=2.0,
            rho=0.5,
            reduction='none'), value)


def test_special_cases_and_gradient():
    """AP = 0 and no correction is plain OPML; the soft targets carry no
    gradient."""
    x = random_logits((5, 6), 2.0, seed=2, dtype=torch.float64)
    target = torch.tensor([0, 1, 2, 3, 4])
    none = torch.full((5, 6), NAN)
    zero_ap = torch.zeros(6)
    torch.testing.assert_close(
        opml_sp_loss(x, target, none, zero_ap, a=0.7, reduction='none'),
        opml_loss(x, target, a=0.7, reduction='none'))
    pseudo = none.clone()
    pseudo[0, 3] = 1.0
    dense = torch.nn.functional.one_hot(target, 6).double()
    dense[0, 3] = 1.0
    torch.testing.assert_close(
        opml_sp_loss(x, target, pseudo, zero_ap, reduction='none'),
        opml_loss(x, dense, reduction='none'))
    loss = build(dict(type='OPMLSPLoss', rho=2.0))
    check_gradcheck(
        lambda *a, **k: loss(*a, **k, pseudo_labels=pseudo, class_ap=zero_ap),
        x, torch.nn.functional.one_hot(target, 6))
    # With eps > 0 the gradient is the one of fixed soft targets.
    class_ap = torch.linspace(0.2, 1.0, 6)
    xs = [x.clone().requires_grad_(True) for _ in range(2)]
    opml_sp_loss(xs[0], target, pseudo, class_ap, rho=2.0).backward()
    observed = torch.nn.functional.one_hot(target, 6).double()
    soft = opml_sp_targets(x, observed, pseudo, class_ap, 2.0)
    opml_loss(xs[1], soft).backward()
    torch.testing.assert_close(xs[0].grad, xs[1].grad)


def test_bad_class_ap():
    x, target = torch.zeros(2, 3), torch.tensor([0, 1])
    none = torch.full((2, 3), NAN)
    with pytest.raises(ValueError, match='shape'):
        opml_sp_loss(x, target, none, torch.zeros(4))
    with pytest.raises(ValueError, match=r'\[0, 1\]'):
        opml_sp_loss(x, target, none, torch.full((3, ), 1.5))
    with pytest.raises(ValueError, match='rho'):
        build(dict(type='OPMLSPLoss', rho=-1.0))
