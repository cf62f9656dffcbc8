"""ClassAPCorrectionHook: the per-class AP and the highest unobserved
scores, the AP-based correction on a small store, a short training, the
fail-fast errors, its arguments, and a warm-up that leaves no epoch
trained on corrected labels."""
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from conftest import case, train_tiny
from mmpretrain.evaluation.metrics.multi_label import _average_precision
from stateful_methods import (METHODS, assert_fails_before_training,
                              method_runner)

from mmlml.hooks import ClassAPCorrectionHook, LabelStoreHook
from mmlml.hooks.class_ap_correction_hook import (average_precision_per_class,
                                                  highest_per_class)
from mmlml.structures import LabelStore

NAN = float('nan')

#: Refused arguments (the case ids follow
#: ``tests/test_datasets/test_dataset_bad_input.py``).
ARGUMENT_CASES = [
    case('class-ap-hook-warmup-bad',
         lambda t: ClassAPCorrectionHook(warmup_epochs=-1), ValueError,
         r'warmup_epochs must be an integer >= 1, got -1'),
    case('class-ap-hook-delta-bad', lambda t: ClassAPCorrectionHook(delta=NAN),
         ValueError, r'delta must be a finite real number, got nan', 'nan'),
    case('class-ap-hook-delta-bad',
         lambda t: ClassAPCorrectionHook(delta=-0.1), ValueError,
         r'delta must lie in \[0, inf\], got -0\.1', -0.1),
]


@pytest.mark.parametrize('make, error, match', ARGUMENT_CASES)
def test_arguments_refused(make, error, match, tmp_path):
    with pytest.raises(error, match=match):
        make(tmp_path)


def test_numpy_arguments_accepted():
    """hook-numpy-arguments: numpy numbers are numbers."""
    assert ClassAPCorrectionHook(warmup_epochs=np.int32(2)).warmup_epochs == 2


def test_warmup_ge_max_epochs_refused(tiny_train):
    """class-ap-hook-warmup-ge-max-epochs: a warm-up as long as the
    training refuses to start."""
    with pytest.raises(
            ValueError,
            match=r'ClassAPCorrectionHook: warmup_epochs=3 leaves no epoch '
            r'trained on corrected labels in 2 epochs'):
        train_tiny(
            tiny_train,
            dict(type='LossSum', losses=[dict(type='OPMLSPLoss', rho=0.5)]),
            dict(type='ClassAPCorrectionHook', warmup_epochs=3))


def test_average_precision():
    # Ties share the precision at the end of their group, in any order.
    scores = torch.tensor([[0.9, 0.5, 0.5, 0.1], [0.5, 0.9, 0.5, 0.1]]).T
    positives = torch.tensor([[1, 0, 1, 0], [0, 1, 1, 0]], dtype=bool).T
    torch.testing.assert_close(
        average_precision_per_class(scores, positives),
        torch.tensor([5 / 6, 5 / 6]))
    # Without ties: MMPretrain's AP over the scored entries; a class
    # without a scored positive is NaN.
    gen = torch.Generator().manual_seed(0)
    scores = torch.rand(60, 5, generator=gen)
    positives = torch.rand(60, 5, generator=gen) < 0.3
    scores[torch.rand(60, 5, generator=gen) < 0.2] = NAN
    positives[:, 4] = False
    got = average_precision_per_class(scores, positives)
    for c in range(4):
        scored = ~torch.isnan(scores[:, c])
        expected = _average_precision(scores[scored, c], positives[scored,
                                                                   c].long())
        torch.testing.assert_close(got[c], expected.float())
    assert torch.isnan(got[4])


def test_highest_per_class():
    scores = torch.tensor([[0.1, 0.9], [0.8, NAN], [0.8, 0.3], [0.5, 0.7]])
    candidates = torch.tensor([[1, 1], [1, 1], [1, 1], [0, 1]], dtype=bool)
    rows, classes = highest_per_class(scores, candidates, torch.tensor([2, 5]))
    assert sorted(zip(classes.tolist(), rows.tolist())) == [(0, 1), (0, 2),
                                                            (1, 0), (1, 2),
                                                            (1, 3)]


def small_hook(chunk_observed):
    """8 samples x 3 classes; class 2 has no observed positive."""
    hook = ClassAPCorrectionHook(warmup_epochs=1, delta=4.0)
    hook.dataset = SimpleNamespace(observed_labels=chunk_observed)
    hook.store = LabelStore(8, 3)
    hook.store.set_class_state('class_ap', torch.tensor([0.0, 0.0, 0.3]))
    hook.num_positives = torch.from_numpy((chunk_observed == 1).sum(0))
    return hook


