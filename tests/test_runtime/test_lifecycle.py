"""A Runner's whole life on CPU with the demo config: train, save, resume,
load_from, val and test loops, the launchers, and a two-process run."""
import json
import os.path as osp
import shutil
import subprocess
import sys

import pytest
import torch
from conftest import ROOT, dist_train_env
from mmengine.config import Config
from mmengine.runner import Runner

import mmlml  # noqa: F401

sys.path.insert(0, osp.join(ROOT, 'tools'))
import test as test_tool  # noqa: E402

import train as train_tool  # noqa: E402


def build_runner(config, **overrides):
    cfg = Config.fromfile(config)
    cfg.merge_from_dict(overrides)
    return Runner.from_cfg(cfg)


@pytest.mark.slow
def test_train_resume_load_from_and_test(tiny_demo_config):
    config = tiny_demo_config(loss=dict(_delete_=True, type='HillLoss'))
    work_dir = Config.fromfile(config).work_dir

    runner = train_tool.main([config])
    assert runner.epoch == 2
    assert osp.isfile(osp.join(work_dir, 'epoch_2.pth'))
    # The demo keeps one checkpoint: keep a copy for load_from below.
    ckpt = shutil.copy(osp.join(work_dir, 'epoch_2.pth'), work_dir + '.pth')
    best = runner.message_hub.get_info('best_ckpt')
    assert best and osp.isfile(best)
    trained = {k: v.clone() for k, v in runner.model.state_dict().items()}

    # resume=True continues from the last checkpoint to the new max_epochs.
    resumed = train_tool.main(
        [config, '--resume', '--cfg-options', 'train_cfg.max_epochs=3'])
    assert resumed.epoch == 3
    assert resumed.iter == 3 * len(resumed.train_dataloader)
    assert osp.isfile(osp.join(work_dir, 'epoch_3.pth'))

    # load_from restores the weights (not the loop state).
    loaded = build_runner(config, load_from=ckpt)
    loaded.load_or_resume()
    for key, value in loaded.model.state_dict().items():
        assert torch.equal(value, trained[key]), key
    assert loaded.epoch == 0

    # The validation loop ran every epoch; the test loop runs from the tool.
    val_map = runner.message_hub.get_scalar('val/multi-label/mAP').current()
    assert 0 <= val_map <= 100
    out = osp.join(work_dir, 'test_metrics.json')
    metrics = test_tool.main([config, ckpt, '--out', out])
    with open(out) as f:
        saved = json.load(f)
    assert saved['multi-label/mAP'] == metrics['multi-label/mAP']
    for key in ('multi-label/f1-score', 'multi-label/f1-score_micro'):
        assert key in saved


@pytest.mark.slow
def test_two_process_torchrun_on_cpu(tiny_demo_config, tmp_path):
    """`tools/dist_train.sh CONFIG 2` with the gloo backend on CPU."""
    config = tiny_demo_config(max_epochs=2)
    env = dist_train_env()
    out = subprocess.run([
        'bash',
        osp.join(ROOT, 'tools/dist_train.sh'), config, '2', '--work-dir',
        str(tmp_path / 'dist')
    ],
                         capture_output=True,
                         text=True,
                         timeout=600,
                         env=env,
                         cwd=ROOT)
    log = out.stdout + out.stderr
    assert out.returncode == 0, log[-4000:]
    assert 'Distributed launcher: pytorch' in log or 'world_size' in log
    assert osp.isfile(tmp_path / 'dist' / 'epoch_2.pth')
    if not torch.cuda.is_available():
        # The banner says what the run used: gloo, two processes, no GPU.
        assert "dist_cfg: {'backend': 'gloo'}" in log
        assert 'GPU number: 0' in log and 'world size: 2' in log
        assert "'backend': 'nccl'" not in log
