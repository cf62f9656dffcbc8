"""One training at a time in a work directory (mmlml.cli.work_dir_lock,
tools/train.py): a second is refused in one line naming the first's pid;
the lock of a finished or killed run is free; ``--force-work-dir`` shares
the folder on purpose."""
import os
import os.path as osp
import signal
import subprocess
import sys
import textwrap

import pytest
from conftest import ROOT, load_train_tool

from mmlml.cli.work_dir_lock import (LOCK_NAME, WorkDirInUse, is_first_process,
                                     work_dir_lock)

MODULE = osp.join(ROOT, 'mmlml', 'cli', 'work_dir_lock.py')


def test_second_holder_is_refused_and_lock_is_freed(tmp_path):
    work_dir = str(tmp_path / 'work')
    with work_dir_lock(work_dir):
        with open(osp.join(work_dir, LOCK_NAME)) as f:
            assert f.read().strip() == str(os.getpid())
        with pytest.raises(WorkDirInUse) as info:
            with work_dir_lock(work_dir):
                pass
        message = str(info.value)
        assert message.startswith(f'the work dir {work_dir} is in use by '
                                  f'another training (pid {os.getpid()}')
        assert '--force-work-dir' in message and '\n' not in message
        with work_dir_lock(work_dir, force=True):  # shared on purpose
            pass
    with work_dir_lock(work_dir):  # free once the first run ended
        pass


def test_lock_of_a_killed_run_is_free(tmp_path):
    """A run killed with SIGKILL holds nothing: the next one (a resume)
    takes the folder without deleting anything by hand."""
    work_dir = str(tmp_path / 'work')
    script = textwrap.dedent(f"""
        import importlib.util, sys, time
        spec = importlib.util.spec_from_file_location('lock', {MODULE!r})
        lock = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(lock)
        with lock.work_dir_lock({work_dir!r}):
            print('held', flush=True)
            time.sleep(60)
        """)
    env = {k: v for k, v in os.environ.items() if k != 'RANK'}
    holder = subprocess.Popen([sys.executable, '-c', script],
                              stdout=subprocess.PIPE,
                              text=True,
                              env=env)
    try:
        assert holder.stdout.readline().strip() == 'held'
        with pytest.raises(WorkDirInUse, match=f'pid {holder.pid},'):
            with work_dir_lock(work_dir):
                pass
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    with work_dir_lock(work_dir):
        pass


def test_only_the_first_process_of_a_run_locks(monkeypatch, tmp_path):
    monkeypatch.delenv('SLURM_STEP_ID', raising=False)
    monkeypatch.setenv('RANK', '1')
    assert not is_first_process()
    work_dir = str(tmp_path / 'work')
    with work_dir_lock(work_dir):
        assert not osp.exists(osp.join(work_dir, LOCK_NAME))
    monkeypatch.setenv('RANK', '0')
    assert is_first_process()
    monkeypatch.delenv('RANK')
    monkeypatch.setenv('SLURM_STEP_ID', '0')
    monkeypatch.setenv('SLURM_PROCID', '3')
    assert not is_first_process()


def test_train_tool_refuses_a_work_dir_in_use(tmp_path, tiny_demo_config):
    """``tools/train.py`` on a folder another training holds: refused
    before anything is built (nothing written besides the lock)."""
    config = tiny_demo_config()
    work_dir = str(tmp_path / 'busy')
    tool = load_train_tool()
    with work_dir_lock(work_dir):
        with pytest.raises(WorkDirInUse, match='pass --force-work-dir'):
            tool.main([config, '--work-dir', work_dir])
    assert os.listdir(work_dir) == [LOCK_NAME]
