"""APLHook: its selection against the official pseudo-labelling, the
quota and first pseudo-labels of a training run, the fail-fast errors, its
arguments, and a warm-up that leaves no epoch to pseudo-label."""
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from conftest import case, train_tiny
from mmengine.config import Config
from mmengine.runner import Runner
from stateful_methods import method_config

from mmlml.hooks import APLHook
from mmlml.structures import LabelStore

NAN = float('nan')

#: Refused arguments (the case ids follow
#: ``tests/test_datasets/test_dataset_bad_input.py``).
ARGUMENT_CASES = [
    case('apl-hook-warmup-bad', lambda t: APLHook(warmup_epochs=0), ValueError,
         r'warmup_epochs must be an integer >= 1, got 0', 0),
    case('apl-hook-warmup-bad', lambda t: APLHook(warmup_epochs=2.0),
         ValueError, r'warmup_epochs must be an integer >= 1, got 2\.0', 2.0),
    case('apl-hook-warmup-bad', lambda t: APLHook(warmup_epochs=True),
         ValueError, r'warmup_epochs must be an integer >= 1, got True', True),
    case('apl-hook-theta-bad', lambda t: APLHook(theta=0), ValueError,
         r'theta must lie in \(0, 1\], got 0', 0),
    case('apl-hook-theta-bad', lambda t: APLHook(theta=1.5), ValueError,
         r'theta must lie in \(0, 1\], got 1\.5', 1.5),
    case('apl-hook-theta-bad', lambda t: APLHook(theta=NAN), ValueError,
         r'theta must be a finite real number, got nan', 'nan'),
]


@pytest.mark.parametrize('make, error, match', ARGUMENT_CASES)
def test_arguments_refused(make, error, match, tmp_path):
    with pytest.raises(error, match=match):
        make(tmp_path)


def test_numpy_arguments_accepted():
    """hook-numpy-arguments: numpy numbers are numbers."""
    hook = APLHook(warmup_epochs=np.int64(3), theta=np.float32(0.5))
    assert (hook.warmup_epochs, hook.theta) == (3, 0.5)
    assert type(hook.warmup_epochs) is int


def test_warmup_ge_max_epochs_refused(tiny_train):
    """apl-hook-warmup-ge-max-epochs: a warm-up as long as the training
    refuses to start."""
    with pytest.raises(
            ValueError,
            match=r'APLHook: warmup_epochs=2 leaves no epoch to '
            r'pseudo-label in 2 epochs'):
        train_tiny(tiny_train, dict(type='EMAPLLoss', alpha=0.2, beta=0.5),
                   dict(type='APLHook', warmup_epochs=2))


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
