"""MMPretrain's own training script (the copy ``mim`` runs, under the
installed package's ``.mim/tools``) and ``mim train mmpretrain`` train
mmlml's configs as they are: every demo config and a paper config, for one
epoch on a few images. Nothing of MMPretrain is changed for it; the
configs are what make it work (no persistent workers without workers, a
demo schedule that builds in a one-epoch run)."""
import glob
import importlib.util
import os.path as osp
import runpy
import subprocess
import sys

import mmpretrain
import numpy as np
import pytest
from benchmark_fixtures import write_benchmark_data
from conftest import ROOT
from mmengine.config import Config
from mmengine.registry import DefaultScope
from mmpretrain.registry import DATASETS
from test_paper_configs import _tiny

import mmlml  # noqa: F401

#: MMPretrain's tools/train.py, as the package installs it for mim.
STOCK_TRAIN = osp.join(
    osp.dirname(mmpretrain.__file__), '.mim', 'tools', 'train.py')
DEMO_CONFIGS = sorted(glob.glob(osp.join(ROOT, 'configs', 'demo', '*.py')))
#: A paper config: MMPretrain's own default runtime settings are
#: replaced by mmlml's; the Hill paper's schedule, EMA and augmentation.
PAPER_CONFIG = osp.join(ROOT, 'configs', 'hill_splc',
                        'splc_resnet50_1xb128_coco2014-40left.py')


def _one_epoch(cfg, work_dir):
    """One epoch on a few images, with the settings the stock script
    keeps from the config (nothing about workers, nothing about the
    schedule): epoch-dependent losses accept a one-epoch run with
    ``TrainingProgressHook`` (mmlml's ``tools/train.py
    --training-progress``), which the stock script has no switch for."""
    cfg.train_cfg.max_epochs = 1
    cfg.work_dir = str(work_dir)
    cfg.default_hooks.logger.interval = 1
    hooks = list(cfg.get('custom_hooks') or [])
    if not any(hook.get('type') == 'TrainingProgressHook' for hook in hooks):
        hooks.append(dict(type='TrainingProgressHook'))
    cfg.custom_hooks = hooks
    return cfg


def _tiny_demo(path, tmp_path):
    """A demo config on 64 generated images (51 training, 13 validation)
    in batches of 16, written to a file for the stock script, with what
    its first stage would have written (the pseudo-labels, the scores).
    One epoch, or two for a method with warm-up epochs (one of warm-up:
    its hooks refuse a run that ends in the warm-up)."""
    cfg = Config.fromfile(path)
    for name in ('train_dataloader', 'val_dataloader'):
        cfg[name].batch_size = 16
        cfg[name].dataset.dataset.num_samples = 64
        label_file = cfg[name].dataset.get('label_file')
        if label_file is not None:  # the second stage of the pseudo-labels
            labels = np.zeros((64, cfg.model.head.num_classes), np.int8)
            labels[np.arange(64), np.arange(64) % labels.shape[1]] = 1
            np.save(tmp_path / 'labels.npy', labels)
            cfg[name].dataset.label_file = str(tmp_path / 'labels.npy')
    cfg.test_dataloader.dataset.num_samples = 32
    num_classes = cfg.model.head.num_classes
    epochs = 1
    for hook in cfg.get('custom_hooks') or []:
        if 'warmup_epochs' in hook:  # a warm-up epoch, then one with the
            hook.warmup_epochs = 1  # method's labels (they refuse fewer)
            epochs = 2
        if 'scores_file' in hook:  # the first stage's scores, one per image
            scores = np.random.default_rng(0).random((64, num_classes))
            np.save(tmp_path / 'scores.npy', scores.astype(np.float32))
            hook.scores_file = str(tmp_path / 'scores.npy')
    estimator = cfg.model.head.get('label_estimator')
    if estimator is not None:  # ROLE: one row per training sample
        with DefaultScope.overwrite_default_scope('mmpretrain'):
            estimator.num_samples = len(
                DATASETS.build(cfg.train_dataloader.dataset))
    cfg = _one_epoch(cfg, tmp_path / 'work')
    cfg.train_cfg.max_epochs = epochs
    out = tmp_path / osp.basename(path)
    cfg.dump(str(out))
    return str(out)


