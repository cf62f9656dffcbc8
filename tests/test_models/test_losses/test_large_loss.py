"""LL-Cp: LargeLoss(mode='permanent') against hand values and its
pseudo-label checks (LargeLossCorrectionHook, which keeps the corrections,
is tested in ``tests/test_hooks/test_large_loss_correction_hook.py``)."""
import pytest
import torch
import torch.nn.functional as F
from conftest import ROOT  # noqa: F401
from loss_checks import build

from mmlml.models.losses import large_loss, num_large_losses

NAN = float('nan')


def sp(x):
    return F.softplus(torch.as_tensor(x))


def test_num_large_losses_permanent_is_fixed_per_batch():
    assert num_large_losses(640, 0, 0.001, 'permanent') == 0
    for epoch in (1, 2, 9):
        assert num_large_losses(640, epoch, 0.001, 'permanent') == 1
    assert num_large_losses(16 * 80, 3, 0.002, 'permanent') == 3  # 2.56
    assert num_large_losses(1000, 5, 0.002, 'permanent') == 2  # exact
    assert num_large_losses(1000, 5, 0.002, 'temporary') == 10
    with pytest.raises(ValueError, match='mode'):
        num_large_losses(1000, 1, 0.002, 'forever')


def test_permanent_hand_values():
    """k = ceil(8 * 0.25) = 2 largest -log(1 - p) among the unannotated
    entries not corrected yet are flipped; a correction is a positive."""
    x = torch.tensor([[0.0, 1.0, 2.0, 3.0], [-1.0, 0.5, 4.0, -2.0]])
    t = torch.tensor([[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, -1.0]])
    pseudo = torch.full((2, 4), NAN)
    pseudo[0, 2] = 1.0  # corrected earlier: positive, no candidate
    loss = build(dict(type='LargeLoss', mode='permanent', delta_rel=0.25))
    assert loss.state_inputs == ('pseudo_labels', )
    loss.set_epoch(1)
    expected = torch.stack([
        torch.stack([sp(-0.0), sp(1.0), sp(-2.0),
                     sp(-3.0)]),
        torch.stack([sp(-1.0), sp(-0.5),
                     sp(-4.0), sp(-2.0)]),
    ])
    torch.testing.assert_close(
        loss(x, t, pseudo_labels=pseudo, reduction_override='none'), expected)
    # First epoch: no new flip, the earlier correction still holds.
    loss.set_epoch(0)
    expected[0, 3], expected[1, 2] = sp(3.0), sp(4.0)
    torch.testing.assert_close(
        loss(x, t, pseudo_labels=pseudo, reduction_override='none'), expected)
    # The other modes read no state.
    assert build(dict(type='LargeLoss', mode='temporary')).state_inputs == ()


def test_functional_needs_pseudo_labels_in_permanent_mode_only():
    x, t = torch.zeros(2, 3), torch.tensor([0, 1])
    with pytest.raises(ValueError, match='required'):
        large_loss(x, t, 1, 'permanent')
    with pytest.raises(ValueError, match='refused'):
        large_loss(x, t, 1, 'temporary', pseudo_labels=torch.zeros(2, 3))
    with pytest.raises(ValueError, match=r'\[0, 1\]'):
        large_loss(x, t, 1, 'permanent', pseudo_labels=torch.full((2, 3), 2.))
