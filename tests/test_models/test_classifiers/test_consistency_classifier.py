"""ConsistencyClassifier (LASD's consistency regularisation), its
multi-view data preprocessor and the demo config lasd_cr.py: the
regulariser against hand computations, the flow of views through the
pipeline, collate and preprocessor, a Runner on CPU, and the errors."""
import copy
import os.path as osp
import textwrap

import numpy as np
import pytest
import torch
from conftest import ROOT
from mmengine.config import Config
from mmengine.dataset import default_collate, pseudo_collate
from mmengine.registry import init_default_scope
from mmengine.runner import Runner
from mmpretrain.models.utils import ClsDataPreprocessor
from mmpretrain.registry import MODELS, TRANSFORMS
from mmpretrain.structures import DataSample

import mmlml  # noqa: F401
from mmlml.models.classifiers import (ConsistencyClassifier,
                                      MultiViewClsDataPreprocessor,
                                      is_multi_view_batch,
                                      multi_view_consistency)

CONFIG = osp.join(ROOT, 'configs/demo/lasd_cr.py')

# Three views (V, N=2, K=2) and their regulariser, by hand:
# image 0: (0.4^2 + 0) + (0 + 0.3^2) + (0.4^2 + 0.3^2) = 0.50
# image 1: (0 + 0.1^2) + (0.2^2 + 0) + (0.2^2 + 0.1^2) = 0.10
PROBS = [[[0.9, 0.1], [0.2, 0.6]], [[0.5, 0.1], [0.2, 0.5]],
         [[0.9, 0.4], [0.0, 0.6]]]


@pytest.fixture(autouse=True)
def scope():
    init_default_scope('mmpretrain')


def make_sample(label):
    return DataSample(metainfo=dict(sample_idx=0)).set_gt_label(label)


def demo_model_cfg(**overrides):
    cfg = Config.fromfile(CONFIG)
    model = copy.deepcopy(cfg.model)
    model.data_preprocessor = copy.deepcopy(cfg.data_preprocessor)
    model.update(overrides)
    return model


# ------------------------------------------------------------ regulariser
def test_consistency_by_hand():
    probs = torch.tensor(PROBS)
    per_image = multi_view_consistency(probs, reduction='none')
    torch.testing.assert_close(per_image, torch.tensor([0.5, 0.1]))
    torch.testing.assert_close(multi_view_consistency(probs), torch.tensor(.3))
    torch.testing.assert_close(
        multi_view_consistency(list(probs), reduction='sum'), torch.tensor(.6))
    # Two views: one pair.
    torch.testing.assert_close(
        multi_view_consistency(probs[:2], reduction='none'),
        torch.tensor([0.16, 0.01]))


def test_consistency_gradient_reaches_every_view():
    probs = torch.tensor(PROBS, requires_grad=True)
    multi_view_consistency(probs, reduction='sum').backward()
    # d/dp_i sum_{i<j} |p_i - p_j|^2 = 2 (V p_i - sum_j p_j).
    expected = 2 * (3 * probs - probs.sum(0, keepdim=True))
    torch.testing.assert_close(probs.grad, expected.detach())
    assert (probs.grad.abs().sum(dim=(1, 2)) > 0).all()


@pytest.mark.parametrize('probs,match', [
    (torch.rand(1, 2, 3), 'at least 2 views'),
    (torch.rand(2, 3), 'at least 2 views'),
    ([torch.rand(2, 3), torch.rand(2, 4)], 'same shape'),
])
def test_consistency_bad_input(probs, match):
    with pytest.raises(ValueError, match=match):
        multi_view_consistency(probs)
    with pytest.raises(ValueError, match='reduction'):
        multi_view_consistency(torch.rand(2, 2, 3), reduction='avg')


