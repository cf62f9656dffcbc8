"""EM + APL: EMAPLLoss against the official loss, APLHook's selection
against the official pseudo-labelling, and the fail-fast errors."""
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from conftest import ROOT  # noqa: F401
from loss_checks import build, random_logits
from mmengine.config import Config
from mmengine.runner import Runner
from stateful_methods import method_config

from mmlml.hooks import APLHook
from mmlml.models.losses import em_apl_loss, em_loss
from mmlml.structures import LabelStore


def official_em_apl(preds, observed, alpha, beta, eps=0.0):
    """The official loss_EM_APL per element, in numpy: ``observed`` holds
    1, 0 and -s for a soft negative pseudo-label s."""

    def neg_log(x):
        return -np.log(x + eps)

    loss = np.zeros_like(preds)
    pos, unk, pl = observed == 1, observed == 0, observed < 0
    loss[pos] = neg_log(preds[pos])
    p = preds[unk]
    loss[unk] = -alpha * (p * neg_log(p) + (1 - p) * neg_log(1 - p))
    s, p = -observed[pl], preds[pl]
    loss[pl] = beta * (s * neg_log(p) + (1 - s) * neg_log(1 - p))
    return loss


def test_em_apl_matches_official():
    gen = torch.Generator().manual_seed(0)
    x = random_logits((6, 7), 2.0, seed=1, dtype=torch.float64)
    target = torch.zeros(6, 7, dtype=torch.float64)
    target[torch.arange(6), torch.arange(6)] = 1
    soft = torch.rand(6, 7, generator=gen, dtype=torch.float64) * 0.3
    chosen = (torch.rand(6, 7, generator=gen) < 0.4) & (target == 0)
    pseudo = soft.masked_fill(~chosen, float('nan'))
    observed = torch.where(chosen, -soft, target).numpy()
    expected = official_em_apl(x.sigmoid().numpy(), observed, 0.2, 0.7)
    got = em_apl_loss(
        x, target, 0.2, 0.7, pseudo_labels=pseudo, reduction='none')
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-10)
    # The official scale is the mean over N x C: loss_weight = 1 / C with
    # the head's avg_factor=N.
    loss = build(
        dict(type='EMAPLLoss', alpha=0.2, beta=0.7, loss_weight=1 / 7))
    np.testing.assert_allclose(
        float(loss(x, target, avg_factor=6, pseudo_labels=pseudo)),
        expected.mean(),
        rtol=1e-10)
    # With the official epsilon the two differ by O(1e-5 / p).
    with_eps = official_em_apl(x.sigmoid().numpy(), observed, 0.2, 0.7, 1e-5)
    np.testing.assert_allclose(got.numpy(), with_eps, atol=2e-3)


def test_without_pseudo_labels_equals_em():
    x = random_logits((4, 5), 3.0)
    target = torch.tensor([[1., 0, 0, -1, 0]] * 4)
    none = torch.full((4, 5), float('nan'))
    torch.testing.assert_close(
        em_apl_loss(x, target, 0.3, 0.9, pseudo_labels=none, reduction='none'),
        em_loss(x, target, 0.3, reduction='none'))
    # A pseudo-label on an observed entry is ignored.
    full = torch.full((4, 5), 0.5)
    torch.testing.assert_close(
        em_apl_loss(x, target, 0.3, 0.9, pseudo_labels=full,
                    reduction='none')[target != 0],
        em_loss(x, target, 0.3, reduction='none')[target != 0])


def test_bad_pseudo_labels():
    x, target = torch.zeros(2, 3), torch.tensor([0, 1])
    with pytest.raises(ValueError, match='shape'):
        em_apl_loss(x, target, pseudo_labels=torch.zeros(2, 4))
    with pytest.raises(ValueError, match=r'\[0, 1\]'):
        em_apl_loss(x, target, pseudo_labels=torch.full((2, 3), 1.5))
    with pytest.raises(TypeError, match='floating-point'):
        em_apl_loss(x, target, pseudo_labels=torch.zeros(2, 3).long())


def official_selection(preds, observed, quota):
    """The official per-class pseudo-labelling: among the entries still at
    0, the ``quota[c]`` lowest predictions get ``-pred``."""
    observed = observed.copy()
    for c in range(preds.shape[1]):
        unlabelled = np.flatnonzero(observed[:, c] == 0)
        order = np.argsort(preds[unlabelled, c])
        for row in unlabelled[order[:quota[c]]]:
            observed[row, c] = -preds[row, c]
    return observed


