"""Sweeps past one machine, against the real services of
tools/cluster_testbed.sh (a single-node Slurm, a PostgreSQL server): Slurm
workers on a database storage write what local workers write, a cancelled
job's run is queued again, --join adds workers from another process,
method selection runs as Slurm jobs, and four local workers on one storage
lose no run and run none twice. The runs are
tests/benchmark_fake_trainer.py (no training). No test bets on how fast a
loaded machine starts a job: runs that must still be running when the test
looks are held (``FAKE_GATE``) until it has seen them. A command that hangs
fails its test with the command's Python stack (:func:`_finish`)."""
import json
import os
import os.path as osp
import signal
import subprocess
import sys
import time
import uuid

import pytest
from conftest import ROOT

#: A test that hangs fails after this long (pytest-timeout, with the stack
#: of every thread); the commands it starts are given less
#: (:data:`COMMAND_SECONDS`), so that a hung command fails with its own.
pytestmark = [pytest.mark.cluster, pytest.mark.slow, pytest.mark.timeout(480)]
COMMAND_SECONDS = 360

FAKE = osp.join(ROOT, 'tests', 'benchmark_fake_trainer.py')
AN, FULL = 'configs/demo/an.py', 'configs/demo/full_labels.py'


def _env(**extra):
    return dict(
        os.environ,
        MMLML_SWEEP_TRAINER=FAKE,
        PYTHONPATH=ROOT + os.pathsep + os.environ.get('PYTHONPATH', ''),
        # A hung command prints its stack when told (:func:`_finish`).
        PYTHONFAULTHANDLER='1',
        **extra)


def _start(args, env, cwd=ROOT):
    """A tool of tools/ started with this Python, its stderr captured."""
    return subprocess.Popen(
        [sys.executable,
         osp.join(ROOT, 'tools', args[0]), *args[1:]],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=cwd)


def _finish(process, seconds=COMMAND_SECONDS):
    """``(stdout, stderr)`` of a command started by :func:`_start` that
    succeeded; one that is still running after ``seconds`` is made to print
    its Python stack (faulthandler, on SIGABRT) and fails the test with it."""
    try:
        out, err = process.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGABRT)
        out, err = process.communicate()
        pytest.fail(f'{process.args[1]} still ran after {seconds} s; '
                    f'its stack:\n{err[-6000:]}')
    assert process.returncode == 0, err[-3000:]
    return out, err


def _slurm():
    return [
        '--executor', 'slurm', '--slurm',
        f'slurm_partition={os.environ["MMLML_SLURM_PARTITION"]}',
        'cpus_per_task=1', 'timeout_min=10'
    ]


def _database():
    """A fresh study name on the test bed's database (studies of earlier
    runs stay; names never repeat)."""
    return os.environ['MMLML_TEST_DATABASE_URL'], f's{uuid.uuid4().hex[:10]}'


def _benchmark(tmp_path, *args, env=None, name='out'):
    out = tmp_path / f'{name}.json'
    _, err = _finish(
        _start(['benchmark.py', *args, '--out',
                str(out)], env or _env()))
    return json.loads(out.read_text()), err


