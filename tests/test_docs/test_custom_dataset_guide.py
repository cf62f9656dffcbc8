"""docs/custom_dataset.md works as written: its script writes an annotation
that CustomMultiLabelDataset reads, its dataset config trains and validates
with a stock MMPretrain model, and the complete config it points to
(configs/custom/partial_label_custom_dataset.py) builds its datasets on the
guide's layout and trains with the README's CPU smoke test."""
import importlib.util
import json
import os
import os.path as osp
import re
import shlex

import mmcv
import numpy as np
import pytest
from conftest import ROOT, load_train_tool
from mmengine.config import Config
from mmengine.registry import DefaultScope
from mmengine.runner import Runner

import mmlml  # noqa: F401
from mmlml.datasets import CustomMultiLabelDataset
from mmlml.registry import DATASETS

GUIDE = osp.join(ROOT, 'docs', 'custom_dataset.md')
#: The complete config of the guide (section 6) and the README.
CUSTOM_CONFIG = 'configs/custom/partial_label_custom_dataset.py'
#: The classes of the guide's example annotation.
CLASSES = ['cat', 'dog', 'car', 'tree']


def write_custom_dataset(root, num_train=10, num_test=4, seed=0):
    """The guide's layout under ``root`` (``images/``, ``train.json``,
    ``test.json``): 32x32 images of the 4 classes (a white band per
    positive); in train.json each label is known (positive or negative)
    with probability 0.6, the rest unknown; test.json is fully labelled
    (``gt_label`` only, as the example config reads it)."""
    rng = np.random.RandomState(seed)
    (root / 'images').mkdir(parents=True, exist_ok=True)
    for split, count in (('train', num_train), ('test', num_test)):
        data_list = []
        for i in range(count):
            present = rng.rand(len(CLASSES)) < 0.4
            img = np.zeros((32, 32, 3), np.uint8)
            for c in np.flatnonzero(present):
                img[8 * c:8 * c + 8, :16] = 255
            name = f'{split}_{i:04d}.jpg'
            mmcv.imwrite(img, str(root / 'images' / name))
            known = rng.rand(len(CLASSES)) < 0.6
            if split == 'test':
                data_list.append(
                    dict(
                        img_path=name,
                        gt_label=np.flatnonzero(present).tolist()))
                continue
            data_list.append(
                dict(
                    img_path=name,
                    gt_label=np.flatnonzero(present & known).tolist(),
                    gt_label_negative=np.flatnonzero(~present
                                                     & known).tolist()))
        (root / f'{split}.json').write_text(
            json.dumps(
                dict(metainfo=dict(classes=CLASSES), data_list=data_list)))


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


def test_guide_names_the_complete_config():
    with open(GUIDE) as f:
        guide = f.read()
    with open(osp.join(ROOT, 'README.md')) as f:
        readme = f.read()
    assert CUSTOM_CONFIG in guide and CUSTOM_CONFIG in readme


def test_complete_config_builds_its_datasets(tmp_path, monkeypatch):
    write_custom_dataset(tmp_path / 'data' / 'mine', num_train=20)
    monkeypatch.chdir(tmp_path)
    cfg = Config.fromfile(osp.join(ROOT, CUSTOM_CONFIG))
    assert 'mmlml' in cfg.custom_imports['imports']
    # Every place of the number of classes agrees with the annotation.
    assert cfg.model.head.num_classes == len(CLASSES)
    assert cfg.data_preprocessor.num_classes == len(CLASSES)
    assert cfg.model.head.loss.loss_weight == 1 / len(CLASSES)
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        train = DATASETS.build(cfg.train_dataloader.dataset)
        val = DATASETS.build(cfg.val_dataloader.dataset)
        test = DATASETS.build(cfg.test_dataloader.dataset)
    # The wrapped dataset is the guide's, none of the paper's VOC.
    assert type(train.dataset).__name__ == 'CustomMultiLabelDataset'
    assert train.dataset.data_root == 'data/mine/'
    assert (len(train), len(val), len(test)) == (16, 4, 4)
    assert train.mode == val.mode == 'annotated'
    assert val.eval_unknown == 'ignore'
    assert list(train.metainfo['classes']) == CLASSES
    # Training samples carry the observed labels (1 / 0 / -1), evaluation
    # samples MMPretrain's encoding with the unknown labels ignored (-1).
    sample = train[0]
    assert sample['inputs'].shape[-2:] == (448, 448)
    np.testing.assert_array_equal(sample['data_samples'].gt_score.numpy(),
                                  train.observed_labels[0])
    # The fully labelled test set: every class known, MMPretrain's
    # one-hot targets (no evaluation gt_score).
    assert test.annotation_statistics()['num_unknown'] == 0
    assert 'gt_score' not in test.get_data_info(0)


