"""A sweep runs from an installed package, outside any checkout: a
non-editable install ships the configs, the tools and the embedded
domain's backbone under ``mmlml/.mim`` (setup.py), and the sweep finds
them there (``REPO_ROOT``, :mod:`mmlml.benchmark.sweep.settings`)."""
import json
import os
import os.path as osp
import shutil
import subprocess
import sys

import pytest
from conftest import ROOT

pytest.importorskip('optuna')

#: What the build reads: the package and what setup.py ships beside it.
SOURCES = ('mmlml', 'configs', 'tools', 'checkpoints', 'model-index.yml',
           'setup.py', 'setup.cfg', 'README.md', 'requirements.txt')


@pytest.mark.slow
def test_a_sweep_runs_from_a_non_editable_install(tmp_path):
    # Built from a copy: building in the checkout would replace the
    # links of its editable install's mmlml/.mim with copies.
    source = tmp_path / 'source'
    for name in SOURCES:
        path = osp.join(ROOT, name)
        if osp.isdir(path):
            shutil.copytree(
                path,
                source / name,
                ignore=shutil.ignore_patterns('__pycache__', '.mim'))
        elif osp.isfile(path):
            shutil.copyfile(path, source / name)
    target = tmp_path / 'installed'
    subprocess.run([
        sys.executable, '-m', 'pip', 'install', '-q', '--no-deps',
        '--no-build-isolation', '--target',
        str(target),
        str(source)
    ],
                   check=True,
                   capture_output=True)
    shipped = target / 'mmlml' / '.mim'
    assert (shipped / 'checkpoints').is_dir() and (shipped / 'tools').is_dir()
    shutil.rmtree(source)  # nothing of a checkout is left to lean on

    run = tmp_path / 'elsewhere'
    run.mkdir()
    env = dict(os.environ, PYTHONPATH=str(target), OMP_NUM_THREADS='1')
    result = subprocess.run([
        sys.executable,
        str(shipped / 'tools' / 'benchmark.py'),
        str(shipped / 'configs' / 'demo' / 'an.py'), '--modes', 'linear',
        '--seeds', '0', '--lrs', '0.1', '--lr-bounds', '0.1', '0.1',
        '--max-doublings', '0', '--workers', '1', '--storage',
        str(run / 's.db'), '--work-dir',
        str(run / 'w'), '--out',
        str(run / 'b.json'), '--cfg-options', 'train_cfg.max_epochs=2',
        'train_dataloader.dataset.dataset.num_samples=32',
        'val_dataloader.dataset.dataset.num_samples=32',
        'test_dataloader.dataset.num_samples=16',
        'train_dataloader.batch_size=16'
    ],
                            cwd=str(run),
                            env=env,
                            capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stderr[-2000:]
    record = json.loads((run / 'b.json').read_text())
    runs = record['results']['linear']['single_positive']['an']['runs']
    assert len(runs) == 1 and 0 <= runs[0]['mAP'] <= 100
    # The trial trained the shipped config.
    log = (run / 'w' / 'linear' / 'single_positive' / 'lr0.1_ep2' / 'an' /
           'seed0' / 'log.txt').read_text()
    assert str(shipped / 'configs' / 'demo' / 'an.py') in log
