"""VLPseudoLabelHook on the tiny demo: the thresholds' writes into the label
store (observed labels untouched), the scores file, an iteration-based
loop behind a dataset wrapper, a resumed run that scores nothing, and two
processes (torchrun, gloo) sharding the scoring into the store of one."""
import os.path as osp
import subprocess

import numpy as np
import pytest
import torch
from conftest import ROOT, dist_train_env
from mmengine.config import Config
from mmengine.registry import DefaultScope
from mmengine.runner import Runner
from pseudo_labeller_fixtures import write_tiny_clip
from stateful_methods import method_config

import mmlml  # noqa: F401
from mmlml.hooks import VLPseudoLabelHook
from mmlml.pseudo_labellers import score_dataset, select_pseudo_labels
from mmlml.registry import DATASETS, MODELS
from mmlml.structures import LabelStore

TESTS = osp.join(ROOT, 'tests')
VLPL_MODEL = dict(
    head=dict(
        type='PartialLabelLinearClsHead',
        loss=dict(_delete_=True, type='VLPLLoss', alpha=0.1)))


def vl_config(tiny_demo_config, tmp_path, name, hook, extra_hooks=(),
              **kwargs):
    """The tiny demo (51 training images, 20 classes) with VLPL's loss and
    the hook, one epoch at a constant learning rate, a checkpoint every
    epoch."""
    path = method_config(
        tiny_demo_config,
        tmp_path,
        dict(model=VLPL_MODEL, custom_hooks=[hook]),
        name,
        list(extra_hooks),
        max_epochs=1,
        **kwargs)
    with open(path, 'a') as f:
        f.write('param_scheduler = None\n')
    return path


def store_matrix(store):
    """The store's pseudo-labels, NaN where there is none."""
    return store.lookup(torch.arange(store.num_samples))


def expected_matrix(scores, observed, **thresholds):
    selected = select_pseudo_labels(
        torch.as_tensor(scores), torch.as_tensor(observed), **thresholds)
    out = torch.full(tuple(scores.shape), float('nan'))
    out[selected.samples, selected.classes] = selected.values
    return out


@pytest.mark.slow
def test_two_processes_write_the_store_of_one(tiny_demo_config, tmp_path):
    """CLIP with 2 x 2 tiles, scored by two processes (torchrun, gloo),
    each its chunks: both ranks hold the store that one process makes from
    the labeller's scores, and rank 0 wrote the scores to the cache."""
    clip = dict(write_tiny_clip(tmp_path), tiles=(2, 2))
    hook = dict(
        type='VLPseudoLabelHook',
        labeller=clip,
        neg_thr=0.01,
        cache_file=str(tmp_path / 'dist' / 'clip_scores.npy'),
        chunk_size=8,
        batch_size=4)
    config = vl_config(tiny_demo_config, tmp_path, 'dist', hook,
                       [dict(type='DumpLabelState')])
    env = dist_train_env(TESTS)
    out = subprocess.run(
        ['bash', osp.join(ROOT, 'tools/dist_train.sh'), config, '2'],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=ROOT)
    assert out.returncode == 0, (out.stdout + out.stderr)[-4000:]

    # One process: the hook's scoring, thresholds and store.
    cfg = Config.fromfile(config)
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        dataset = DATASETS.build(cfg.train_dataloader.dataset)
    observed = torch.from_numpy(dataset.observed_labels)
    labeller = MODELS.build(clip)
    scores = score_dataset(labeller, dataset, batch_size=4, chunk_size=8)
    selected = select_pseudo_labels(
        torch.from_numpy(scores), observed, neg_thr=0.01)
    store = LabelStore(len(dataset), 20)
    store.assign(selected.samples, selected.classes, selected.values)
    for rank in range(2):
        table = torch.load(tmp_path / 'dist' /
                           f'state_rank{rank}.pth')['table']
        assert torch.equal(
            table.view(torch.int16), store.table.view(torch.int16)), rank
    matrix = store_matrix(store)
    assert (matrix == 1).any() and (matrix == 0).any()
    assert matrix[observed != 0].isnan().all()

    # The labeller on all the training images at once: the cache's rows.
    images = torch.stack([dataset[i]['inputs'] for i in range(len(dataset))])
    cache = np.load(tmp_path / 'dist' / 'clip_scores.npy', allow_pickle=False)
    assert cache.shape == (64, 20) and np.isnan(cache).any(1).sum() == 13
    torch.testing.assert_close(
        torch.from_numpy(cache[dataset.indices]),
        labeller.score(images, observed),
        rtol=0,
        atol=1e-5)
    assert not osp.exists(tmp_path / 'dist' / 'clip_scores.npy.parts')