# ---------------------------------------------------- views through a model
def test_loss_on_original_view_and_gradients_reach_all_views():
    model = MODELS.build(demo_model_cfg())
    assert isinstance(model, ConsistencyClassifier)
    assert isinstance(model.data_preprocessor, MultiViewClsDataPreprocessor)
    model.eval()  # batch norm from running statistics: views independent
    torch.manual_seed(0)
    views = [torch.randn(4, 3, 32, 32, requires_grad=True) for _ in range(3)]
    samples = [make_sample(label) for label in ([0], [1], [2], [3, 4])]
    losses = model.loss(views, samples)
    assert set(losses) == {'loss', 'loss_consistency'}

    with torch.no_grad():
        expected = model.head.loss(model.extract_feat(views[0]), samples)
        probs = [model.head(model.extract_feat(v)).sigmoid() for v in views]
    torch.testing.assert_close(losses['loss'], expected['loss'])
    torch.testing.assert_close(losses['loss_consistency'],
                               0.7 * multi_view_consistency(probs))

    sum(losses.values()).backward()
    for view in views:
        assert torch.isfinite(view.grad).all() and view.grad.abs().sum() > 0
    # Without the regulariser only the original view gets a gradient.
    model.consistency_weight = 0.
    for view in views:
        view.grad = None
    sum(model.loss(views, samples).values()).backward()
    assert views[0].grad.abs().sum() > 0
    assert views[1].grad.abs().sum() == 0 and views[2].grad.abs().sum() == 0


def test_pipeline_collate_and_preprocessor():
    pipeline = Config.fromfile(
        CONFIG).train_dataloader.dataset.dataset.pipeline
    transforms = [TRANSFORMS.build(t) for t in pipeline]
    rng = np.random.default_rng(0)
    images, packed = [], []
    for label in ([1], [2, 3]):
        images.append(rng.integers(0, 255, (32, 32, 3), dtype=np.uint8))
        results = dict(
            img=images[-1].copy(), gt_label=np.array(label), sample_idx=0)
        for t in transforms:
            results = t(results)
        packed.append(results)
    # The original view first (the image itself, CHW), then 2 augmentations.
    assert len(packed[0]['inputs']) == 3
    torch.testing.assert_close(packed[0]['inputs'][0],
                               torch.from_numpy(images[0]).permute(2, 0, 1))

    model_cfg = demo_model_cfg()
    preprocessor = MODELS.build(model_cfg.data_preprocessor)
    stock = ClsDataPreprocessor(**{
        k: v
        for k, v in model_cfg.data_preprocessor.items() if k != 'type'
    })
    batch = pseudo_collate(copy.deepcopy(packed))
    assert is_multi_view_batch(batch['inputs'])
    out = preprocessor(batch, training=True)
    assert len(out['inputs']) == 3
    for i, view in enumerate(out['inputs']):
        single = stock(
            dict(inputs=[p['inputs'][i] for p in packed]), training=True)
        torch.testing.assert_close(view, single['inputs'])
    # Labels are processed once, to one-hot scores.
    assert out['data_samples'][1].gt_score.tolist() == [0, 0, 1, 1] + [0] * 16

    stacked = default_collate(copy.deepcopy(packed))
    assert is_multi_view_batch(stacked['inputs'])
    out2 = preprocessor(stacked, training=True)
    for a, b in zip(out['inputs'], out2['inputs']):
        torch.testing.assert_close(a, b)

    # Single-view batches are ClsDataPreprocessor's.
    single = pseudo_collate([
        dict(inputs=p['inputs'][0], data_samples=p['data_samples'])
        for p in copy.deepcopy(packed)
    ])
    assert not is_multi_view_batch(single['inputs'])
    torch.testing.assert_close(
        preprocessor(single)['inputs'],
        stock(copy.deepcopy(single))['inputs'])


