"""The fixes of mmlml.compat, each against the failure it fixes, the
record of the applied fixes, and the guard on stock losses fed mmlml's
training targets. The crafted-file and real-training checks of checkpoint
loading are in test_checkpoint_safety.py."""
import importlib.util
import os.path as osp
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
from conftest import ROOT  # noqa: E402
from mmengine.config import Config
from mmengine.logging.history_buffer import HistoryBuffer
from mmengine.runner import Runner
from mmengine.runner.checkpoint import CheckpointLoader

import mmlml  # noqa: F401
from mmlml import compat
from mmlml.registry import MODELS


def test_checkpoint_with_mmengine_objects_loads(tmp_path):
    path = tmp_path / 'ckpt.pth'
    torch.save(
        {
            'buffer': HistoryBuffer([1.0, 2.0], [1, 1]),
            'array': np.ones(3),
            'arrays': [np.arange(2, dtype=t) for t in ('f4', 'i8', 'u1', '?')],
            'scalar': np.float64(0.5),
            'state_dict': {
                'w': torch.ones(2)
            }
        }, path)
    # Plain torch.load (weights_only=True by default) is what fails.
    with pytest.raises(Exception, match='[Ww]eights only load failed'):
        torch.load(path)
    ckpt = CheckpointLoader.load_checkpoint(str(path), map_location='cpu')
    assert isinstance(ckpt['buffer'], HistoryBuffer)
    assert ckpt['buffer'].mean() == 1.5
    assert [a.dtype.name
            for a in ckpt['arrays']] == ['float32', 'int64', 'uint8', 'bool']
    assert ckpt['scalar'] == 0.5 and isinstance(ckpt['scalar'], np.float64)
    assert torch.equal(ckpt['state_dict']['w'], torch.ones(2))
    with pytest.raises(FileNotFoundError):
        CheckpointLoader.load_checkpoint(str(tmp_path / 'missing.pth'))


