"""A Slurm sweep without Slurm's accounting says so once: submitit polls
``sacct`` for the jobs' states, and each failing poll printed sacct's own
"accounting storage is disabled" and submitit's warning. Checked with a
stand-in ``sacct`` that fails as the test bed's does (no Slurm needed)."""
import logging
import os
import subprocess
import sys

import pytest

from mmlml.benchmark.sweep.executors import _SacctOnce, quiet_sacct_warnings

_SACCT = ('#!/bin/sh\n'
          'echo "Slurm accounting storage is disabled" >&2\n'
          'exit 1\n')


@pytest.fixture
def watcher(tmp_path, monkeypatch):
    """submitit's Slurm watcher polling a failing stand-in ``sacct``, with
    this module's changes to it and to submitit's logger undone after."""
    sacct = tmp_path / 'sacct'
    sacct.write_text(_SACCT)
    sacct.chmod(0o755)
    monkeypatch.setenv('PATH', f'{tmp_path}{os.pathsep}{os.environ["PATH"]}')
    from submitit.slurm.slurm import SlurmJob
    watcher = SlurmJob.watcher
    monkeypatch.setattr(watcher, '_make_command', watcher._make_command)
    monkeypatch.setattr(watcher, '_registered', {'12345'})
    monkeypatch.setattr(watcher, '_finished', set())
    log = logging.getLogger('submitit')
    filters = [list(log.filters)] + [list(h.filters) for h in log.handlers]
    yield watcher
    for owner, kept in zip([log] + log.handlers, filters):
        owner.filters[:] = kept


def test_sacct_failures_are_said_once(watcher, capfd, caplog):
    quiet_sacct_warnings()
    quiet_sacct_warnings()  # a second sweep in the same process
    assert sum(
        isinstance(f, _SacctOnce)
        for f in logging.getLogger('submitit').filters) == 1
    with caplog.at_level(logging.WARNING, logger='submitit'):
        for _ in range(3):
            watcher.update()
    said = [
        r.getMessage() for r in caplog.records if 'sacct' in r.getMessage()
    ]
    assert len(said) == 1 and 'said once' in said[0]
    assert 'accounting storage is disabled' not in capfd.readouterr().err


def test_the_terminal_shows_it_once(tmp_path):
    """What a terminal shows: submitit's logging sends a warning to
    standard output and standard error, so the line "said once" came
    twice; it comes once, on standard error."""
    sacct = tmp_path / 'sacct'
    sacct.write_text(_SACCT)
    sacct.chmod(0o755)
    script = ('from submitit.slurm.slurm import SlurmJob\n'
              'from mmlml.benchmark.sweep.executors import '
              'quiet_sacct_warnings\n'
              'quiet_sacct_warnings()\n'
              'SlurmJob.watcher._registered = {"12345"}\n'
              'for _ in range(3):\n'
              '    SlurmJob.watcher.update()\n')
    env = dict(os.environ, PATH=f'{tmp_path}{os.pathsep}{os.environ["PATH"]}')
    shown = subprocess.run([sys.executable, '-c', script],
                           env=env,
                           capture_output=True,
                           text=True,
                           timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert (shown.stdout + shown.stderr).count('said once') == 1
    assert 'said once' in shown.stderr
    assert 'accounting storage is disabled' not in shown.stderr
