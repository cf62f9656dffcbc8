"""LargeLossCorrectionHook: its selection and accumulation against the
official LL-Cp code (with its identity test fixed), a short training, the
fail-fast errors and the losses it refuses."""
import math
from types import SimpleNamespace

import pytest
import torch
import torch.nn.functional as F
from loss_checks import build
from stateful_methods import (METHODS, HandOver, assert_fails_before_training,
                              method_runner)

from mmlml.hooks import LabelStoreHook, LargeLossCorrectionHook
from mmlml.models.heads import LossInputs
from mmlml.models.losses import num_large_losses
from mmlml.structures import LabelStore


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
