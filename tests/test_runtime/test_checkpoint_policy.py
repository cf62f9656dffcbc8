"""Safe checkpoint loading (mmlml.compat.patch_checkpoint_loading): crafted
files are refused, the checkpoints of a real training load with
``weights_only=True`` (resume, load_from via tools/test.py, the tools that
read checkpoints), and the allow-list is active only while MMEngine loads.
"""
import json
import os
import os.path as osp
import pickle
import subprocess
import sys
import types

import numpy as np
import pytest
import torch
from conftest import ROOT  # noqa: E402
from mmengine.config import Config
from mmengine.hooks import Hook
from mmengine.logging.history_buffer import HistoryBuffer
from mmengine.optim.scheduler.param_scheduler import OneCycleParamScheduler
from mmengine.runner import Runner, load_checkpoint
from mmengine.runner.checkpoint import (CheckpointLoader, _load_checkpoint,
                                        _load_checkpoint_with_prefix)

import mmlml  # noqa: F401  (applies the fixes)
from mmlml import compat

BACKBONE = osp.join(ROOT, 'checkpoints/synthetic_shapes_source_backbone.pth')


class Payload:
    """Pickles as a call of ``func(*args)``, as a malicious file would."""

    def __init__(self, func, *args):
        self.func, self.args = func, args

    def __reduce__(self):
        return self.func, self.args


class Calibration:
    """A user class that a trusted foreign checkpoint pickles."""

    def __init__(self, scale=1.0):
        self.scale = scale


def crafted(path, payload):
    """A checkpoint with real weights and ``payload`` in its meta."""
    torch.save(
        dict(state_dict={'w': torch.ones(2)}, meta=dict(note=payload)),
        str(path))
    return str(path)


# ------------------------------------------------------------ the training

CONFIG = """
_base_ = [{base!r}]
train_dataloader = dict(
    batch_size=16,
    dataset=dict(dataset=dict(num_samples=64,
                              pipeline=[dict(type='PackInputs')])))
val_dataloader = dict(
    batch_size=16, dataset=dict(dataset=dict(num_samples=64)))
test_dataloader = dict(batch_size=16, dataset=dict(num_samples=32))
train_cfg = dict(max_epochs={max_epochs})
custom_hooks = [
    dict(type='APLHook', warmup_epochs=1),
    dict(type='EMAHook'),
]
default_hooks = dict(
    logger=dict(interval=1),
    checkpoint=dict(interval=1, max_keep_ckpts=-1, save_best=None))
work_dir = {work_dir!r}
"""


def write_config(path, work_dir, max_epochs=2):
    """EM + APL (label-store state) with EMAHook on the tiny demo data:
    51 training images, 4 iterations per epoch."""
    path.write_text(
        CONFIG.format(
            base=osp.join(ROOT, 'configs/demo/em_apl.py'),
            max_epochs=max_epochs,
            work_dir=str(work_dir)))
    return str(path)


@pytest.fixture(scope='module')
def trained(tmp_path_factory):
    """One tiny training shared by the tests: its config, work dir, log
    file, checkpoints and final number of pseudo-labels."""
    tmp = tmp_path_factory.mktemp('safety')
    work_dir = tmp / 'work'
    config = write_config(tmp / 'tiny_em_apl.py', work_dir)
    runner = Runner.from_cfg(Config.fromfile(config))
    runner.train()
    log_file = osp.join(runner.log_dir, f'{runner.timestamp}.log')
    return types.SimpleNamespace(
        tmp=tmp,
        config=config,
        work_dir=str(work_dir),
        log_file=log_file,
        epoch_1=str(work_dir / 'epoch_1.pth'),
        epoch_2=str(work_dir / 'epoch_2.pth'),
        pseudo_labels=runner.model.head.label_store.num_pseudo_labels)


# -------------------------------------------------------- crafted files