# ----------------------------------------------------------------- errors
def test_batch_augments_and_wrong_preprocessor_are_refused():
    mixup = dict(augments=[dict(type='Mixup', alpha=0.8)])
    cfg = demo_model_cfg()
    cfg.data_preprocessor['batch_augments'] = mixup
    with pytest.raises(ValueError, match='batch augments'):
        MODELS.build(cfg)
    with pytest.raises(ValueError, match='batch augments'):
        MODELS.build(demo_model_cfg(train_cfg=mixup))
    cfg = demo_model_cfg()
    cfg.data_preprocessor['type'] = 'ClsDataPreprocessor'
    with pytest.raises(TypeError, match='MultiViewClsDataPreprocessor'):
        MODELS.build(cfg)
    with pytest.raises(ValueError, match='consistency_weight'):
        MODELS.build(demo_model_cfg(consistency_weight=-1))

    preprocessor = MultiViewClsDataPreprocessor(batch_augments=mixup)
    views = [[torch.zeros(3, 8, 8)] * 2] * 3
    with pytest.raises(ValueError, match='Batch augments'):
        preprocessor(dict(inputs=views), training=True)


def test_bad_views_are_refused():
    model = MODELS.build(demo_model_cfg())
    samples = [make_sample([0])] * 2
    with pytest.raises(ValueError, match='MultiView'):
        model.loss(torch.zeros(2, 3, 32, 32), samples)
    with pytest.raises(ValueError, match='at least 2 views'):
        model.loss([torch.zeros(2, 3, 32, 32)], samples)
    with pytest.raises(ValueError, match='same shape'):
        model.loss([torch.zeros(2, 3, 32, 32),
                    torch.zeros(2, 3, 28, 28)], samples)


# ------------------------------------------------------------ with a Runner
def tiny_config(tmp_path, extra=''):
    """The demo config lasd_cr.py shrunk: 64 training images (51 train / 13
    val), batch 16, 2 epochs (the warm-up epoch and one more)."""
    path = tmp_path / 'tiny_lasd_cr.py'
    path.write_text(
        textwrap.dedent(f"""
        _base_ = [{CONFIG!r}]
        train_dataloader = dict(
            batch_size=16, dataset=dict(dataset=dict(num_samples=64)))
        val_dataloader = dict(
            batch_size=16, dataset=dict(dataset=dict(num_samples=64)))
        test_dataloader = dict(batch_size=16, dataset=dict(num_samples=32))
        train_cfg = dict(max_epochs=2)
        default_hooks = dict(logger=dict(interval=1), checkpoint=None)
        work_dir = {str(tmp_path / 'work')!r}
        """) + textwrap.dedent(extra))
    return Runner.from_cfg(Config.fromfile(str(path)))


def test_runner_trains_validates_and_diagnoses(tmp_path):
    runner = tiny_config(
        tmp_path,
        "custom_hooks = [dict(type='MissingLabelDiagnosticsHook')]\n")
    runner.train()
    hub = runner.message_hub
    for key in ('train/loss', 'train/loss_consistency'):
        assert np.isfinite(hub.get_scalar(key).current()), key
    assert hub.get_scalar('train/loss_consistency').current() > 0
    # Validation is single-view, with MMPretrain's evaluators.
    assert 0 <= hub.get_scalar('val/multi-label/mAP').current() <= 100
    assert 'val/multi-label/f1-score' in hub.log_scalars
    # The hook saw the original view only: one row per training sample.
    hook = next(
        h for h in runner.hooks
        if type(h).__name__ == 'MissingLabelDiagnosticsHook')
    assert hook.stats.compute()['num_samples'] == 51
    assert 'missing_label/auc' in hub.log_scalars


def test_runner_without_multi_view_fails_at_first_iteration(tmp_path):
    runner = tiny_config(
        tmp_path, """
        train_dataloader = dict(dataset=dict(dataset=dict(
            pipeline=[dict(type='RandomFlip', prob=0.5),
                      dict(type='PackInputs')])))
        """)
    with pytest.raises(ValueError, match='MultiView transform'):
        runner.train()
    assert runner.iter == 0
