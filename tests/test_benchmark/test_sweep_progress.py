"""What a sweep says while it runs and when it ends: a worker's line per
trial (trial n of N, elapsed, ETA) and per training epoch of the trial
(read from its log), and the summary table of ``tools/benchmark.py``
even without ``--out`` or ``--markdown``. The trainer is
tests/benchmark_fake_trainer.py (no training)."""
import os.path as osp
import sys
import types

import pytest
from conftest import ROOT
from test_sweep import define, fake_trainer  # noqa: F401 (autouse)

from mmlml.benchmark.sweep import progress as progress_module
from mmlml.benchmark.sweep.worker import work

pytest.importorskip('optuna')
sys.path.insert(0, osp.join(ROOT, 'tools'))
import benchmark  # noqa: E402


def test_last_epoch_reads_only_what_came_after_the_offset(tmp_path):
    log = tmp_path / 'log.txt'
    assert progress_module.last_epoch(str(log)) == 0
    log.write_text('Epoch(train)  [3][1/4]\n')
    start = log.stat().st_size
    with open(log, 'a') as f:
        f.write('Epoch(train) [1][4/4]\nEpoch(val) [9][1/1]\n')
    assert progress_module.last_epoch(str(log)) == 1
    assert progress_module.last_epoch(str(log), start) == 1
    assert progress_module.last_epoch(str(log), log.stat().st_size) == 0


def test_trial_line_counts_the_sweep_and_estimates_what_is_left(monkeypatch):
    from optuna.trial import TrialState
    states = [TrialState.COMPLETE] * 2 + [TrialState.RUNNING
                                          ] * 2 + [TrialState.WAITING] * 4
    trials = [types.SimpleNamespace(state=state) for state in states]
    sweep = types.SimpleNamespace(
        all_groups=lambda: ['a', 'b'],
        trials=lambda group: trials[:4] if group == 'a' else trials[4:])
    clock = iter([100., 160.])
    monkeypatch.setattr(progress_module.time, 'monotonic', lambda: next(clock))
    progress = progress_module.SweepProgress(sweep, 'w')
    progress.ran = 2  # 30 s a trial; 6 left over 2 running workers
    assert progress.trial_line('r') == (
        '[w] trial 4 of 8 queued: r, 0:01:00 elapsed, ETA 0:01:30 (trials '
        'queued so far)')


def test_a_worker_prints_trials_and_epochs_and_the_tool_its_table(
        tmp_path, capfd, monkeypatch):
    # The fake trainer takes a few hundredths of a second per epoch; the
    # log is read every hundredth.
    monkeypatch.setenv('FAKE_EPOCH_SECONDS', '0.05')
    init = progress_module.EpochWatch.__init__

    def fast(self, *args, **kwargs):
        init(self, *args, **dict(kwargs, interval=0.01))

    monkeypatch.setattr(progress_module.EpochWatch, '__init__', fast)
    sweep = define(
        tmp_path,
        configs=('configs/demo/an.py', ),
        seeds=(0, ),
        lrs=(0.1, ),
        lr_bounds=(0.1, 0.1))
    assert work(sweep.spec, 's', poll=0.1) == dict(trials=1, errors=[])
    err = capfd.readouterr().err
    trials = [line for line in err.splitlines() if ' trial ' in line]
    assert len(trials) == 1
    assert 'trial 1 of 1 queued: ' in trials[0]
    assert 'elapsed' in trials[0] and 'ETA' not in trials[0]
    epochs = [line for line in err.splitlines() if ' epochs (' in line]
    assert epochs and '10/10 epochs (100%)' in epochs[-1]
    assert '\r' not in err  # a log, not a terminal

    # No --out, no --markdown: the table is printed all the same.
    data = benchmark.main(
        ['--join', '--study', 's', '--storage', sweep.spec, '--workers', '0'])
    out = capfd.readouterr().out
    assert '| an |' in out and 'Single positive' in out
    assert set(data['results']['finetune']['single_positive']) == {'an'}


def test_waiting_on_submitit_jobs_prints_the_sweeps_progress(capsys):
    """submitit jobs (Slurm, submitit-local) write their output to their
    own log files: the command waiting on them prints the sweep's line."""
    from mmlml.benchmark.sweep.executors import wait_workers

    class Job:
        job_id = '1'

        def __init__(self):
            self.polls = 0

        def done(self):
            self.polls += 1
            return self.polls > 3

        def result(self):
            return dict(errors=[])

    calls = []

    def progress():
        calls.append(1)
        return f'[benchmark] trials: {len(calls)} finished'

    assert wait_workers([Job()], progress, interval=0.01) == []
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 3 and err[-1] == '[benchmark] trials: 3 finished'


def test_sweep_line_counts_the_trials(tmp_path):
    sweep = define(tmp_path, configs=('configs/demo/an.py', ), seeds=(0, ))
    sweep.advance()  # queues the first trials
    line = progress_module.SweepProgress(sweep, 'benchmark').sweep_line()
    assert line.startswith('[benchmark] trials: 0 finished, 0 running, '
                           '2 queued so far; 0:00:00 elapsed')  # 2 rates
