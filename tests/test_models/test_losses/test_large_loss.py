"""LL-Cp: LargeLoss(mode='permanent') against hand values and the official
code (with its identity test fixed), LargeLossCorrectionHook's selection and
accumulation, a short training, and the fail-fast errors."""
import math
from types import SimpleNamespace

import pytest
import torch
import torch.nn.functional as F
from conftest import ROOT  # noqa: F401
from loss_checks import build
from stateful_methods import (METHODS, assert_fails_before_training,
                              method_runner)

from mmlml.hooks import LabelStoreHook, LargeLossCorrectionHook
from mmlml.models.heads import LossInputs
from mmlml.models.losses import large_loss, num_large_losses
from mmlml.structures import LabelStore

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


def official_ll_cp(logits, label_vec, delta_rel, first_epoch):
    """The official ``compute_batch_loss`` (LargeLossMatters, losses.py) for
    LL-Cp with its ``is 'LL-Cp'`` read as ``== 'LL-Cp'``. Returns the loss
    (mean over N x C), the entries its loss flips and the entries the
    official training loop keeps (``correction_idx``)."""
    loss_matrix = F.binary_cross_entropy_with_logits(
        logits, label_vec.clip(0), reduction='none')
    corrected_loss_matrix = F.binary_cross_entropy_with_logits(
        logits, torch.logical_not(label_vec.clip(0)).float(), reduction='none')
    none = torch.zeros_like(logits, dtype=torch.bool)
    if first_epoch:
        return loss_matrix.mean(), none, none
    batch_size, num_classes = logits.shape
    k = math.ceil(batch_size * num_classes * delta_rel)
    unobserved_loss = (label_vec == 0) * loss_matrix
    topk_lossvalue = torch.topk(unobserved_loss.flatten(), k).values[-1]
    kept = unobserved_loss > topk_lossvalue
    flipped = ~(unobserved_loss < topk_lossvalue)
    final = torch.where(unobserved_loss < topk_lossvalue, loss_matrix,
                        corrected_loss_matrix)
    return final.mean(), flipped, kept


class HandOver:
    """A head's side of the loss-input hand-over (``pop_loss_inputs``)."""

    inputs = None

    def pop_loss_inputs(self):
        inputs, self.inputs = self.inputs, None
        return inputs


def test_hook_matches_intended_official_code():
    """Three epochs over 36 samples in batches of 8 (the last of 4): at
    every batch the loss equals the official one for the same labels, the
    hook keeps exactly the entries the loss flipped (the official loop
    keeps those strictly above the k-th largest loss, one fewer), and the
    corrections accumulate in the store."""
    num, classes, delta = 36, 5, 0.1
    gen = torch.Generator().manual_seed(0)
    target = torch.zeros(num, classes)
    target[torch.arange(num), torch.arange(num) % classes] = 1
    target[:3, 4] = -1  # observed negatives are never corrected
    loss = build(
        dict(
            type='LargeLoss',
            mode='permanent',
            delta_rel=delta,
            loss_weight=1 / classes))
    hook = LargeLossCorrectionHook()
    hook.store = LabelStore(num, classes)
    hook.head = HandOver()
    hook.loss = loss
    expected_total = 0
    for epoch in range(3):
        loss.set_epoch(epoch)
        for start in range(0, num, 8):
            idx = torch.arange(start, min(start + 8, num))
            x = torch.randn(len(idx), classes, generator=gen) * 3
            pseudo = hook.store.lookup(idx)
            # The official label matrix holds the corrections as 1s.
            label_vec = torch.where(torch.isnan(pseudo), target[idx], 1.0)
            ours = loss(
                x, target[idx], avg_factor=len(idx), pseudo_labels=pseudo)
            official, flipped, kept = official_ll_cp(x, label_vec, delta,
                                                     epoch == 0)
            torch.testing.assert_close(ours, official)
            hook.head.inputs = LossInputs(idx, x, target[idx])
            before = hook.store.pseudo_label_mask()[idx]
            hook.after_train_iter(None, 0)
            new = hook.store.pseudo_label_mask()[idx] & ~before
            assert torch.equal(new, flipped)
            assert torch.equal(new & kept, kept)
            k = num_large_losses(x.numel(), epoch, delta, 'permanent')
            assert int(new.sum()) == k == int(kept.sum()) + (k > 0)
            expected_total += k
    assert hook.store.num_pseudo_labels == expected_total == 2 * (4 * 4 + 2)
    labelled = hook.store.pseudo_label_mask()
    assert (target[labelled] == 0).all()
    assert (hook.store.lookup(torch.arange(num))[labelled] == 1).all()


def runner_for(tiny_demo_config, tmp_path, model, hooks):
    return method_runner(
        tiny_demo_config, tmp_path, model, hooks, 'll_cp', max_epochs=2)


def test_training_fills_the_store(tiny_demo_config, tmp_path):
    """Two epochs of 4 batches (16, 16, 16, 3 images x 20 classes): the
    second corrects ceil(320 * 0.01) = 4 entries of each full batch and 1
    of the last, for good."""
    runner = runner_for(tiny_demo_config, tmp_path, METHODS['ll_cp']['model'],
                        METHODS['ll_cp']['custom_hooks'])
    runner.train()
    store = runner.model.head.label_store
    assert store.num_pseudo_labels == 3 * 4 + 1
    hook = next(
        h for h in runner.hooks if isinstance(h, LargeLossCorrectionHook))
    labelled = store.pseudo_label_mask().numpy()
    assert (hook.dataset.observed_labels[labelled] == 0).all()


LL_CP = METHODS['ll_cp']['model']['head']
HOOK = METHODS['ll_cp']['custom_hooks']


@pytest.mark.parametrize('model, hooks, error, match', [
    (dict(head=LL_CP), [], RuntimeError, 'LargeLossCorrectionHook'),
    (dict(head=dict(LL_CP, loss=dict(LL_CP['loss'], mode='temporary'))), HOOK,
     TypeError, 'does not read'),
    (dict(head=dict(loss=LL_CP['loss'])), HOOK, TypeError,
     'PartialLabelLinearClsHead'),
])
def test_fail_before_training(tiny_demo_config, tmp_path, model, hooks, error,
                              match):
    assert_fails_before_training(
        runner_for(tiny_demo_config, tmp_path, model, hooks), error, match)


@pytest.mark.parametrize('loss', [
    dict(type='EMAPLLoss'),
    dict(
        type='LossSum',
        losses=[dict(type='EMAPLLoss'),
                dict(type='LargeLoss')]),
])
def test_hook_refuses_other_losses_reading_pseudo_labels(monkeypatch, loss):
    """Another loss that reads pseudo-labels passes the base class's check
    (the runner tests above), but not the hook's own."""
    monkeypatch.setattr(LabelStoreHook, 'before_train', lambda *args: None)
    hook = LargeLossCorrectionHook()
    hook.head = SimpleNamespace(loss_module=build(loss))
    with pytest.raises(TypeError, match="mode='permanent'"):
        hook.before_train(None)