@pytest.mark.parametrize('kind', ['os.system', 'builtins.open'])
def test_crafted_checkpoint_is_refused(tmp_path, monkeypatch, kind):
    marker = tmp_path / 'pwned'
    if kind == 'os.system':
        payload, name = Payload(os.system, f'touch {marker}'), 'system'
    else:
        payload, name = Payload(open, str(marker), 'w'), 'io.open'
    path = crafted(tmp_path / 'ckpt.pth', payload)
    model = torch.nn.Linear(2, 2)
    # Neither torch's switch for unsafe default loads changes anything.
    monkeypatch.setenv('TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD', '1')
    loads = [
        lambda: CheckpointLoader.load_checkpoint(path, map_location='cpu'),
        lambda: _load_checkpoint(path),
        lambda: load_checkpoint(model, path, map_location='cpu'),
    ]
    for load in loads:
        with pytest.raises(pickle.UnpicklingError) as info:
            load()
        message = str(info.value)
        assert 'Refused to load the checkpoint' in message
        assert 'outside the allow-list' in message and name in message
        assert not marker.exists()
    if kind == 'builtins.open':  # a global a user could allow-list
        assert 'torch.serialization.add_safe_globals([...])' in message
        assert 'custom_imports' in message
    else:  # torch blocks os / posix whatever the allow-list
        assert 'can never be allow-listed' in message
    # The payload is live: an unsafe load would have run it.
    torch.load(path, weights_only=False)
    assert marker.exists()


@pytest.mark.parametrize(
    'payload, match',
    [
        # getattr is restricted to HistoryBuffer's statistics methods and
        # OneCycleParamScheduler's annealing functions.
        (Payload(getattr, HistoryBuffer, '__init__'), 'getattr.*not allowed'),
        (Payload(getattr, OneCycleParamScheduler,
                 'step'), 'getattr.*not allowed'),
        # OneCycleParamScheduler is only a stand-in: it cannot be called.
        (Payload(OneCycleParamScheduler, None), 'only appear'),
        # Only numeric numpy dtypes: no object (or string) arrays.
        (np.array([1, 'a'], dtype=object), 'ObjectDType'),
        (np.array(['a', 'b']), 'StrDType'),
    ])
def test_allow_list_is_narrow(tmp_path, payload, match):
    path = crafted(tmp_path / 'ckpt.pth', payload)
    with pytest.raises(pickle.UnpicklingError, match=match):
        _load_checkpoint(path)


def test_allow_list_is_active_only_while_mmengine_loads(tmp_path, trained):
    before = set(torch.serialization.get_safe_globals())
    assert _load_checkpoint(trained.epoch_2)['meta']['epoch'] == 2
    assert set(torch.serialization.get_safe_globals()) == before
    # The user's own torch.load keeps torch's default allow-list.
    with pytest.raises(pickle.UnpicklingError, match='Weights only'):
        torch.load(trained.epoch_2)
    # Nested and entered from within: still removed once, at the end.
    with compat.checkpoint_globals():
        with compat.checkpoint_globals():
            torch.load(trained.epoch_2, weights_only=True)
        torch.load(trained.epoch_2, weights_only=True)
    assert set(torch.serialization.get_safe_globals()) == before
    # What the user allow-listed stays allow-listed.
    with torch.serialization.safe_globals([HistoryBuffer]):
        _load_checkpoint(trained.epoch_2)
        assert HistoryBuffer in torch.serialization.get_safe_globals()


def test_trusted_foreign_checkpoint_with_user_allow_list(tmp_path):
    path = crafted(tmp_path / 'ckpt.pth', Calibration(2.0))
    with pytest.raises(pickle.UnpicklingError, match='Calibration'):
        _load_checkpoint(path)
    # As the refusal message says: allow-list the class in your own code.
    with torch.serialization.safe_globals([Calibration]):
        ckpt = _load_checkpoint(path)
    assert ckpt['meta']['note'].scale == 2.0


