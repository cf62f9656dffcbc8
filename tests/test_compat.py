"""The fixes of mmlml.compat, each against the failure it fixes."""
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
from mmengine.logging.history_buffer import HistoryBuffer
from mmengine.runner.checkpoint import CheckpointLoader

import mmlml  # noqa: F401
from mmlml import compat


def test_checkpoint_with_mmengine_objects_loads(tmp_path):
    path = tmp_path / 'ckpt.pth'
    torch.save(
        {
            'buffer': HistoryBuffer([1.0, 2.0], [1, 1]),
            'array': np.ones(3),
            'state_dict': {
                'w': torch.ones(2)
            }
        }, path)
    # Plain torch.load (weights_only=True by default) is what fails.
    with pytest.raises(Exception, match='[Ww]eights only load failed'):
        torch.load(path)
    ckpt = CheckpointLoader.load_checkpoint(str(path), map_location='cpu')
    assert isinstance(ckpt['buffer'], HistoryBuffer)
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
        """)
    out = subprocess.run([sys.executable, '-c', script],
                         capture_output=True,
                         text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert 'stock: fails' in out.stdout
    assert 'patched: mmpretrain' in out.stdout


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
