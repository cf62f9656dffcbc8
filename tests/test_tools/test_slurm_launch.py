"""tools/slurm_train.sh and tools/slurm_test.sh with two tasks on CPU
(gloo), under the test bed's real Slurm (tools/cluster_testbed.sh): the
same final weights and test metrics as tools/dist_train.sh and
tools/dist_test.sh with two processes and the same seed."""
import os
import os.path as osp
import re
import subprocess

import pytest
import torch
from conftest import ROOT, dist_train_env, free_port

pytestmark = [pytest.mark.cluster, pytest.mark.slow]


def _run(command, env):
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=600)
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    return result.stdout + result.stderr


def _slurm_env():
    return dict(
        dist_train_env(ROOT),
        GPUS='2',
        GPUS_PER_NODE='2',
        CPUS_PER_TASK='1',
        MASTER_PORT=str(free_port()))


def _map(log):
    found = re.findall(r'multi-label/mAP: ([0-9.]+)', log)
    assert found, log[-2000:]
    return found[-1]


def test_slurm_and_dist_launchers_agree(tiny_demo_config, tmp_path):
    config = tiny_demo_config()
    with open(config, 'a') as f:
        f.write('\nrandomness = dict(seed=0)\n')
    partition = os.environ['MMLML_SLURM_PARTITION']
    slurm_dir, dist_dir = str(tmp_path / 'slurm'), str(tmp_path / 'dist')
    log = _run([
        'bash', 'tools/slurm_train.sh', partition, 'mmlml-test', config,
        slurm_dir
    ], _slurm_env())
    assert 'world size: 2' in log and "'backend': 'gloo'" in log
    _run(['bash', 'tools/dist_train.sh', config, '2', '--work-dir', dist_dir],
         dist_train_env(ROOT))
    weights = [
        torch.load(
            osp.join(d, 'epoch_2.pth'), map_location='cpu',
            weights_only=False)['state_dict'] for d in (slurm_dir, dist_dir)
    ]
    assert weights[0].keys() == weights[1].keys()
    for key, value in weights[0].items():
        assert torch.equal(value, weights[1][key]), key
    checkpoint = osp.join(slurm_dir, 'epoch_2.pth')
    slurm_map = _map(
        _run([
            'bash', 'tools/slurm_test.sh', partition, 'mmlml-test', config,
            checkpoint
        ], _slurm_env()))
    dist_map = _map(
        _run(['bash', 'tools/dist_test.sh', config, checkpoint, '2'],
             dist_train_env(ROOT)))
    assert slurm_map == dist_map
