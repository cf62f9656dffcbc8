"""A sweep's exit status tells the truth (tools/benchmark.py): non-zero
with one line per cause when a worker dies (SIGKILL) or the tool is
stopped (SIGTERM: its workers stop and their runs are queued again), when
a run cannot make its folder, or when nothing ran; a worker's training
process dies with it. The runs are tests/benchmark_fake_trainer.py."""
import os
import os.path as osp
import signal
import subprocess
import sys
import time

import pytest
from conftest import ROOT
from test_sweep import AN, FAKE, states

from mmlml.benchmark.sweep.sweep import Sweep

pytest.importorskip('optuna')


def _command(tmp_path, *extra):
    return [
        sys.executable,
        osp.join(ROOT, 'tools', 'benchmark.py'), AN, '--seeds', '0', '--lrs',
        '0.1', '--lr-bounds', '0.1', '0.1', '--max-doublings', '0',
        '--no-prune', '--study', 's', '--storage',
        str(tmp_path / 's.db'), '--workers', '1', *extra
    ]


def _env(**extra):
    return dict(os.environ, MMLML_SWEEP_TRAINER=FAKE, **extra)


def _children(pid):
    """The process ids whose parent is ``pid``."""
    found = []
    for entry in os.listdir('/proc'):
        if entry.isdigit():
            try:
                with open(f'/proc/{entry}/stat') as f:
                    fields = f.read().rsplit(')', 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry))
    return found


def _wait_running(tmp_path, tool):
    for _ in range(240):
        if osp.exists(tmp_path / 's.db'):
            try:
                if 'RUNNING' in states(Sweep(str(tmp_path / 's.db'), 's')):
                    return
            except Exception:  # not defined yet
                pass
        assert tool.poll() is None, tool.communicate()
        time.sleep(0.25)
    raise AssertionError('no run started')


def _alive(pid):
    try:
        with open(f'/proc/{pid}/stat') as f:
            return f.read().rsplit(')', 1)[1].split()[0] != 'Z'
    except OSError:
        return False


def _start_mid_run(tmp_path):
    """The tool with one worker, once its run is training: (the tool's
    process, the worker's pid)."""
    tool = subprocess.Popen(
        _command(tmp_path, '--work-dir', str(tmp_path / 'w')),
        env=_env(FAKE_EPOCH_SECONDS='2'),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True)
    _wait_running(tmp_path, tool)
    worker, = _children(tool.pid)
    return tool, worker


@pytest.mark.slow
def test_a_killed_worker_fails_the_sweep_and_takes_its_run_along(tmp_path):
    tool, worker = _start_mid_run(tmp_path)
    for _ in range(80):  # its run is marked running before it starts
        children = _children(worker)
        if children:
            break
        time.sleep(0.25)
    trainer, = children
    os.kill(worker, signal.SIGKILL)
    _, err = tool.communicate(timeout=120)
    assert tool.returncode != 0
    assert f'worker {worker} exited with -9' in err
    for _ in range(40):  # the training process died with its worker
        if not _alive(trainer):
            break
        time.sleep(0.25)
    assert not _alive(trainer)


@pytest.mark.slow
def test_sigterm_stops_the_workers_and_queues_their_runs_again(tmp_path):
    tool, worker = _start_mid_run(tmp_path)
    tool.send_signal(signal.SIGTERM)
    tool.communicate(timeout=120)
    assert tool.returncode != 0
    assert not _alive(worker)
    found = states(Sweep(str(tmp_path / 's.db'), 's'))
    assert 'RUNNING' not in found and len(found['WAITING']) == 1
    assert found['FAIL'] == found['WAITING']  # the same run, queued again


@pytest.mark.slow
def test_an_unusable_work_dir_fails_the_sweep(tmp_path):
    (tmp_path / 'file').write_text('a file, not a folder')
    result = subprocess.run(
        _command(tmp_path, '--work-dir', str(tmp_path / 'file' / 'w')),
        env=_env(),
        capture_output=True,
        text=True)
    assert result.returncode != 0
    assert 'cannot make the run folder' in result.stderr
    assert 'check the sweep\'s work directory' in result.stderr


def test_unfinished_names_each_cause(tmp_path):
    from test_sweep import define
    sweep = define(tmp_path, configs=(AN, ), seeds=(0, ), lrs=(0.1, ))
    assert sweep.unfinished() == ['nothing ran: no training run finished']
    sweep.advance()
    taken = sweep.pop('w')
    assert taken is not None
    problems = sweep.unfinished()
    assert any('1 runs are left RUNNING' in p for p in problems)
    assert any('runs are still queued' in p for p in problems) or \
        len(sweep.trials(sweep.groups()[0])) == 1