def _stock_train(config, monkeypatch, *args):
    """Run MMPretrain's tools/train.py in this process."""
    monkeypatch.setattr(sys, 'argv', [STOCK_TRAIN, config, *args])
    monkeypatch.setenv('LOCAL_RANK', '0')
    runpy.run_path(STOCK_TRAIN, run_name='__main__')


def test_stock_script_is_installed():
    assert osp.isfile(STOCK_TRAIN), STOCK_TRAIN
    assert len(DEMO_CONFIGS) >= 30


@pytest.mark.parametrize(
    'path', DEMO_CONFIGS, ids=[osp.basename(p) for p in DEMO_CONFIGS])
def test_stock_train_runs_demo_config(path, tmp_path, monkeypatch):
    """The stock script turns persistent workers on by default (PyTorch
    refuses them without workers) and builds every scheduler for the run's
    length (MMEngine refuses a cosine annealing that begins at the end of a
    one-epoch run)."""
    config = _tiny_demo(path, tmp_path)
    _stock_train(config, monkeypatch)
    epochs = Config.fromfile(config).train_cfg.max_epochs
    assert (tmp_path / 'work' / f'epoch_{epochs}.pth').is_file()
    # mmlml's default hooks reach the stock script: the run's model card.
    card = (tmp_path / 'work' / 'model_card.md').read_text()
    assert '## Validation metrics' in card and '## Software' in card
    cfg = Config.fromfile(config)
    assert f"type='{cfg.model.head.loss.type}'" in card  # nested: quoted
    if osp.basename(path) == 'lasd_cr.py':  # the method's own settings
        assert 'consistency_weight=0.7' in card
        assert "type='MultiView'" in card
        assert 'MultiViewClsDataPreprocessor' in card
    if osp.basename(path) == 'role.py':
        assert 'label_estimator=' in card and 'lr_mult=10' in card


@pytest.mark.slow
def test_stock_train_runs_paper_config(tmp_path, monkeypatch):
    monkeypatch.chdir(write_benchmark_data(tmp_path))
    cfg = _one_epoch(
        _tiny(Config.fromfile(PAPER_CONFIG), tmp_path / 'work'),
        tmp_path / 'work')
    config = str(tmp_path / 'paper.py')
    cfg.dump(config)
    _stock_train(config, monkeypatch)
    assert (tmp_path / 'work' / 'epoch_1.pth').is_file()


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec('mim') is None,
    reason='openmim is not installed (pip install openmim)')
def test_mim_train_mmpretrain_runs_demo_config(tmp_path):
    config = _tiny_demo(osp.join(ROOT, 'configs', 'demo', 'an.py'), tmp_path)
    result = subprocess.run(
        [sys.executable, '-m', 'mim', 'train', 'mmpretrain', config],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600)
    assert result.returncode == 0, (
        result.stdout[-2000:] + result.stderr[-3000:])
    assert (tmp_path / 'work' / 'epoch_1.pth').is_file()
    assert '.mim/tools/train.py' in result.stdout


def test_stock_train_refuses_a_wrong_class_count(tmp_path, monkeypatch):
    """A head of another class count than the training set: refused by
    the setup check under the stock script too, before the first
    iteration (not torch's target-size error inside the loss)."""
    config = _tiny_demo(DEMO_CONFIGS[0], tmp_path)
    with pytest.raises(
            ValueError,
            match='model.head.num_classes is 5 but the training '
            'set .* has 20 classes'):
        _stock_train(config, monkeypatch, '--cfg-options',
                     'model.head.num_classes=5')
    assert not list((tmp_path / 'work').glob('epoch_*.pth'))