def test_ap_and_correction_on_a_small_store():
    observed = np.zeros((8, 3), dtype=np.int8)
    observed[[0, 1], 0] = 1
    observed[2, 0] = -1  # scored, a negative of the AP, never corrected
    observed[[2, 3, 4, 5], 1] = 1
    # Exact in float16; class 1 ties rows 2, 3 (positive) and 6 at 0.5.
    scores = torch.tensor(
        [[15, 8, 14, 4, 2, 1, 12, 6], [1, 2, 8, 8, 12, 14, 8, 4],
         [3, 5, 7, 9, 11, 13, 15, 1]],
        dtype=torch.float32).T / 16
    for chunk in (1, 64):
        hook = small_hook(observed)
        hook.store.record_scores(torch.arange(8), scores)
        # Class 0: positives ranked 1 and 4, AP (1 + 2/4) / 2 = 0.75,
        # k = floor(4 * 0.25 * 2) = 2: rows 6 and 7 (row 2 is observed).
        # Class 1: AP (1 + 1 + 4/5 + 4/5) / 4 = 0.9, k = floor(1.6) = 1.
        # Class 2: no positive, AP kept, k = 0.
        assert hook.update_labels(chunk=chunk) == 3
        torch.testing.assert_close(hook.store.class_state['class_ap'],
                                   torch.tensor([0.75, 0.9, 0.3]))
        labelled = hook.store.pseudo_label_mask()
        assert labelled.nonzero().tolist() == [[6, 0], [6, 1], [7, 0]]
        # Next epoch: the corrections are left out of the AP and stay.
        hook.store.reset_scores()
        hook.store.record_scores(torch.arange(8), scores)
        # Class 0: positives ranked 1 and 3: AP 5/6, k = floor(4/3) = 1.
        # Class 1: AP 1, k = 0.
        assert hook.update_labels(chunk=chunk) == 1
        torch.testing.assert_close(hook.store.class_state['class_ap'],
                                   torch.tensor([5 / 6, 1.0, 0.3]))
        assert hook.store.pseudo_label_mask().nonzero().tolist() == [[3, 0],
                                                                     [6, 0],
                                                                     [6, 1],
                                                                     [7, 0]]
        assert (hook.store.lookup(torch.arange(8))[labelled] == 1).all()
        # Without correction only the AP changes.
        hook.store.reset_scores()
        hook.store.record_scores(torch.arange(8), scores)
        assert hook.update_labels(correct=False, chunk=chunk) == 0
        assert hook.store.num_pseudo_labels == 4


def runner_for(tiny_demo_config, tmp_path, model, hooks):
    return method_runner(
        tiny_demo_config, tmp_path, model, hooks, 'opml_sp', max_epochs=2)


def test_training_fills_the_store(tiny_demo_config, tmp_path):
    """Two epochs with warm-up 1 and delta 1: the AP is measured after
    each epoch and unobserved entries are corrected after both."""
    runner = runner_for(tiny_demo_config, tmp_path,
                        METHODS['opml_sp']['model'],
                        METHODS['opml_sp']['custom_hooks'])
    runner.train()
    store = runner.model.head.label_store
    class_ap = store.class_state['class_ap']
    assert ((class_ap >= 0) & (class_ap <= 1)).all() and class_ap.sum() > 0
    hook = next(
        h for h in runner.hooks if isinstance(h, ClassAPCorrectionHook))
    labelled = store.pseudo_label_mask()
    assert 0 < store.num_pseudo_labels
    # At most floor((1 - AP_c) N_c) per class and epoch, on unobserved
    # entries, as positives.
    assert (labelled.sum(0) <= 2 * hook.num_positives).all()
    assert (hook.dataset.observed_labels[labelled.numpy()] == 0).all()
    assert (store.lookup(torch.arange(store.num_samples))[labelled] == 1).all()


OPML_SP = METHODS['opml_sp']['model']['head']

HOOK = METHODS['opml_sp']['custom_hooks']


@pytest.mark.parametrize('model, hooks, error, match', [
    (dict(head=OPML_SP), [], RuntimeError, 'ClassAPCorrectionHook'),
    (dict(head=dict(loss=OPML_SP['loss'])), HOOK, TypeError,
     'PartialLabelLinearClsHead'),
    (dict(
        head=dict(
            type='PartialLabelLinearClsHead',
            loss=dict(_delete_=True, type='OPMLLoss'))), HOOK, TypeError,
     'does not read'),
])
def test_fail_before_training(tiny_demo_config, tmp_path, model, hooks, error,
                              match):
    assert_fails_before_training(
        runner_for(tiny_demo_config, tmp_path, model, hooks), error, match)


def test_warmup_must_leave_an_epoch(monkeypatch):
    # The base class's checks are the runner tests' above.
    monkeypatch.setattr(LabelStoreHook, 'before_train', lambda *args: None)
    hook = ClassAPCorrectionHook(warmup_epochs=2)
    with pytest.raises(ValueError, match='warmup_epochs=2'):
        hook.before_train(SimpleNamespace(max_epochs=2))


@pytest.mark.parametrize('kwargs', [
    dict(warmup_epochs=0),
    dict(warmup_epochs=1.5),
    dict(delta=-0.1),
    dict(delta=float('nan')),
])
def test_bad_hook_arguments(kwargs):
    with pytest.raises(ValueError):
        ClassAPCorrectionHook(**kwargs)
