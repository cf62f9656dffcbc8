import os.path as osp
import textwrap

import pytest

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))


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
