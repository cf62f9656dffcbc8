import importlib.util
import os.path as osp
import textwrap

import pytest

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))


def load_train_tool(name='mmlml_train_tool'):
    """``tools/train.py`` as a module (its ``merge_args``, ``main``)."""
    spec = importlib.util.spec_from_file_location(
        name, osp.join(ROOT, 'tools', 'train.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def tiny_demo_config(tmp_path):
    """The demo config (configs/demo/an.py) shrunk to a few iterations:
    64 training images (51 train / 13 val after the split), 32 test images,
    batch 16, 2 epochs."""

    def make(loss=None, max_epochs=2):
        head = '' if loss is None else f'loss={loss!r}, '
        path = tmp_path / 'tiny_demo.py'
        path.write_text(
            textwrap.dedent(f"""
            _base_ = [{osp.join(ROOT, 'configs/demo/an.py')!r}]
            train_dataloader = dict(
                batch_size=16,
                dataset=dict(dataset=dict(num_samples=64)))
            val_dataloader = dict(
                batch_size=16,
                dataset=dict(dataset=dict(num_samples=64)))
            test_dataloader = dict(
                batch_size=16, dataset=dict(num_samples=32))
            model = dict(head=dict({head}))
            train_cfg = dict(max_epochs={max_epochs})
            default_hooks = dict(logger=dict(interval=1))
            work_dir = {str(tmp_path / 'work')!r}
            """))
        return str(path)

    return make


@pytest.fixture
def torch_home(tmp_path, monkeypatch):
    """torch.hub's folder in a temporary ``TORCH_HOME``: a checkpoint put
    at ``hub_cache_file(url)`` is what a download of ``url`` would leave,
    so URLs load without the network."""
    import torch
    home = tmp_path / 'torch_home'
    monkeypatch.setenv('TORCH_HOME', str(home))
    monkeypatch.setattr(torch.hub, '_hub_dir', None)
    assert torch.hub.get_dir() == str(home / 'hub')
    return home


#: A pipeline that loads and packs 8x8 images, for the dataset tests.
IMAGE_PIPELINE = [
    dict(type='LoadImageFromFile'),
    dict(type='Resize', scale=8),
    dict(type='PackInputs')
]


def build_image_dataset(cfg):
    """Build a dataset config with :data:`IMAGE_PIPELINE` in MMPretrain's
    default scope, as a Runner does, and check it is of the config's type.
    Returns the config (with the pipeline) and the dataset."""
    from mmengine.registry import DefaultScope

    from mmlml.registry import DATASETS
    cfg = dict(cfg, pipeline=IMAGE_PIPELINE)
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        dataset = DATASETS.build(cfg)
    assert type(dataset).__name__ == cfg['type']
    sample = dataset[0]
    assert tuple(sample['inputs'].shape) == (3, 8, 8)
    return cfg, dataset


def cpu_optim_wrapper(cfg):
    """The config's optimizer wrapper, with MMEngine's ``AmpOptimWrapper``
    (which refuses to be built without CUDA) replaced by ``OptimWrapper``,
    as the README tells CPU users to do
    (``--cfg-options optim_wrapper.type=OptimWrapper``)."""
    cfg = cfg.copy()
    if cfg.get('type') == 'AmpOptimWrapper':
        cfg.type = 'OptimWrapper'
    return cfg