def _wait_for(sweep, state, seconds=240, count=1):
    """Whether the sweep had ``count`` trials in ``state`` within
    ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if sweep.progress().get(state, 0) >= count:
            return True
        time.sleep(0.25)
    return False


def _rows(record):
    """What a sweep measured, without where and how long."""
    rows = {}
    for mode, by_setting in record['results'].items():
        for setting, by_name in by_setting.items():
            for name, row in by_name.items():
                rows[(mode, setting, name)] = (row['tuning']['chosen'], [
                    (run['seed'], run['val mAP'], run['mAP'])
                    for run in row['runs']
                ])
    return rows


SWEEP = [
    AN, FULL, '--seeds', '0', '1', '--lrs', '0.1', '0.3', '--lr-bounds', '0.1',
    '0.3', '--max-doublings', '0', '--no-prune'
]


def test_slurm_workers_on_postgresql_write_the_local_rows(tmp_path):
    url, study = _database()
    slurm, err = _benchmark(
        tmp_path,
        *SWEEP,
        '--storage',
        url,
        '--study',
        study,
        '--work-dir',
        str(tmp_path / 'slurm'),
        '--workers',
        '2',
        *_slurm(),
        name='slurm')
    local, _ = _benchmark(
        tmp_path,
        *SWEEP,
        '--storage',
        str(tmp_path / 'local.db'),
        '--study',
        'local',
        '--work-dir',
        str(tmp_path / 'local'),
        '--workers',
        '2',
        name='local')
    assert _rows(slurm) == _rows(local)
    # Every run once (a database storage drops a run queued twice by two
    # workers when it is taken: a trial marked duplicate, never run).
    complete = [t for t in slurm['trials'] if t['state'] == 'complete']
    assert len(complete) == len({t['run'] for t in complete}) == 6
    # Without Slurm's accounting: submitit's sacct warning once, and
    # nothing of sacct's own.
    assert err.count('sacct') <= 1
    assert 'accounting storage is disabled' not in err


def test_a_cancelled_job_queues_its_run_again(tmp_path):
    from mmlml.benchmark.sweep.executors import start_workers
    from mmlml.benchmark.sweep.sweep import Sweep
    from mmlml.benchmark.sweep.worker import work
    url, study = _database()
    _benchmark(tmp_path, AN, '--seeds', '0', '--lrs', '0.1', '--lr-bounds',
               '0.1', '0.1', '--max-doublings', '0', '--no-prune',
               '--storage', url, '--study', study, '--work-dir',
               str(tmp_path / 'w'), '--workers', '0')
    # What a command naming the sweep's work directory may run.
    trusted = [str(tmp_path / 'w')]
    sweep = Sweep(url, study, trusted=trusted)
    gate = tmp_path / 'gate'  # the job's run waits for it: still running
    os.environ.update(MMLML_SWEEP_TRAINER=FAKE, FAKE_GATE=str(gate))
    try:
        job, = start_workers(
            url,
            study,
            1,
            'slurm',
            folder=str(tmp_path / 'submitit'),
            trusted=trusted,
            slurm=dict(
                slurm_partition=os.environ['MMLML_SLURM_PARTITION'],
                cpus_per_task=1,
                timeout_min=10))
        # A loaded machine may take minutes to start the job's worker.
        assert _wait_for(sweep, 'running'), 'the job took no run in 4 min'
        subprocess.run(['scancel', str(job.job_id)], check=True)
        # The job's worker queues its run again.
        assert _wait_for(sweep, 'waiting'), 'the run was not queued again'
        gate.touch()
        assert work(url, study, poll=0.2, trusted=trusted)['errors'] == []
    finally:
        for key in ('MMLML_SWEEP_TRAINER', 'FAKE_GATE'):
            os.environ.pop(key, None)
    counts = sweep.progress()
    assert counts.get('complete') == 1 and counts.get('fail') == 1
    assert sweep.unfinished() == []


def test_join_from_another_process_adds_workers(tmp_path):
    from mmlml.benchmark.sweep.sweep import Sweep
    url, study = _database()
    # Both commands name the work directory (a stored one is not trusted).
    work_dir = str(tmp_path / 'w')
    common = [
        '--storage', url, '--study', study, '--work-dir', work_dir,
        '--workers', '1', *_slurm()
    ]
    # Every run waits for the gate: the first worker still holds its run
    # when the joined one takes another, however long the jobs take to
    # start.
    gate = tmp_path / 'gate'
    env = _env(FAKE_GATE=str(gate))
    first = _start(['benchmark.py', *SWEEP, *common], env)
    joined, why = None, 'still starting'
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and first.poll() is None:
            try:
                if Sweep(
                        url, study,
                        trusted=[work_dir]).progress().get('running'):
                    break
            except ValueError as e:  # not defined yet
                why = str(e)
            time.sleep(0.25)
        else:
            if first.poll() is not None:
                why = first.communicate()[1][-3000:]
            pytest.fail(f'the first worker ran nothing in 4 min: {why}')
        out = tmp_path / 'joined.json'
        joined = _start(['benchmark.py', '--join', *common, '--out',
                         str(out)], env)
        assert _wait_for(Sweep(url, study, trusted=[work_dir]), 'running',
                         count=2), \
            'the joined worker took no run in 4 min'
    finally:
        gate.touch()
    _, err = _finish(joined)
    assert 'joining sweep' in err
    _finish(first)
    sweep = Sweep(url, study, trusted=[work_dir])
    workers = {
        trial.user_attrs.get('worker')
        for group in sweep.groups()
        for trial in sweep.trials(group)
    }
    assert len(workers - {None}) == 2  # the first job's and the joined one
    assert len(json.loads(out.read_text())['trials']) == 6


def test_select_method_through_slurm(tmp_path):
    config = tmp_path / 'mine.py'
    config.write_text(f"_base_ = [{osp.join(ROOT, AN)!r}]\n")
    out, _ = _finish(
        _start([
            'select_method.py',
            str(config), '--methods', 'an', 'hill', '--seeds', '0', '--lrs',
            '0.1', '--lr-bounds', '0.1', '0.1', '--max-doublings', '0',
            '--work-dir',
            str(tmp_path / 'select'), '--workers', '2', *_slurm()
        ],
               _env(),
               cwd=tmp_path))
    assert 'Best:' in out
    assert list((tmp_path / 'select').glob('best_*.py'))


@pytest.mark.parametrize('kind', ['sqlite', 'journal', 'postgresql'])
def test_four_local_workers_on_one_storage(tmp_path, kind):
    """No run is lost and none runs twice, whatever the storage."""
    from mmlml.benchmark.sweep.sweep import Sweep
    storage = dict(
        sqlite=str(tmp_path / 's.db'),
        journal=str(tmp_path / 's.journal'),
        postgresql=os.environ['MMLML_TEST_DATABASE_URL'])[kind]
    study = f's{uuid.uuid4().hex[:10]}'
    record, _ = _benchmark(tmp_path, *SWEEP, '--storage',
                           storage, '--study', study, '--work-dir',
                           str(tmp_path / 'w'), '--workers', '4')
    sweep = Sweep(storage, study, trusted=[str(tmp_path / 'w')])
    runs = [
        trial.user_attrs['run'] for group in sweep.groups()
        for trial in sweep.trials(group) if trial.state.name == 'COMPLETE'
    ]
    assert len(runs) == len(set(runs)) == 6
    assert sweep.unfinished() == []
    assert len(record['trials']) == len(runs)
