"""tools/train.py refuses a config it cannot run before anything is built,
in one line: a bad ``compile`` value or backend, and a two-stage method
(VLPL, GPR) whose first stage's scores do not exist."""
import os.path as osp
import subprocess
import sys

import pytest
from conftest import ROOT, load_train_tool
from mmengine.config import Config

TRAIN = load_train_tool()


def _merge(config, *options):
    args = TRAIN.parse_args([
        osp.join(ROOT, config), '--smoke', '--work-dir', 'unused',
        *(['--cfg-options', *options] if options else [])
    ])
    return TRAIN.merge_args(Config.fromfile(args.config), args)


@pytest.mark.parametrize('option, message', [
    ('compile=maybe', "compile must be True, False or a dict.*'maybe'"),
    ('compile.backend=nosuch',
     "compile.backend 'nosuch' is not a backend of torch.compile; it has "
     '.*inductor'),
])
def test_a_bad_compile_setting_is_refused(option, message):
    with pytest.raises(ValueError, match=message):
        _merge('configs/demo/an.py', option)
    _merge('configs/demo/an.py', "compile.backend=aot_eager")


@pytest.mark.parametrize('config',
                         ['configs/demo/vlpl.py', 'configs/demo/gpr.py'])
def test_a_second_stage_without_its_scores_says_how_to_make_them(
        tmp_path, monkeypatch, config):
    monkeypatch.chdir(tmp_path)  # no work_dirs/an/scores.npy here
    with pytest.raises(
            FileNotFoundError,
            match='work_dirs/an/scores.npy: the first stage.*'
            'tools/vl_pseudo_label.py'):
        _merge(config)


def test_the_refusal_is_one_line(tmp_path):
    result = subprocess.run([
        sys.executable,
        osp.join(ROOT, 'tools', 'train.py'),
        osp.join(ROOT, 'configs', 'demo', 'vlpl.py'), '--smoke'
    ],
                            cwd=tmp_path,
                            capture_output=True,
                            text=True)
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith('[train] work_dirs/an/scores.npy: the first')
    assert 'Traceback' not in result.stderr


def _train_script(*args, cwd):
    """``tools/train.py`` run as a script on a few demo images."""
    return subprocess.run([
        sys.executable,
        osp.join(ROOT, 'tools', 'train.py'),
        osp.join(ROOT, 'configs', 'demo', 'an.py'), *args, '--cfg-options',
        'train_dataloader.dataset.dataset.num_samples=32',
        'val_dataloader.dataset.dataset.num_samples=32'
    ],
                          cwd=cwd,
                          capture_output=True,
                          text=True,
                          timeout=600)


@pytest.mark.slow
def test_busy_work_dir_and_damaged_checkpoint_are_one_line(tmp_path):
    """A work dir another training holds, and a ``--resume`` of a damaged
    checkpoint (found once the Runner loads it, inside the training):
    each one line on stderr, exit status 1, no traceback."""
    from mmlml.cli.work_dir_lock import work_dir_lock
    work_dir = str(tmp_path / 'work')
    with work_dir_lock(work_dir):
        busy = _train_script('--work-dir', work_dir, cwd=tmp_path)
    damaged = tmp_path / 'epoch_1.pth'
    damaged.write_bytes(b'PK\x03\x04 cut short')
    resumed = _train_script(
        '--work-dir', work_dir, '--resume', str(damaged), cwd=tmp_path)
    for result, start in (
        (busy, f'[train] the work dir {work_dir} is in use by another '
         'training (pid '),
        (resumed, f'[train] {damaged}: the checkpoint is damaged'),
    ):
        assert result.returncode == 1, result.stderr[-2000:]
        assert result.stderr.strip().splitlines()[-1].startswith(start)
        assert 'Traceback' not in result.stderr


@pytest.mark.parametrize('loss, said', [
    ("type='HilLoss'", '[train] HilLoss is not in the mmpretrain::model '
     'registry: did you mean HillLoss'),
    ("type='HillLoss', lambd=1.5", "[train] HillLoss has no setting "
     "'lambd': did you mean 'lamb'?"),
])
def test_a_misspelt_loss_is_one_line(tmp_path, loss, said):
    """A misspelt type or setting: the closest names, in one line."""
    config = tmp_path / 'typo.py'
    config.write_text(
        f"_base_ = [{osp.join(ROOT, 'configs/demo/an.py')!r}]\n"
        f'model = dict(head=dict(loss=dict(_delete_=True, {loss})))\n')
    result = subprocess.run([
        sys.executable,
        osp.join(ROOT, 'tools', 'train.py'),
        str(config), '--smoke', '--work-dir',
        str(tmp_path / 'work')
    ],
                            cwd=tmp_path,
                            capture_output=True,
                            text=True)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1].startswith(said)
    assert 'Traceback' not in result.stderr
