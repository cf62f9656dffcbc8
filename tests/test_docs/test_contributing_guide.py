"""docs/contributing.md works as written: each of its Python blocks is a
complete file (its first line names it), run here unchanged. The example
loss computes a value, the hook pseudo-labels in a tiny training run, the
reader and the generated dataset yield samples, and the demo configs train
on the example domain. The example classes are registered for the test
only: the registries are restored afterwards."""
import inspect
import os.path as osp
import re
import shutil

import numpy as np
import pytest
import torch
from conftest import ROOT
from mmengine.config import Config
from mmengine.registry import DefaultScope
from stateful_methods import method_runner

import mmlml  # noqa: F401 (registers)
from mmlml.registry import DATASETS, HOOKS, MODELS

GUIDE = osp.join(ROOT, 'docs', 'contributing.md')


def guide_files() -> dict:
    """``{file named on the block's first line: code}`` of the guide's
    Python blocks."""
    with open(GUIDE) as f:
        blocks = re.findall(r'```python\n(.*?)```', f.read(), flags=re.S)
    files = {}
    for block in blocks:
        first = block.splitlines()[0]
        assert first.startswith('# ') and first.endswith('.py'), first
        files[first[2:]] = block
    return files


FILES = guide_files()

#: The modules of the guide's files.
MODULES = {
    path[:-3].replace('/', '.'): code
    for path, code in FILES.items() if path.startswith('mmlml/')
}


@pytest.fixture
def guide():
    """Run the guide's module files (not its configs) and return their
    namespaces by module; the registries forget the example classes after
    the test (and keep what else got registered meanwhile)."""
    namespaces = {}
    try:
        for module, code in MODULES.items():
            namespace = dict(__name__=module)
            exec(compile(code, module, 'exec'), namespace)
            namespaces[module] = namespace
        yield namespaces
    finally:
        for registry in (MODELS, HOOKS, DATASETS):
            for name, cls in list(registry.module_dict.items()):
                if cls.__module__ in MODULES:
                    del registry._module_dict[name]


def test_every_block_is_a_recipe_file():
    """The loss, the hook, the reader, the domain's dataset and config."""
    assert set(FILES) == {
        'mmlml/models/losses/scaled_mse_loss.py',
        'mmlml/hooks/confident_positive_hook.py',
        'mmlml/datasets/benchmarks/tag_table.py',
        'mmlml/datasets/domains/striped_canvases.py',
        'configs/_base_/domains/striped_canvases.py',
    }


def test_loss_computes_its_value(guide):
    loss = MODELS.build(dict(type='ScaledMSELoss', scale=2, reduction='sum'))
    assert loss.scale == 2.0 and isinstance(loss.scale, float)
    cls_score = torch.tensor([[0.0, 1.0, -1.0]])
    target = torch.tensor([[1.0, 0.0, -1.0]])
    prob = torch.sigmoid(cls_score)[0]
    expected = -torch.log(prob[0]) + 2 * (prob[1]**2 + prob[2]**2)
    assert torch.allclose(loss(cls_score, target), expected)
    functional = guide['mmlml.models.losses.scaled_mse_loss'][
        'scaled_mse_loss']
    assert torch.allclose(
        functional(cls_score, target, 2.0, reduction='sum'), expected)
    with pytest.raises(ValueError, match=r'scale must lie in \(0, inf\]'):
        MODELS.build(dict(type='ScaledMSELoss', scale=0))
    # The declared default is the signature's.
    cls = MODELS.get('ScaledMSELoss')
    default = inspect.signature(cls).parameters['scale'].default
    assert default == cls.hyperparameters['scale'].default == 1.0


