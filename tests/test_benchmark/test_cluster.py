"""Sweeps past one machine, against the real services of
tools/cluster_testbed.sh (a single-node Slurm, a PostgreSQL server): Slurm
workers on a database storage write what local workers write, a cancelled
job's run is queued again, --join adds workers from another process,
method selection runs as Slurm jobs, and four local workers on one storage
lose no run and run none twice. The runs are
tests/benchmark_fake_trainer.py (no training)."""
import json
import os
import os.path as osp
import subprocess
import sys
import time
import uuid

import pytest
from conftest import ROOT

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

FAKE = osp.join(ROOT, 'tests', 'benchmark_fake_trainer.py')
AN, FULL = 'configs/demo/an.py', 'configs/demo/full_labels.py'


def _env(**extra):
    return dict(
        os.environ,
        MMLML_SWEEP_TRAINER=FAKE,
        PYTHONPATH=ROOT + os.pathsep + os.environ.get('PYTHONPATH', ''),
        **extra)


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
    result = subprocess.run([
        sys.executable,
        osp.join(ROOT, 'tools', 'benchmark.py'), *args, '--out',
        str(out)
    ],
                            capture_output=True,
                            text=True,
                            env=env or _env(),
                            cwd=ROOT,
                            timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(out.read_text()), result.stderr


def _wait_for(sweep, state, seconds=600):
    """Whether the sweep had a trial in ``state`` within ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if sweep.progress().get(state):
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
    # Without Slurm's accounting, submitit's sacct warning: once a sweep.
    assert err.count('sacct') <= 1


def test_a_cancelled_job_queues_its_run_again(tmp_path):
    from mmlml.benchmark.executors import start_workers
    from mmlml.benchmark.sweep import Sweep
    from mmlml.benchmark.worker import work
    url, study = _database()
    _benchmark(tmp_path, AN, '--seeds', '0', '--lrs', '0.1', '--lr-bounds',
               '0.1', '0.1', '--max-doublings', '0', '--no-prune',
               '--storage', url, '--study', study, '--work-dir',
               str(tmp_path / 'w'), '--workers', '0')
    sweep = Sweep(url, study)
    os.environ.update(MMLML_SWEEP_TRAINER=FAKE, FAKE_EPOCH_SECONDS='2')
    try:
        job, = start_workers(
            url,
            study,
            1,
            'slurm',
            folder=str(tmp_path / 'submitit'),
            slurm=dict(
                slurm_partition=os.environ['MMLML_SLURM_PARTITION'],
                cpus_per_task=1,
                timeout_min=10))
        # A loaded machine may take minutes to start the job's worker.
        assert _wait_for(sweep, 'running'), 'the job took no run in 10 min'
        subprocess.run(['scancel', str(job.job_id)], check=True)
        # The job's worker queues its run again.
        assert _wait_for(sweep, 'waiting'), 'the run was not queued again'
        os.environ['FAKE_EPOCH_SECONDS'] = '0'
        assert work(url, study, poll=0.2)['errors'] == []
    finally:
        for key in ('MMLML_SWEEP_TRAINER', 'FAKE_EPOCH_SECONDS'):
            os.environ.pop(key, None)
    counts = sweep.progress()
    assert counts.get('complete') == 1 and counts.get('fail') == 1
    assert sweep.unfinished() == []


def test_join_from_another_process_adds_workers(tmp_path):
    url, study = _database()
    common = ['--storage', url, '--study', study, '--workers', '1', *_slurm()]
    # Five seconds a trial: the join comes while the first worker runs.
    env = _env(FAKE_EPOCH_SECONDS='0.5')
    first = subprocess.Popen([
        sys.executable,
        osp.join(ROOT, 'tools', 'benchmark.py'), *SWEEP, '--work-dir',
        str(tmp_path / 'w'), *common
    ],
                             env=env,
                             cwd=ROOT,
                             stderr=subprocess.PIPE,
                             text=True)
    from mmlml.benchmark.sweep import Sweep
    for _ in range(240):
        try:
            if Sweep(url, study).progress().get('running'):
                break
        except ValueError:  # not defined yet
            pass
        time.sleep(0.25)
    joined, err = _benchmark(tmp_path, '--join', *common, env=env)
    assert 'joining sweep' in err
    assert first.wait(timeout=600) == 0, first.stderr.read()[-3000:]
    sweep = Sweep(url, study)
    workers = {
        trial.user_attrs.get('worker')
        for group in sweep.groups()
        for trial in sweep.trials(group)
    }
    assert len(workers - {None}) == 2  # the first job's and the joined one
    assert len(joined['trials']) == 6


def test_select_method_through_slurm(tmp_path):
    config = tmp_path / 'mine.py'
    config.write_text(f"_base_ = [{osp.join(ROOT, AN)!r}]\n")
    result = subprocess.run([
        sys.executable,
        osp.join(ROOT, 'tools', 'select_method.py'),
        str(config), '--methods', 'an', 'hill', '--seeds', '0', '--lrs', '0.1',
        '--lr-bounds', '0.1', '0.1', '--max-doublings', '0', '--work-dir',
        str(tmp_path / 'select'), '--workers', '2', *_slurm()
    ],
                            capture_output=True,
                            text=True,
                            env=_env(),
                            cwd=tmp_path,
                            timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert 'Best:' in result.stdout
    assert list((tmp_path / 'select').glob('best_*.py'))


@pytest.mark.parametrize('kind', ['sqlite', 'journal', 'postgresql'])
def test_four_local_workers_on_one_storage(tmp_path, kind):
    """No run is lost and none runs twice, whatever the storage."""
    from mmlml.benchmark.sweep import Sweep
    storage = dict(
        sqlite=str(tmp_path / 's.db'),
        journal=str(tmp_path / 's.journal'),
        postgresql=os.environ['MMLML_TEST_DATABASE_URL'])[kind]
    study = f's{uuid.uuid4().hex[:10]}'
    record, _ = _benchmark(tmp_path, *SWEEP, '--storage',
                           storage, '--study', study, '--work-dir',
                           str(tmp_path / 'w'), '--workers', '4')
    sweep = Sweep(storage, study)
    runs = [
        trial.user_attrs['run'] for group in sweep.groups()
        for trial in sweep.trials(group) if trial.state.name == 'COMPLETE'
    ]
    assert len(runs) == len(set(runs)) == 6
    assert sweep.unfinished() == []
    assert len(record['trials']) == len(runs)