def _readme_smoke_test():
    """The README's CPU smoke test of the complete config, as arguments of
    tools/train.py."""
    with open(osp.join(ROOT, 'README.md')) as f:
        text = f.read().replace('\\\n', ' ')
    line = next(
        line for line in text.split('\n')
        if line.startswith(f'python tools/train.py {CUSTOM_CONFIG}')
        and '--smoke' in line)
    return shlex.split(line)[2:]


def test_complete_config_trains_with_the_readme_smoke_test(
        tmp_path, monkeypatch):
    """The README's smoke-test command, run in this process: two epochs of
    the complete config on the guide's layout, then its test set."""
    write_custom_dataset(tmp_path / 'data' / 'mine', num_train=5, num_test=2)
    monkeypatch.chdir(tmp_path)
    train_tool = load_train_tool()
    args = train_tool.parse_args(_readme_smoke_test())
    assert args.config == CUSTOM_CONFIG
    cfg = train_tool.merge_args(
        Config.fromfile(osp.join(ROOT, args.config)), args)
    # --smoke: random weights, no worker processes (so no persistent
    # ones), 64 px images, the test set too.
    assert cfg.model.backbone.init_cfg is None
    assert cfg.train_dataloader.persistent_workers is False
    assert cfg.test_dataloader.num_workers == 0
    assert cfg.test_dataloader.dataset.pipeline[1].scale == (64, 64)
    # No checkpoint files (a ResNet-50 with Adam's state is 300 MB each).
    cfg.default_hooks.checkpoint = dict(type='CheckpointHook', interval=-1)
    runner = Runner.from_cfg(cfg)
    train_tool.check_training_setup(runner)
    runner.train()
    assert runner.epoch == 2
    assert runner.work_dir == osp.join(str(tmp_path), 'work_dirs', 'smoke')
    metrics = runner.test()
    assert 0 <= metrics['multi-label/mAP'] <= 100


def _readme_select_method():
    """The README's two tools/select_method.py commands on the complete
    config (step 4), as arguments: ``(smoke, selection)``."""
    with open(osp.join(ROOT, 'README.md')) as f:
        text = f.read().replace('\\\n', ' ')
    lines = [
        shlex.split(line)[2:] for line in text.split('\n')
        if line.startswith(f'python tools/select_method.py {CUSTOM_CONFIG}')
    ]
    smoke = next(line for line in lines if '--smoke' in line)
    return smoke, next(line for line in lines if '--smoke' not in line)


@pytest.mark.slow
def test_readme_method_selection_runs_on_a_custom_dataset(
        tmp_path, monkeypatch, capsys):
    """The README's step 4 as written, on the guide's layout (observed
    negatives in train.json, a fully labelled test.json), from a folder
    of one's own: the smoke command trains every method on it (``an`` as
    ANLoss, EM + APL's warm-up within the run), the selection command is
    the same without --smoke. Four runs of a ResNet-50 at 64 px, about a
    minute on a CPU."""
    smoke, selection = _readme_select_method()
    assert smoke[0] == CUSTOM_CONFIG and smoke[1:3] == ['--methods', 'an']
    assert [word for word in smoke if word != '--smoke'] == selection
    write_custom_dataset(tmp_path / 'data' / 'mine', num_train=10, num_test=2)
    (tmp_path / 'configs').symlink_to(osp.join(ROOT, 'configs'))
    monkeypatch.chdir(tmp_path)
    spec = importlib.util.spec_from_file_location(
        'mmlml_select_method_readme',
        osp.join(ROOT, 'tools', 'select_method.py'))
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    result = tool.main(smoke)
    out = capsys.readouterr().out
    assert sorted(name for name, _ in result['ranking']) == sorted(smoke[2:6])
    assert result['failed'] == {} and result['out'] is None
    assert 'Smoke run: an, hill, em_apl, gr trained on your data' in out
    work = 'work_dirs/select_method/partial_label_custom_dataset-smoke'
    assert not any(
        osp.basename(p).startswith('best_') for p in os.listdir(work))
    an = Config.fromfile(osp.join(work, 'configs', 'an.py'))
    assert an.model.head.loss.type == 'ANLoss'
    em_apl = Config.fromfile(osp.join(work, 'configs', 'em_apl.py'))
    assert em_apl.custom_hooks[-1].warmup_epochs == 1  # of the 2 epochs
    assert tool.parse_args(selection).methods == smoke[2:6]