def test_scores_file_iterations_wrapper_and_resume(tiny_demo_config, tmp_path):
    """A scores file, an iteration-based loop, the training set behind a
    RepeatDataset; a cache read back; the resumed run restores the store
    and scores nothing (its scores file does not even exist)."""
    rng = np.random.RandomState(0)
    scores = (rng.rand(64, 20)**3).astype(np.float32)
    path = str(tmp_path / 'scores.npy')
    np.save(path, scores)

    def runner(name, scores_file, max_iters, **cfg_options):
        hook = dict(
            type='VLPseudoLabelHook', scores_file=scores_file, neg_thr=0.05)
        cfg = Config.fromfile(
            vl_config(tiny_demo_config, tmp_path, name, hook))
        cfg.merge_from_dict({
            'train_cfg':
            dict(
                _delete_=True,
                by_epoch=False,
                max_iters=max_iters,
                val_interval=100),
            'default_hooks.checkpoint.by_epoch':
            False,
            'default_hooks.checkpoint.interval':
            2,
            'work_dir':
            str(tmp_path / 'iters'),
            **cfg_options
        })
        cfg.train_dataloader.dataset = dict(
            type='RepeatDataset',
            times=2,
            dataset=cfg.train_dataloader.dataset)
        return Runner.from_cfg(cfg)

    first = runner('first', path, 2)
    first.train()
    table = store_matrix(first.model.head.label_store)
    dataset = first.train_dataloader.dataset.dataset
    observed = dataset.observed_labels
    torch.testing.assert_close(
        table,
        expected_matrix(scores[dataset.indices], observed, neg_thr=0.05),
        equal_nan=True)
    assert table[torch.from_numpy(observed) != 0].isnan().all()
    # A cache that exists is read back: the labeller is not even built.
    hook = VLPseudoLabelHook(
        labeller=dict(type='NoSuchLabeller'), cache_file=path)
    hook.dataset = dataset
    cached, source = hook.training_scores(first)
    assert np.array_equal(cached, scores[dataset.indices])
    assert source == f'the cache {path}'

    resumed = runner(
        'resumed',
        str(tmp_path / 'missing.npy'),
        3,
        resume=True,
        load_from=str(tmp_path / 'iters' / 'iter_2.pth'))
    resumed.train()
    assert resumed.iter == 3
    torch.testing.assert_close(
        store_matrix(resumed.model.head.label_store), table, equal_nan=True)


@pytest.mark.parametrize('kwargs, error, match', [
    (dict(), ValueError, 'labeller'),
    (dict(scores_file='s.npy', cache_file='c.npy'), ValueError, 'cache_file'),
    (dict(scores_file='s.npy', pos_thr=1.5), ValueError, 'pos_thr'),
    (dict(scores_file='s.npy', neg_thr=0.5), ValueError, 'neg_thr'),
    (dict(scores_file='s.npy', soft=True, pos_topk=3), ValueError, 'soft'),
    (dict(labeller='CLIP'), TypeError, 'labeller'),
    (dict(scores_file='s.npy', batch_size=0), ValueError, 'batch_size'),
])
def test_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        VLPseudoLabelHook(**kwargs)
