"""tools/dist_*.sh and tools/slurm_*.sh hand their arguments to the tool
as given, checked with a stand-in ``python`` and ``srun`` that print what
they receive."""
import json
import os
import os.path as osp
import subprocess

import pytest
from conftest import ROOT

# Prints its arguments as a JSON list (after srun's own, for srun).
_ECHO = ('#!/usr/bin/env python3\n'
         'import json, sys\n'
         'print(json.dumps(sys.argv[1:]))\n')


@pytest.fixture
def launch(tmp_path):
    """Run a script of tools/ with the stand-ins first on the PATH; return
    the argument list the stand-in got."""
    for name in ('python', 'srun'):
        path = tmp_path / name
        path.write_text(_ECHO)
        path.chmod(0o755)
    env = dict(os.environ, PATH=f'{tmp_path}{os.pathsep}{os.environ["PATH"]}')

    def run(script, *args):
        out = subprocess.run(
            ['bash', osp.join(ROOT, 'tools', script), *args],
            capture_output=True,
            text=True,
            env=env,
            check=True)
        return json.loads(out.stdout.strip().splitlines()[-1])

    return run


def test_dist_scripts(launch):
    train = osp.join(ROOT, 'tools', 'train.py')
    argv = launch('dist_train.sh', 'my config.py', '2', '--cfg-options',
                  'model.head.loss.type=HillLoss', 'a=[1, 2]')
    assert argv[:2] == ['-m', 'torch.distributed.run']
    assert '--nproc_per_node=2' in argv
    assert argv[argv.index(train):] == [
        train, 'my config.py', '--launcher', 'pytorch', '--cfg-options',
        'model.head.loss.type=HillLoss', 'a=[1, 2]'
    ]
    test = osp.join(ROOT, 'tools', 'test.py')
    argv = launch('dist_test.sh', 'c.py', 'w.pth', '4', '--out', 'm.json')
    assert '--nproc_per_node=4' in argv
    assert argv[argv.index(test):] == [
        test, 'c.py', 'w.pth', '--launcher', 'pytorch', '--out', 'm.json'
    ]


def test_slurm_scripts(launch):
    argv = launch('slurm_train.sh', 'gpu', 'job', 'c.py', 'work dir', '--amp')
    assert argv[:2] == ['-p', 'gpu'] and '--job-name=job' in argv
    assert argv[argv.index('-u'):] == [
        '-u',
        osp.join(ROOT, 'tools', 'train.py'), 'c.py', '--work-dir=work dir',
        '--launcher=slurm', '--amp'
    ]
    argv = launch('slurm_test.sh', 'gpu', 'job', 'c.py', 'w.pth', '--out',
                  'm.json')
    assert argv[argv.index('-u'):] == [
        '-u',
        osp.join(ROOT, 'tools', 'test.py'), 'c.py', 'w.pth',
        '--launcher=slurm', '--out', 'm.json'
    ]
