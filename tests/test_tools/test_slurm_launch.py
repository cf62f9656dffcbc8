"""tools/slurm_train.sh and tools/slurm_test.sh with two tasks on CPU
(gloo), under the test bed's real Slurm (tools/cluster_testbed.sh): the
same final weights and test metrics as tools/dist_train.sh and
tools/dist_test.sh with two processes and the same seed, in about the same
time, from a user's shell (OMP_NUM_THREADS unset: the launchers set it
alike) on a custom config (EfficientNet-Lite0, Adam)."""
import os
import os.path as osp
import re
import signal
import subprocess
import time

import pytest
import torch
from conftest import ROOT, dist_train_env, free_port

#: A hang fails the test with the stack of every thread (pytest-timeout)
#: within the cluster tests' budget, not after the suite's 15 minutes.
pytestmark = [pytest.mark.cluster, pytest.mark.slow, pytest.mark.timeout(480)]


def _run(command, env, seconds=300):
    """The command's output; the seconds it took are ``_run.seconds``. A
    command still running after ``seconds`` fails the test with the Python
    stacks of its processes: its process group gets SIGABRT, which
    faulthandler turns into a stack (the tasks that Slurm started run
    outside the group: pytest-timeout's stack of the test says where it
    waits)."""
    start = time.monotonic()
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(env, PYTHONFAULTHANDLER='1'),
        cwd=ROOT,
        start_new_session=True)
    try:
        out, err = process.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGABRT)
        out, err = process.communicate()
        pytest.fail(f'{" ".join(command[:2])} still ran after {seconds} s; '
                    f'the stacks:\n{err[-6000:]}')
    _run.seconds = time.monotonic() - start
    assert process.returncode == 0, (out + err)[-3000:]
    return out + err


def _user_env(**extra):
    """The launchers' environment as a user's shell has it: no thread
    count (the launchers set it)."""
    env = dict(dist_train_env(ROOT), **extra)
    env.pop('OMP_NUM_THREADS', None)
    return env


def _slurm_env():
    return _user_env(
        GPUS='2',
        GPUS_PER_NODE='2',
        CPUS_PER_TASK='1',
        MASTER_PORT=str(free_port()))


def _map(log):
    found = re.findall(r'multi-label/mAP: ([0-9.]+)', log)
    assert found, log[-2000:]
    return found[-1]


#: The tiny demo config on EfficientNet-Lite0 (random weights: no
#: download) trained with Adam.
CUSTOM = """
model = dict(
    backbone=dict(_delete_=True, type='EfficientNetLite', arch='lite0'),
    head=dict(in_channels=1280))
optim_wrapper = dict(optimizer=dict(_delete_=True, type='Adam', lr=1e-3))
randomness = dict(seed=0)
"""


def test_slurm_and_dist_launchers_agree(tiny_demo_config, tmp_path):
    config = tiny_demo_config()
    with open(config, 'a') as f:
        f.write(CUSTOM)
    partition = os.environ['MMLML_SLURM_PARTITION']
    slurm_dir, dist_dir = str(tmp_path / 'slurm'), str(tmp_path / 'dist')
    launch = dict(
        slurm=lambda work_dir: _run([
            'bash', 'tools/slurm_train.sh', partition, 'mmlml-test', config,
            work_dir
        ], _slurm_env()),
        dist=lambda work_dir: _run([
            'bash', 'tools/dist_train.sh', config, '2', '--work-dir', work_dir
        ], _user_env()))
    log = launch['slurm'](slurm_dir)
    seconds = dict(slurm=_run.seconds)
    assert 'world size: 2' in log and "'backend': 'gloo'" in log
    assert 'EfficientNetLite' in log and 'Adam' in log
    launch['dist'](dist_dir)
    seconds['dist'] = _run.seconds
    weights = [
        torch.load(
            osp.join(d, 'epoch_2.pth'), map_location='cpu',
            weights_only=False)['state_dict'] for d in (slurm_dir, dist_dir)
    ]
    assert weights[0].keys() == weights[1].keys()
    for key, value in weights[0].items():
        assert torch.equal(value, weights[1][key]), key
    if max(seconds.values()) > 1.5 * min(seconds.values()):
        # Other jobs of a shared machine make one run slower now and then:
        # the slower launcher is timed once more (a launcher that is
        # slower by itself is slower again).
        slower = max(seconds, key=seconds.get)
        launch[slower](str(tmp_path / 'again'))
        seconds[slower] = min(seconds[slower], _run.seconds)
    assert max(seconds.values()) <= 1.5 * min(seconds.values()), seconds
    checkpoint = osp.join(slurm_dir, 'epoch_2.pth')
    slurm_map = _map(
        _run([
            'bash', 'tools/slurm_test.sh', partition, 'mmlml-test', config,
            checkpoint
        ], _slurm_env()))
    dist_map = _map(
        _run(['bash', 'tools/dist_test.sh', config, checkpoint, '2'],
             _user_env()))
    assert slurm_map == dist_map