# ------------------------------------------- checkpoints of a real training


def test_training_checkpoints_load_weights_only(trained):
    allowed = set(compat.checkpoint_safe_global_names())
    for path in (trained.epoch_1, trained.epoch_2):
        needed = set(
            torch.serialization.get_unsafe_globals_in_checkpoint(path))
        assert 'mmengine.logging.history_buffer.HistoryBuffer' in needed
        assert needed <= allowed, needed - allowed
        ckpt = CheckpointLoader.load_checkpoint(path, map_location='cpu')
        buffer = ckpt['message_hub']['log_scalars']['train/loss']
        assert isinstance(buffer, HistoryBuffer)
        assert np.isfinite(
            buffer.mean()) and buffer.data[0].dtype == np.float64
        assert 'ema_state_dict' in ckpt and 'optimizer' in ckpt
    assert ckpt['label_store']['num_samples'] == 51
    assert isinstance(ckpt['message_hub']['runtime_info']['eta'], np.number)


def test_resume(trained):
    """resume=True continues from epoch 2 with the label store and the
    logged history of the checkpoint."""

    class RecordStore(Hook):
        priority = 'LOWEST'  # after APLHook.before_train restored it

        def before_train_epoch(self, runner):
            self.count = runner.model.head.label_store.num_pseudo_labels

    config = write_config(trained.tmp / 'resume.py', trained.tmp / 'resume', 3)
    cfg = Config.fromfile(config)
    cfg.resume, cfg.load_from = True, trained.epoch_2
    runner = Runner.from_cfg(cfg)
    record = RecordStore()
    runner.register_hook(record)
    runner.train()
    assert runner.epoch == 3
    assert record.count == trained.pseudo_labels > 0
    # 3 epochs of 4 iterations: 8 restored from the checkpoint.
    assert len(runner.message_hub.get_scalar('train/loss').data[0]) == 12


@pytest.mark.slow
def test_tools_test_py(trained, tmp_path):
    """tools/test.py (load_from) on the checkpoint, in a new process."""
    out = tmp_path / 'metrics.json'
    command = [
        sys.executable,
        osp.join(ROOT, 'tools/test.py'), trained.config, trained.epoch_2,
        '--work-dir',
        str(tmp_path / 'test'), '--out',
        str(out)
    ]
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, OMP_NUM_THREADS='1'),
        cwd=ROOT)
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    assert 0 <= json.loads(out.read_text())['multi-label/mAP'] <= 100
    assert 'Load checkpoint from' in result.stdout


def test_shipped_backbone_and_checkpoint_tools(trained, tmp_path):
    # The demo configs load it through init_cfg (the training did).
    with open(trained.log_file) as f:
        assert 'synthetic_shapes_source_backbone.pth' in f.read()
    state = _load_checkpoint_with_prefix('backbone.', BACKBONE)
    assert state and all(isinstance(v, torch.Tensor) for v in state.values())

    sys.path.insert(0, osp.join(ROOT, 'tools/model_converters'))
    try:
        import extract_backbone
    finally:
        sys.path.pop(0)
    out = str(tmp_path / 'backbone.pth')
    extract_backbone.main([trained.epoch_2, out])
    extracted = _load_checkpoint(out)
    assert extracted['meta']['extracted_from'] == 'epoch_2.pth'

    from mmlml.apis import build_model
    model, ckpt = build_model(
        Config.fromfile(trained.config), trained.epoch_2, device='cpu')
    assert 'label_store' in ckpt and not model.training


def test_runner_log_lists_applied_fixes(trained):
    """The fixes are applied at import, before the Runner's logger exists;
    the Runner logs them into its log file."""
    with open(trained.log_file) as f:
        lines = [line for line in f if 'mmlml compatibility fixes' in line]
    assert len(lines) == 1
    assert 'safe checkpoint loading' in lines[0]
    assert 'CPU torchrun' in lines[0]
