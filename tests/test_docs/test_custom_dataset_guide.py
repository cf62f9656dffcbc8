"""docs/custom_dataset.md works as written: its script writes an annotation
that CustomMultiLabelDataset reads, and its dataset config trains and
validates with a stock MMPretrain model."""
import json
import os.path as osp
import re

import mmcv
import numpy as np
from conftest import ROOT
from mmengine.config import Config
from mmengine.runner import Runner

import mmlml  # noqa: F401
from mmlml.datasets import CustomMultiLabelDataset

GUIDE = osp.join(ROOT, 'docs', 'custom_dataset.md')


def _python_blocks():
    with open(GUIDE) as f:
        return re.findall(r'```python\n(.*?)```', f.read(), flags=re.S)


def test_guide_script_writes_a_readable_annotation(tmp_path, monkeypatch):
    script = next(b for b in _python_blocks() if 'json.dump' in b)
    (tmp_path / 'data' / 'mine').mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    exec(compile(script, GUIDE, 'exec'), {})
    dataset = CustomMultiLabelDataset(
        ann_file='data/mine/train.json', unlisted='unknown')
    np.testing.assert_array_equal(dataset.get_label_states(0), [1, 0, -1, -1])
    np.testing.assert_array_equal(dataset.get_label_states(1), [0, 1, 0, 1])


def test_guide_config_trains_and_validates(tmp_path):
    # Images of 4 classes (a coloured square per positive) with positives,
    # negatives and unknowns, in the guide's layout.
    rng = np.random.RandomState(0)
    root = tmp_path / 'data' / 'mine'
    (root / 'images').mkdir(parents=True)
    data_list = []
    for i in range(40):
        present = rng.rand(4) < 0.4
        img = np.zeros((32, 32, 3), np.uint8)
        for c in np.flatnonzero(present):
            img[8 * c:8 * c + 8, :16] = 255
        mmcv.imwrite(img, str(root / 'images' / f'{i:04d}.jpg'))
        known = rng.rand(4) < 0.6
        data_list.append(
            dict(
                img_path=f'{i:04d}.jpg',
                gt_label=np.flatnonzero(present & known).tolist(),
                gt_label_negative=np.flatnonzero(~present & known).tolist()))
    (root / 'train.json').write_text(
        json.dumps(
            dict(
                metainfo=dict(classes=['a', 'b', 'c', 'd']),
                data_list=data_list)))

    block = next(b for b in _python_blocks() if 'val_dataloader' in b)
    block = block.replace("'data/mine/'", repr(str(root) + '/'))
    config = tmp_path / 'my_config.py'
    bases = [
        osp.join(ROOT, 'configs', '_base_', name)
        for name in ('models/resnet_cifar_tiny_multilabel.py',
                     'schedules/demo_sgd.py', 'default_runtime.py')
    ]
    config.write_text(f'_base_ = {bases!r}\n' + '''
model = dict(head=dict(num_classes=4,
                       loss=dict(_delete_=True, type='HillLoss')))
data_preprocessor = dict(num_classes=4, mean=[0., 0., 0.],
                         std=[255., 255., 255.], to_onehot=True)
train_pipeline = [dict(type='LoadImageFromFile'), dict(type='PackInputs')]
test_pipeline = train_pipeline
''' + block + f'''
train_dataloader.update(batch_size=8, num_workers=0)
val_dataloader.update(batch_size=8, num_workers=0)
train_cfg = dict(max_epochs=2)
test_cfg = None
work_dir = {str(tmp_path / 'work')!r}
''')
    cfg = Config.fromfile(str(config))
    runner = Runner.from_cfg(cfg)
    runner.train()
    metrics = runner.val_loop.run()
    assert 0 <= metrics['multi-label/mAP'] <= 100
    # The validation samples carry the evaluation encoding: known labels.
    val = runner.val_dataloader.dataset
    assert val.eval_unknown == 'ignore'
    sample = val[0]['data_samples']
    expected = np.where(val.observed_labels[0] == 1, 1.,
                        np.where(val.observed_labels[0] == -1, 0., -1.))
    np.testing.assert_array_equal(sample.gt_score.numpy(), expected)