def test_selection_matches_official():
    num, classes = 300, 6
    rng = np.random.RandomState(0)
    observed = np.zeros((num, classes), dtype=np.int8)
    observed[np.arange(num), rng.randint(classes, size=num)] = 1
    observed[:10, 0] = -1  # observed negatives are never pseudo-labelled
    hook = APLHook(warmup_epochs=1)
    hook.store = LabelStore(num, classes)
    hook.dataset = SimpleNamespace(observed_labels=observed)
    hook.quota = torch.tensor([0, 1, 7, 40, 250, 400])
    state = observed.astype(np.float64)
    for _ in range(2):  # two epochs: labels accumulate, never change
        # Distinct probabilities, exact in float16.
        preds = rng.permutation(num * classes).reshape(num, classes)
        preds = (preds + 1) / 2**12
        hook.store.reset_scores()
        hook.store.record_scores(torch.arange(num), torch.tensor(preds))
        hook.assign_pseudo_labels(chunk=4)
        state = official_selection(preds, state, hook.quota.numpy())
        expected = np.where(state < 0, -state, np.nan)
        expected[observed == -1] = np.nan
        np.testing.assert_array_equal(
            hook.store.lookup(torch.arange(num)).numpy(), expected)


def runner_for(tiny_demo_config,
               tmp_path,
               model,
               hooks,
               options=None,
               **kwargs):
    config = method_config(tiny_demo_config, tmp_path,
                           dict(model=model, custom_hooks=hooks), 'apl',
                           **kwargs)
    cfg = Config.fromfile(config)
    for key, value in (options or {}).items():
        if value is None:
            cfg.pop(key)
        else:
            cfg.merge_from_dict({key: value})
    return Runner.from_cfg(cfg)


HEAD = dict(
    type='PartialLabelLinearClsHead',
    loss=dict(_delete_=True, type='EMAPLLoss', alpha=0.2, beta=0.5))


def test_quota_and_first_pseudo_labels(tiny_demo_config, tmp_path):
    runner = runner_for(
        tiny_demo_config,
        tmp_path,
        dict(head=HEAD), [dict(type='APLHook', warmup_epochs=1, theta=0.5)],
        max_epochs=3)
    runner.train()
    hook = next(h for h in runner.hooks if isinstance(h, APLHook))
    zeros = (hook.dataset.observed_labels == 0).sum(0)
    expected = np.floor(0.5 * zeros / 2).astype(np.int64)
    np.testing.assert_array_equal(hook.quota.numpy(), expected)
    # Two labelling epochs (after epochs 1 and 2; none after the last) of
    # the quota each: theta of the unannotated entries, never positive.
    store = runner.model.head.label_store
    labelled = store.pseudo_label_mask()
    assert labelled.sum(0).tolist() == (2 * expected).tolist()
    assert (hook.dataset.observed_labels[labelled.numpy()] == 0).all()
    assert float(
        store.lookup(torch.arange(len(hook.dataset))).nan_to_num(0).max()) < 1


@pytest.mark.parametrize('model, hooks, error, match', [
    (dict(head=dict(loss=dict(_delete_=True, type='EMAPLLoss'))), [
        dict(type='APLHook', warmup_epochs=1)
    ], TypeError, "PartialLabelLinearClsHead"),
    (dict(head=dict(type='PartialLabelLinearClsHead')),
     [dict(type='APLHook', warmup_epochs=1)], TypeError, 'does not read'),
    (dict(head=HEAD), [], RuntimeError, 'APLHook'),
    (dict(head=dict(loss=dict(_delete_=True, type='EMAPLLoss'))), [],
     RuntimeError, 'PartialLabelLinearClsHead'),
    (dict(head=HEAD), [dict(type='APLHook', warmup_epochs=3)
                       ], ValueError, 'no epoch to pseudo-label'),
])
def test_fail_before_training(tiny_demo_config, tmp_path, model, hooks, error,
                              match):
    runner = runner_for(tiny_demo_config, tmp_path, model, hooks)
    with pytest.raises(error, match=match):
        runner.train()
    assert runner.iter == 0  # nothing was trained


def test_iteration_based_loop_refused(tiny_demo_config, tmp_path):
    options = {
        'train_cfg':
        dict(_delete_=True, by_epoch=False, max_iters=4, val_interval=4),
        'default_hooks.checkpoint.by_epoch':
        False,
        'param_scheduler':
        None,
    }
    runner = runner_for(tiny_demo_config, tmp_path, dict(head=HEAD),
                        [dict(type='APLHook', warmup_epochs=1)], options)
    with pytest.raises(TypeError, match='by_epoch=True'):
        runner.train()


@pytest.mark.parametrize('kwargs', [
    dict(warmup_epochs=0),
    dict(warmup_epochs=1.5),
    dict(theta=0),
    dict(theta=1.5),
])
def test_bad_hook_arguments(kwargs):
    with pytest.raises(ValueError):
        APLHook(**kwargs)


def test_ties_go_to_the_lower_sample_index():
    hook = APLHook(warmup_epochs=1)
    hook.store = LabelStore(6, 2)
    hook.dataset = SimpleNamespace(
        observed_labels=np.zeros((6, 2), dtype=np.int8))
    hook.quota = torch.tensor([4, 0])
    hook.store.record_scores(
        torch.arange(6), torch.tensor([[0.5, 0.1]] * 3 + [[0.25, 0.1]] * 3))
    assert hook.assign_pseudo_labels() == 4
    labelled = hook.store.pseudo_label_mask()
    assert labelled[:, 0].tolist() == [True, False, False, True, True, True]
    assert not labelled[:, 1].any()
