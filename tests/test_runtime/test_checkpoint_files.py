"""No half-written checkpoint: MMEngine's saves write ``<name>.tmp`` and
rename it (mmlml.compat.patch_atomic_checkpoints), and a damaged file is
named in one line where it is loaded (resume included)."""
import errno
import os
import os.path as osp
import shutil

import pytest
import torch
from mmengine.runner import checkpoint as mm_checkpoint
from mmengine.runner.checkpoint import _load_checkpoint

import mmlml  # noqa: F401  (applies the fixes)
from mmlml.compat import CheckpointDamaged, write_atomically
from mmlml.compat.checkpoint_policy import damaged_message


def test_write_cut_short_leaves_the_old_file(tmp_path):
    """A full disk in the middle of a write: the file keeps its old
    content, and no temporary file is left."""
    target = tmp_path / 'epoch_1.pth'
    target.write_bytes(b'old')

    def write(f):
        f.write(b'new, but')
        raise OSError(errno.ENOSPC, 'No space left on device')

    with pytest.raises(OSError, match='No space left'):
        write_atomically(str(target), write)
    assert target.read_bytes() == b'old'
    assert os.listdir(tmp_path) == ['epoch_1.pth']
    write_atomically(str(target), lambda f: f.write(b'new'))
    assert target.read_bytes() == b'new'
    assert os.listdir(tmp_path) == ['epoch_1.pth']


def test_mmengine_saves_through_a_temporary_name(tmp_path, monkeypatch):
    """MMEngine's ``save_checkpoint`` (as the Runner and CheckpointHook
    call it): a save that fails leaves no ``epoch_N.pth``, one that
    succeeds a whole file that loads."""
    import mmengine.runner
    from mmengine.runner import runner as mm_runner
    assert mm_runner.save_checkpoint is mm_checkpoint.save_checkpoint
    # CheckpointHook's import, at each save.
    assert mmengine.runner.save_checkpoint is mm_checkpoint.save_checkpoint
    path = str(tmp_path / 'work' / 'epoch_2.pth')
    save = torch.save

    def cut_short(obj, f, *args, **kwargs):
        f.write(b'PK\x03\x04 half a checkpoint')
        assert f.name == path + '.tmp'  # never the checkpoint's own name
        raise KeyboardInterrupt  # a job killed while saving

    monkeypatch.setattr(torch, 'save', cut_short)
    with pytest.raises(KeyboardInterrupt):
        mm_runner.save_checkpoint({'state_dict': {}}, path)
    assert os.listdir(tmp_path / 'work') == []
    monkeypatch.setattr(torch, 'save', save)
    mm_runner.save_checkpoint({'state_dict': {'w': torch.ones(2)}}, path)
    assert os.listdir(tmp_path / 'work') == ['epoch_2.pth']
    assert torch.equal(
        _load_checkpoint(path)['state_dict']['w'], torch.ones(2))


@pytest.mark.parametrize('damage', ['truncated', 'empty', 'foreign'])
def test_damaged_checkpoint_is_named_in_one_line(tmp_path, damage):
    good = tmp_path / 'good.pth'
    torch.save({'state_dict': {'w': torch.ones(64)}}, good)
    data = good.read_bytes()
    content = {
        'truncated': data[:len(data) // 2],
        'empty': b'',
        'foreign': b'<html>not found</html>'
    }[damage]
    path = tmp_path / 'epoch_3.pth'
    path.write_bytes(content)
    with pytest.raises(CheckpointDamaged) as info:
        _load_checkpoint(str(path))
    message = str(info.value)
    assert message.startswith(f'{path}: the checkpoint is damaged')
    assert '--resume PATH' in message and '\n' not in message
    # torch's cause is cut after a whole sentence or word, its
    # parenthesis closed.
    cause = message[message.index('(') + 1:message.index('); a save')]
    assert cause.endswith(('.', ' ...')) or len(cause) <= 160, cause
    assert cause.count('(') == cause.count(')'), cause
    assert _load_checkpoint(str(good))['state_dict']['w'].shape == (64, )


def test_a_long_cause_is_cut_between_words():
    long = RuntimeError('PytorchStreamReader failed reading zip archive: '
                        'failed finding central directory. ' + 'word ' * 40)
    message = damaged_message('x.pth', long)
    assert '(RuntimeError: PytorchStreamReader failed reading zip archive: ' \
        'failed finding central directory.); a save' in message
    words = RuntimeError('word ' * 60)
    assert 'word word ...); a save' in damaged_message('x.pth', words)


def test_resume_from_a_damaged_checkpoint(trained, tmp_path):
    """``tools/train.py --resume`` of a truncated checkpoint: the error
    names the file (the tool prints it as one line), before any
    iteration."""
    damaged = str(tmp_path / 'epoch_2.pth')
    with open(trained.checkpoint, 'rb') as f:
        data = f.read()
    with open(damaged, 'wb') as f:
        f.write(data[:len(data) - 100])
    work_dir = str(tmp_path / 'resumed')
    config = osp.join(trained.directory, 'll_cp.py')
    with pytest.raises(
            CheckpointDamaged, match=f'^{damaged}: the checkpoint '
            'is damaged'):
        trained.tool.main(
            [config, '--work-dir', work_dir, '--resume', damaged])
    # The same file whole resumes.
    shutil.copy(trained.checkpoint, damaged)
    runner = trained.tool.main(
        [config, '--work-dir', work_dir, '--resume', damaged])
    assert runner.epoch == 2


def test_loading_is_said_once(tmp_path, capsys):
    """MMEngine's ``_load_checkpoint`` (the Runner's resume and
    ``load_from``, a pretrained backbone) prints no bare "Loads checkpoint
    by local backend" line beside its caller's logged one; a loader given
    a logger still logs it."""
    path = str(tmp_path / 'w.pth')
    torch.save({'state_dict': {}}, path)
    _load_checkpoint(path)
    assert 'Loads checkpoint' not in capsys.readouterr().out
    from mmengine.logging import MMLogger
    logger = MMLogger.get_instance('said_once', log_level='INFO')
    mm_checkpoint.CheckpointLoader.load_checkpoint(path, logger=logger)
    assert 'Loads checkpoint by local backend' in capsys.readouterr().out
