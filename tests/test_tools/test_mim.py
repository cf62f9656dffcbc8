"""OpenMMLab's ``mim`` finds the installed mmlml: ``mim search mmlml``
lists the model zoo of configs/*/metafile.yml and ``mim train mmlml
CONFIG`` runs tools/train.py (for the editable install of
``pip install -e .`` too, see setup.py)."""
import glob
import importlib.util
import os.path as osp
import re
import subprocess
import sys

import pytest
import yaml
from conftest import ROOT

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec('mim') is None,
    reason='openmim is not installed (pip install openmim)')

#: The overrides of tests/conftest.py's tiny_demo_config: 64 training
#: images in batches of 16, 2 epochs.
TINY = [
    'train_dataloader.batch_size=16',
    'train_dataloader.dataset.dataset.num_samples=64',
    'val_dataloader.batch_size=16',
    'val_dataloader.dataset.dataset.num_samples=64',
    'test_dataloader.batch_size=16',
    'test_dataloader.dataset.num_samples=32',
    'train_cfg.max_epochs=2',
]


def mim(*args, cwd=ROOT, timeout=300):
    return subprocess.run([sys.executable, '-m', 'mim', *args],
                          capture_output=True,
                          text=True,
                          cwd=cwd,
                          timeout=timeout)


def zoo():
    """``{model name: config}`` of every metafile the model index lists."""
    with open(osp.join(ROOT, 'model-index.yml')) as f:
        imports = yaml.safe_load(f)['Import']
    assert sorted(imports) == sorted(
        osp.relpath(path, ROOT)
        for path in glob.glob(osp.join(ROOT, 'configs', '*', 'metafile.yml')))
    models = {}
    for path in imports:
        with open(osp.join(ROOT, path)) as f:
            for model in yaml.safe_load(f)['Models']:
                assert osp.isfile(osp.join(ROOT, model['Config'])), model
                models[model['Name']] = model['Config']
    return models


def test_mim_search_lists_the_model_zoo():
    result = mim('search', 'mmlml')
    assert result.returncode == 0, result.stderr[-3000:]
    found = re.findall(r'^config id: (\S+)$', result.stdout, re.M)
    expected = zoo()
    assert len(expected) >= 100
    assert sorted(found) == sorted(expected)
    assert 'configs/hill_splc/hill_resnet50_1xb128_coco2014-40left.py' \
        in result.stdout


@pytest.mark.slow
def test_mim_train_runs_the_demo(tmp_path):
    work_dir = tmp_path / 'work'
    result = mim('train', 'mmlml', 'configs/demo/an.py', '--work-dir',
                 str(work_dir), '--cfg-options', *TINY)
    assert result.returncode == 0, (
        result.stdout[-2000:] + result.stderr[-3000:])
    assert 'Training finished successfully' in result.stdout
    assert (work_dir / 'epoch_2.pth').is_file()
    # The command it ran: mmlml's tools/train.py (found through
    # mmlml/.mim/tools in the installed package).
    command = re.search(r'Training command is (.*)\. $', result.stdout, re.M)
    assert command and '.mim/tools/train.py' in command.group(1)