def test_hook_pseudo_labels_in_a_training_run(guide, tiny_demo_config,
                                              tmp_path):
    """Two epochs of the tiny demo (EM + APL's loss reads the pseudo-labels):
    after the first, the confident unannotated entries become
    pseudo-positives."""
    em_apl = dict(
        head=dict(
            type='PartialLabelLinearClsHead',
            loss=dict(_delete_=True, type='EMAPLLoss', alpha=0.2, beta=0.5)))
    runner = method_runner(
        tiny_demo_config,
        tmp_path,
        model=em_apl,
        hooks=[dict(type='ConfidentPositiveHook', warmup_epochs=1, thr=0.3)],
        max_epochs=2)
    runner.train()
    (hook, ) = [
        h for h in runner.hooks if type(h).__name__ == 'ConfidentPositiveHook'
    ]
    store = hook.store
    assert store.num_pseudo_labels > 0
    labelled = store.pseudo_label_mask()
    assert torch.all(hook.observed_labels()[labelled] == 0)
    hooks = HOOKS.get('ConfidentPositiveHook')
    with pytest.raises(ValueError, match=r'thr must lie in \(0, 1\]'):
        hooks(thr=0)
    late = method_runner(
        tiny_demo_config,
        tmp_path,
        model=em_apl,
        hooks=[dict(type='ConfidentPositiveHook', warmup_epochs=2)],
        name='late',
        max_epochs=2)
    with pytest.raises(ValueError, match='warmup_epochs=2 leaves no epoch'):
        late.train()


def test_reader_yields_samples(guide, tmp_path):
    (tmp_path / 'tags.csv').write_text('image,positive,negative\n'
                                       'a.jpg,cat dog,car\n'
                                       'b.jpg,car,\n')
    dataset = DATASETS.build(
        dict(
            type='TagTable',
            ann_file=str(tmp_path / 'tags.csv'),
            data_prefix=dict(img_path=str(tmp_path)),
            metainfo=dict(classes=('cat', 'dog', 'car', 'tree'))))
    assert len(dataset) == 2
    assert dataset[0]['img_path'] == str(tmp_path / 'a.jpg')
    np.testing.assert_array_equal(dataset.get_label_states(0), [1, 1, -1, 0])
    np.testing.assert_array_equal(dataset.get_label_states(1), [0, 0, 1, 0])
    (tmp_path / 'bad.csv').write_text('image,positive,negative\n'
                                      'a.jpg,bird,\n')
    with pytest.raises(
            ValueError, match="line 2: positive names the class "
            "'bird'"):
        DATASETS.build(
            dict(
                type='TagTable',
                ann_file=str(tmp_path / 'bad.csv'),
                metainfo=dict(classes=('cat', ))))


def test_domain_dataset_checks_then_draws(guide):
    dataset = DATASETS.build(
        dict(type='StripedCanvases', num_samples=20, num_classes=4))
    matrix = dataset.get_label_matrix()
    assert matrix.shape == (20, 4) and 1 <= matrix.sum(1).min()
    assert matrix.sum(1).max() <= 3
    sample = dataset[0]
    assert sample['img'].shape == (32, 32, 3)
    assert sample['gt_label'] == np.flatnonzero(matrix[0]).tolist()
    for bad, match in ((dict(num_classes=20), 'num_classes must be an '
                        r'integer in \[2, 16\]'),
                       (dict(img_size=8), 'img_size must hold 2 rows'),
                       (dict(seed=None), r'seed is required \(every')):
        with pytest.raises(ValueError, match=match):
            DATASETS.build(dict(type='StripedCanvases', **bad))


def test_demo_configs_build_on_the_domain(guide, tmp_path, monkeypatch):
    """The domain file beside the others: the demo configs read what it
    defines and their datasets yield samples."""
    configs = tmp_path / 'configs'
    shutil.copytree(osp.join(ROOT, 'configs'), configs)
    path = 'configs/_base_/domains/striped_canvases.py'
    (tmp_path / path).write_text(FILES[path])
    monkeypatch.setenv('MMLML_DEMO_DOMAIN', 'striped_canvases')
    cfg = Config.fromfile(str(configs / 'demo' / 'role.py'))
    assert cfg.num_classes == cfg.model.head.num_classes == 8
    assert cfg.data_preprocessor.num_classes == 8
    assert cfg.model.head.label_estimator.num_samples == cfg.num_train_samples
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        train = DATASETS.build(cfg.train_dataloader.dataset)
        test = DATASETS.build(cfg.test_dataloader.dataset)
    assert type(train.dataset).__name__ == 'StripedCanvases'
    assert len(train) == cfg.num_train_samples
    sample = train[0]
    assert sample['inputs'].shape == (3, 32, 32)
    assert sample['data_samples'].gt_label.numel() == 1  # single positive
    assert test.get_label_matrix().shape[1] == 8
