"""The shell launchers of tools/ (dist_*.sh, slurm_*.sh, demo.sh), checked
with a stand-in ``python`` and ``srun`` that print what they receive: the
arguments reach the tool as given, every launcher runs the project's
environment (``.venv``) unless ``PYTHON`` names another, and the thread
count is the same whichever launcher starts several processes."""
import json
import os
import os.path as osp
import shutil
import subprocess

import pytest
from conftest import ROOT

# Prints what it was started with (after srun's own arguments, for srun)
# as one JSON line.
_ECHO = ('#!/usr/bin/env python3\n'
         'import json, os, sys\n'
         'print(json.dumps(dict(program=sys.argv[0], argv=sys.argv[1:],\n'
         '                      threads=os.environ.get("OMP_NUM_THREADS"),\n'
         '                      mkl=os.environ.get("MKL_NUM_THREADS"))))\n')

#: The scripts a copy of tools/ needs for the launchers checked here.
_SCRIPTS = ('launch_env.sh', 'setup_venv.sh', 'dist_run.sh', 'dist_train.sh',
            'dist_test.sh', 'slurm_run.sh', 'slurm_train.sh', 'slurm_test.sh',
            'demo.sh')


def _stand_in(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_ECHO)
    path.chmod(0o755)
    return str(path)


@pytest.fixture
def launch(tmp_path):
    """Run a launcher of a copy of tools/ whose ``.venv/bin/python`` is a
    stand-in (so is ``python`` and ``srun`` on the PATH); returns what the
    stand-in that ran printed."""
    repo = tmp_path / 'repo'
    (repo / 'tools').mkdir(parents=True)
    for name in _SCRIPTS:
        shutil.copy(osp.join(ROOT, 'tools', name), repo / 'tools' / name)
    for name in ('requirements.txt', 'setup.py'):  # the install's stamp
        shutil.copy(osp.join(ROOT, name), repo / name)
    _stand_in(repo / '.venv' / 'bin' / 'python')
    digest = subprocess.run(
        'cat requirements.txt setup.py | sha256sum | cut -d" " -f1',
        shell=True,
        cwd=repo,
        capture_output=True,
        text=True,
        check=True).stdout
    (repo / '.venv' / '.mmlml-installed').write_text(digest)
    bin_dir = tmp_path / 'bin'
    for name in ('python', 'srun'):
        _stand_in(bin_dir / name)
    base = {
        k: v
        for k, v in os.environ.items()
        if k not in ('PYTHON', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS',
                     'MMLML_VENV')
    }
    base['PATH'] = f'{bin_dir}{os.pathsep}{os.environ["PATH"]}'

    def run(script, *args, **env):
        out = subprocess.run(
            ['bash', str(repo / 'tools' / script), *args],
            capture_output=True,
            text=True,
            env=dict(base, **env),
            check=True)
        return json.loads(out.stdout.strip().splitlines()[-1])

    run.repo = repo
    run.bin = bin_dir
    return run


def test_dist_scripts(launch):
    train = str(launch.repo / 'tools' / 'train.py')
    argv = launch('dist_train.sh', 'my config.py', '2', '--cfg-options',
                  'model.head.loss.type=HillLoss', 'a=[1, 2]')['argv']
    assert argv[:2] == ['-m', 'torch.distributed.run']
    assert '--nproc_per_node=2' in argv
    assert argv[argv.index(train):] == [
        train, 'my config.py', '--launcher', 'pytorch', '--cfg-options',
        'model.head.loss.type=HillLoss', 'a=[1, 2]'
    ]
    test = str(launch.repo / 'tools' / 'test.py')
    argv = launch('dist_test.sh', 'c.py', 'w.pth', '4', '--out',
                  'm.json')['argv']
    assert '--nproc_per_node=4' in argv
    assert argv[argv.index(test):] == [
        test, 'c.py', 'w.pth', '--launcher', 'pytorch', '--out', 'm.json'
    ]


def test_slurm_scripts(launch):
    python = str(launch.repo / '.venv' / 'bin' / 'python')
    argv = launch('slurm_train.sh', 'gpu', 'job', 'c.py', 'work dir',
                  '--amp')['argv']
    assert argv[:2] == ['-p', 'gpu'] and '--job-name=job' in argv
    assert argv[argv.index('-u') - 1:] == [
        python, '-u',
        str(launch.repo / 'tools' / 'train.py'), 'c.py', '--work-dir=work dir',
        '--launcher=slurm', '--amp'
    ]
    argv = launch('slurm_test.sh', 'gpu', 'job', 'c.py', 'w.pth', '--out',
                  'm.json')['argv']
    assert argv[argv.index('-u'):] == [
        '-u',
        str(launch.repo / 'tools' / 'test.py'), 'c.py', 'w.pth',
        '--launcher=slurm', '--out', 'm.json'
    ]


def test_launchers_run_the_project_environment(launch):
    """``.venv``'s Python without activation; ``PYTHON`` names another;
    ``python`` on the PATH where the project has no environment."""
    venv = str(launch.repo / '.venv' / 'bin' / 'python')
    assert launch('dist_train.sh', 'c.py', '2')['program'] == venv
    assert launch('demo.sh', 'c.py')['program'] == venv
    argv = launch('slurm_train.sh', 'p', 'j', 'c.py', 'w')['argv']
    assert argv[argv.index('-u') - 1] == venv
    other = _stand_in(launch.repo.parent / 'other' / 'python')
    assert launch(
        'dist_train.sh', 'c.py', '2', PYTHON=other)['program'] == other
    argv = launch(
        'slurm_test.sh', 'p', 'j', 'c.py', 'w.pth', PYTHON=other)['argv']
    assert argv[argv.index('-u') - 1] == other
    shutil.rmtree(launch.repo / '.venv')
    assert launch('dist_train.sh', 'c.py',
                  '2')['program'] == str(launch.bin / 'python')


def test_launchers_agree_on_the_thread_count(launch):
    """One OpenMP thread a process where a node runs several, as torchrun
    sets it (and slurm set none: a different thread count ends with other
    weights); a count the user exported is kept; one process is left
    alone."""
    slurm = dict(GPUS='2', GPUS_PER_NODE='2')
    for got in (launch('dist_train.sh', 'c.py', '2'),
                launch('slurm_train.sh', 'p', 'j', 'c.py', 'w', **slurm)):
        assert got['threads'] == got['mkl'] == '1'
    assert launch(
        'dist_test.sh', 'c.py', 'w.pth', '2',
        OMP_NUM_THREADS='3')['threads'] == '3'
    assert launch(
        'slurm_test.sh',
        'p',
        'j',
        'c.py',
        'w.pth',
        OMP_NUM_THREADS='3',
        **slurm)['threads'] == '3'
    assert launch('dist_train.sh', 'c.py', '1')['threads'] is None
    assert launch(
        'slurm_train.sh', 'p', 'j', 'c.py', 'w', GPUS='1',
        GPUS_PER_NODE='8')['threads'] is None
    # 16 tasks on nodes of 8: 8 a node.
    assert launch(
        'slurm_train.sh', 'p', 'j', 'c.py', 'w', GPUS='16',
        GPUS_PER_NODE='8')['threads'] == '1'


def test_demo_caps_threads(launch):
    """demo.sh runs one thread unless told (a thread per core is many
    times slower on a machine with other jobs), as run_tests.sh's
    workers."""
    assert launch('demo.sh')['threads'] == '1'
    assert launch('demo.sh')['argv'][0] == 'tools/demo.py'
    assert launch('demo.sh', OMP_NUM_THREADS='4')['threads'] == '4'
