"""A Slurm sweep without Slurm's accounting says so once: submitit polls
``sacct`` for the jobs' states, and each failing poll printed sacct's own
"accounting storage is disabled" and submitit's warning. Checked with a
stand-in ``sacct`` that fails as the test bed's does (no Slurm needed)."""
import logging
import os

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
    filters = list(log.filters)
    yield watcher
    log.filters[:] = filters


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