def test_package_lookup_without_pkg_resources(tmp_path):
    """`mmpretrain::` base configs parse with pkg_resources unimportable."""
    cfg = tmp_path / 'cfg.py'
    cfg.write_text("_base_ = ['mmpretrain::_base_/default_runtime.py']\n")
    script = textwrap.dedent(f"""
        import sys
        sys.modules['pkg_resources'] = None  # as with setuptools >= 82
        from mmengine.config import Config
        try:
            Config.fromfile({str(cfg)!r})
        except (ImportError, ModuleNotFoundError):
            print('stock: fails')
        import mmlml
        cfg = Config.fromfile({str(cfg)!r})
        print('patched:', cfg.default_scope)
        print('fixes:', mmlml.compat.applied_fixes())
        mmlml.compat.apply_all()  # idempotent
        print(mmlml.compat.applied_fixes_message())
        """)
    out = subprocess.run([sys.executable, '-c', script],
                         capture_output=True,
                         text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert 'stock: fails' in out.stdout
    assert 'patched: mmpretrain' in out.stdout
    assert "fixes: ('checkpoint_loading', 'package_lookup'," in out.stdout
    assert 'fixes applied: safe checkpoint loading' in out.stdout
    assert 'importlib package lookup' in out.stdout


def test_importlib_package_lookup():
    assert compat.is_installed('mmpretrain')
    assert compat.is_installed('mmcv-lite') or compat.is_installed('mmcv')
    assert not compat.is_installed('surely-not-a-package-xyz')
    path = compat.get_installed_path('mmpretrain')
    assert path.endswith('mmpretrain')
    with pytest.raises(ModuleNotFoundError):
        compat.get_installed_path('surely-not-a-package-xyz')


def test_cpu_ddp_wrapper_drops_device_ids():
    """DDP of a CPU module with device_ids=[0] (what the Runner passes)."""
    if torch.cuda.is_available():
        pytest.skip('only meaningful without CUDA')
    script = textwrap.dedent("""
        import os
        os.environ.update(MASTER_ADDR='127.0.0.1', MASTER_PORT='29531',
                          RANK='0', WORLD_SIZE='1', LOCAL_RANK='0')
        import torch
        import mmlml
        from mmengine.dist import init_dist
        from mmengine.model import MMDistributedDataParallel
        init_dist('pytorch', backend='nccl')  # gloo without CUDA
        model = MMDistributedDataParallel(
            module=torch.nn.Linear(2, 2), device_ids=[0])
        print('backend', torch.distributed.get_backend(), model.device_ids)
        """)
    out = subprocess.run([sys.executable, '-c', script],
                         capture_output=True,
                         text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert 'backend gloo None' in out.stdout


# ------------------------------------------------------ the applied fixes


def test_applied_fixes_record():
    names = compat.applied_fixes()
    assert names[0] == 'checkpoint_loading'
    assert {
        'checkpoint_loading', 'cpu_distributed', 'loss_target_guard',
        'average_precision', 'one_cycle_scaling'
    } <= set(names)
    # The package lookup is replaced only where pkg_resources is missing.
    missing = importlib.util.find_spec('pkg_resources') is None
    assert ('package_lookup' in names) == missing
    message = compat.applied_fixes_message()
    count = len(compat.checkpoint_safe_globals())
    assert message.startswith(
        'mmlml compatibility fixes applied: safe checkpoint loading '
        f'({count} globals allow-listed), ')
    assert message.endswith(
        'target guard on CrossEntropyLoss, FocalLoss, AsymmetricLoss, '
        'AP 0 for classes without a known evaluation label, '
        'auto_scale_lr scales OneCycleLR eta_max')
    compat.apply_all()  # idempotent
    assert compat.applied_fixes() == names


# ------------------------------------------------------ average precision


def test_average_precision_of_a_class_without_known_label():
    """A class whose evaluation targets are all -1 (ignored, e.g. no
    verified OpenImages label in the test split) gets AP 0, as a class
    without a positive does; the other classes' APs are unchanged."""
    from mmpretrain.evaluation import AveragePrecision
    pred = torch.tensor([[0.9, 0.2, 0.7], [0.3, 0.8, 0.1], [0.6, 0.4, 0.5]])
    target = torch.tensor([[1, -1, 0], [0, -1, 1], [1, -1, -1]])
    per_class = AveragePrecision.calculate(pred, target, average=None)
    assert per_class[1] == 0
    expected = AveragePrecision.calculate(
        pred[:, [0, 2]], target[:, [0, 2]], average=None)
    torch.testing.assert_close(per_class[[0, 2]], expected)
    assert AveragePrecision.calculate(pred, target) == per_class.mean()


# ------------------------------------- stock losses fed mmlml's -1 targets

STOCK_LOSSES = [
    (dict(type='CrossEntropyLoss', use_sigmoid=True), 'ANLoss'),
    (dict(type='CrossEntropyLoss', use_soft=True), 'ANLoss'),
    (dict(type='FocalLoss'), 'PartialFocalLoss'),
    (dict(type='AsymmetricLoss'), 'PartialAsymmetricLoss'),
    (dict(type='AsymmetricLoss', use_sigmoid=False), 'PartialAsymmetricLoss'),
]


@pytest.mark.parametrize('cfg, replacement', STOCK_LOSSES)
def test_stock_loss_refuses_observed_negatives(cfg, replacement):
    loss = MODELS.build(cfg)
    cls_score = torch.randn(4, 5, generator=torch.Generator().manual_seed(0))
    observed = torch.tensor([[1, 0, -1, 0, 0], [0, 1, 0, 0, -1],
                             [-1, -1, 1, 0, 0], [0, 0, 0, 1, 0]]).float()
    with pytest.raises(ValueError) as info:
        loss(cls_score, observed, avg_factor=4)
    message = str(info.value)
    assert "mmlml's observed negatives (-1)" in message
    assert f"model.head.loss=dict(type='{replacement}')" in message
    assert MODELS.get(replacement) is not None  # a registered mmlml loss

    # Valid targets give what the unguarded loss gives: 0/1 labels and
    # Mixup-like soft scores.
    soft = 0.3 * (observed == 1).float() + 0.7 * (observed.flip(0) == 1)
    for target in ((observed == 1).float(), soft):
        unguarded = type(loss).forward.__wrapped__
        torch.testing.assert_close(
            loss(cls_score, target, avg_factor=4),
            unguarded(loss, cls_score, target, avg_factor=4))


def test_label_smooth_loss_is_not_refused():
    """LabelSmoothLoss (multi_label) smooths every non-positive target,
    -1 included, to eps before its CrossEntropyLoss: it reads -1 as a
    negative, and the guard lets it through."""
    loss = MODELS.build(
        dict(
            type='LabelSmoothLoss',
            label_smooth_val=0.1,
            mode='multi_label',
            use_sigmoid=True))
    cls_score = torch.randn(2, 3)
    target = torch.tensor([[1., -1., 0.], [0., 1., -1.]])
    torch.testing.assert_close(
        loss(cls_score, target), loss(cls_score, (target == 1).float()))


def test_stock_loss_accepts_class_indices():
    """Integer targets (single-label class indices) are left alone."""
    cls_score = torch.randn(3, 4)
    for cfg in (dict(type='FocalLoss'), dict(type='AsymmetricLoss'),
                dict(type='CrossEntropyLoss')):
        assert torch.isfinite(
            MODELS.build(cfg)(cls_score, torch.tensor([0, 3, 1])))


def tiny_config(tmp_path, mode, loss, max_epochs=2):
    """The demo config on 32 images (25 training, 2 iterations per
    epoch), without validation, with ``mode`` labels and ``loss``."""
    path = tmp_path / f'tiny_{mode}.py'
    path.write_text(
        textwrap.dedent(f"""
        _base_ = [{osp.join(ROOT, 'configs/demo/an.py')!r}]
        train_dataloader = dict(
            batch_size=16,
            dataset=dict(mode={mode!r}, dataset=dict(num_samples=32)))
        val_dataloader = None
        val_evaluator = None
        val_cfg = None
        model = dict(head=dict(loss=dict(_delete_=True, **{loss!r})))
        train_cfg = dict(max_epochs={max_epochs})
        default_hooks = dict(
            logger=dict(interval=1),
            checkpoint=dict(interval=100, save_best=None))
        work_dir = {str(tmp_path / mode)!r}
        """))
    return Runner.from_cfg(Config.fromfile(str(path)))


STOCK_BCE = dict(type='CrossEntropyLoss', use_sigmoid=True, loss_weight=1.0)


def test_training_stock_loss_on_full_labels_fails_at_first_iteration(tmp_path):
    runner = tiny_config(tmp_path, 'full', STOCK_BCE)
    with pytest.raises(ValueError, match="type='ANLoss'"):
        runner.train()
    assert runner.iter == 0
    assert not runner.optim_wrapper.optimizer.state  # no optimizer step


def test_training_stock_loss_on_single_positive_labels_trains(tmp_path):
    runner = tiny_config(tmp_path, 'single_positive', STOCK_BCE)
    runner.train()
    assert runner.iter == 4
    losses = runner.message_hub.get_scalar('train/loss').data[0]
    assert len(losses) == 4 and np.all(losses > 0)
