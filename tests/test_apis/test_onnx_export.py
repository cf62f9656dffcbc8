"""mmlml.apis.onnx_export: every head the configs use, exported from
images to probabilities, gives ONNX Runtime's probabilities equal to
PyTorch's at batch sizes 1 and 3; a part that cannot be exported is named
in one line; models whose predictions the graph would not reproduce are
refused."""
import ast
import json
import os
import os.path as osp

import numpy as np
import onnxruntime
import pytest
import torch
import torch.nn as nn
from conftest import ROOT
from mmengine.config import Config
from mmengine.registry import DefaultScope

import mmlml  # noqa: F401
from mmlml.apis.onnx_export import (TOLERANCE, OnnxExportError, export_onnx,
                                    input_size_of)
from mmlml.registry import MODELS

NUM_CLASSES = 5
CLASSES = [f'class {i}' for i in range(NUM_CLASSES)]
SIZE = (32, 24)  # not square: height and width stay in their places
PREPROCESSOR = dict(
    mean=[42., 45., 43.], std=[39., 41., 39.], to_rgb=True, num_classes=5)
TINY_RESNET = dict(
    type='ResNet_CIFAR',
    depth=18,
    stem_channels=8,
    base_channels=8,
    num_stages=4,
    out_indices=(3, ),
    style='pytorch')
LINEAR = dict(num_classes=NUM_CLASSES, in_channels=64, init_cfg=None)

#: One model per head the configs use (and CSRA, mmlml's and MMPretrain's),
#: on a tiny CIFAR ResNet; the ConsistencyClassifier at inference (its
#: multi-view data preprocessor on single-view batches); the
#: EfficientNet-Lite0 backbone of the digit domain.
MODELS_BY_HEAD = dict(
    linear=dict(
        neck=dict(type='GlobalAveragePooling'),
        head=dict(type='MultiLabelLinearClsHead', **LINEAR)),
    partial_label_linear=dict(
        neck=dict(type='GlobalAveragePooling'),
        head=dict(
            type='PartialLabelLinearClsHead',
            loss=dict(type='HillLoss'),
            **LINEAR)),
    csra=dict(
        neck=None,
        head=dict(
            type='CSRAClsHead',
            num_classes=NUM_CLASSES,
            in_channels=64,
            num_heads=4,
            lam=0.1)),
    partial_label_csra=dict(
        neck=None,
        head=dict(
            type='PartialLabelCSRAClsHead',
            num_classes=NUM_CLASSES,
            in_channels=64,
            num_heads=1,
            lam=0.2)),
    boostlu=dict(
        neck=None, head=dict(type='BoostLUClsHead', alpha=5.0, **LINEAR)),
    consistency=dict(
        type='ConsistencyClassifier',
        consistency_weight=0.7,
        neck=dict(type='GlobalAveragePooling'),
        head=dict(
            type='PartialLabelLinearClsHead',
            loss=dict(type='LASDLoss'),
            **LINEAR),
        data_preprocessor=dict(
            type='MultiViewClsDataPreprocessor', **PREPROCESSOR)),
    # The digit domain's backbone (channels-last, as its config sets it).
    efficientnet_lite=dict(
        backbone=dict(
            type='EfficientNetLite', arch='lite0', channels_last=True),
        neck=dict(type='GlobalAveragePooling'),
        head=dict(
            type='MultiLabelLinearClsHead',
            num_classes=NUM_CLASSES,
            in_channels=1280,
            init_cfg=None)),
)


def build(spec: dict) -> nn.Module:
    """The tiny classifier of ``spec``, random weights, its head scaled so
    that the probabilities spread over (0, 1) (CSRA's logits do not
    scale: it normalises its weights)."""
    cfg = dict(
        type='ImageClassifier',
        backbone=TINY_RESNET,
        data_preprocessor=dict(PREPROCESSOR))
    cfg.update(spec)
    torch.manual_seed(0)
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        model = MODELS.build(cfg)
    model.init_weights()
    with torch.no_grad():
        # Batch norm statistics other than the identity.
        for module in model.modules():
            if isinstance(module, nn.BatchNorm2d):
                module.running_mean.uniform_(-0.5, 0.5)
                module.running_var.uniform_(0.5, 2.0)
        model.eval()
        # Logits of standard deviation about 3 (the heads' logits scale
        # with their weights).
        inputs = torch.from_numpy(images(4, seed=9)).permute(0, 3, 1, 2)
        logits = model(
            model.data_preprocessor(dict(inputs=inputs))['inputs'],
            mode='tensor')
        for parameter in model.head.parameters():
            parameter.mul_(3 / logits.std())
    return model


def torch_scores(model: nn.Module, images: np.ndarray) -> np.ndarray:
    """PyTorch's ``pred_score`` of ``(N, H, W, C)`` images, through the
    model's data preprocessor as the test pipeline packs them."""
    inputs = [torch.from_numpy(image).permute(2, 0, 1) for image in images]
    with torch.no_grad():
        samples = model.test_step(dict(inputs=inputs, data_samples=None))
    return torch.stack([s.pred_score for s in samples]).numpy()


def images(batch: int, seed: int) -> np.ndarray:
    """Images with some structure (a bright square on noise), uint8."""
    rng = np.random.default_rng(seed)
    out = rng.integers(0, 120, (batch, ) + SIZE + (3, ), dtype=np.uint8)
    for i in range(batch):
        top, left = rng.integers(0, 12, 2)
        out[i, top:top + 12, left:left + 10] = rng.integers(150, 256, 3)
    return out


@pytest.mark.parametrize('head', list(MODELS_BY_HEAD))
def test_parity_per_head(head, tmp_path):
    model = build(MODELS_BY_HEAD[head])
    out = str(tmp_path / f'{head}.onnx')
    checked = export_onnx(
        model,
        out,
        CLASSES,
        SIZE,
        thresholds=[0.1, 0.2, 0.3, 0.4, 0.5],
        global_threshold=0.35,
        metadata=dict(config='tiny.py'))
    assert set(checked) == {1, 3}
    assert max(checked.values()) <= TOLERANCE
    session = onnxruntime.InferenceSession(
        out, providers=['CPUExecutionProvider'])
    (inputs, ), (outputs, ) = session.get_inputs(), session.get_outputs()
    assert (inputs.name, outputs.name) == ('images', 'probabilities')
    assert inputs.type == 'tensor(uint8)'
    assert inputs.shape[1:] == [*SIZE, 3]
    assert isinstance(inputs.shape[0], str)  # the dynamic batch axis
    spread = []
    for batch in (1, 3):
        batch_images = images(batch, seed=batch)
        ours = session.run(None, dict(images=batch_images))[0]
        reference = torch_scores(model, batch_images)
        assert ours.shape == (batch, NUM_CLASSES)
        difference = np.abs(ours - reference).max()
        print(f'{head} batch {batch}: max |ONNX - PyTorch| = '
              f'{difference:.2e}')
        assert difference <= 1e-4
        spread.append(reference)
    # The scores are probabilities, spread out (a check on saturated or
    # constant outputs would prove nothing).
    spread = np.concatenate(spread)
    assert 0 < spread.min() and spread.max() < 1
    assert spread.max() - spread.min() > 0.2
    meta = session.get_modelmeta().custom_metadata_map
    assert json.loads(meta['classes']) == CLASSES
    assert json.loads(meta['thresholds']) == [0.1, 0.2, 0.3, 0.4, 0.5]
    assert json.loads(meta['global_threshold']) == 0.35
    assert meta['config'] == 'tiny.py'
    assert 'uint8 (N, 32, 24, 3)' in meta['input']


def test_float_input_and_no_normalisation(tmp_path):
    """Float images; a preprocessor without mean/std or colour flip."""
    model = build(MODELS_BY_HEAD['linear'])
    model.data_preprocessor._enable_normalize = False
    model.data_preprocessor.to_rgb = False
    out = str(tmp_path / 'float.onnx')
    checked = export_onnx(model, out, CLASSES, SIZE, input_dtype='float32')
    assert max(checked.values()) <= TOLERANCE
    session = onnxruntime.InferenceSession(
        out, providers=['CPUExecutionProvider'])
    assert session.get_inputs()[0].type == 'tensor(float)'
    batch = images(2, seed=5).astype(np.float32) / 255
    ours = session.run(None, dict(images=batch))[0]
    inputs = [torch.from_numpy(image).permute(2, 0, 1) for image in batch]
    with torch.no_grad():
        reference = torch.stack([
            s.pred_score
            for s in model.test_step(dict(inputs=inputs, data_samples=None))
        ]).numpy()
    assert np.abs(ours - reference).max() <= 1e-4
    assert 'thresholds' not in session.get_modelmeta().custom_metadata_map


class CumulativeMax(nn.Module):
    """An operation the ONNX exporter has no translation for."""

    def forward(self, x):
        return torch.cummax(x, dim=-1)[0]


def test_unexportable_part_is_named(tmp_path):
    model = build(MODELS_BY_HEAD['linear'])
    block = model.backbone.layer2[0]
    block.conv2 = nn.Sequential(block.conv2, CumulativeMax())
    out = tmp_path / 'bad.onnx'
    with pytest.raises(OnnxExportError) as error:
        export_onnx(model, str(out), CLASSES, SIZE)
    message = str(error.value)
    assert '\n' not in message
    assert message.startswith('Cannot export model.backbone.layer2.0.conv2.1 '
                              '(CumulativeMax) to ONNX: ')
    assert "'aten::cummax'" in message
    assert not out.exists()
    assert not list(tmp_path.iterdir())  # no temporary file left


def test_refused_models(tmp_path):
    model = build(MODELS_BY_HEAD['linear'])
    out = str(tmp_path / 'x.onnx')
    with pytest.raises(ValueError, match='3 class names for a model of 5'):
        export_onnx(model, out, CLASSES[:3], SIZE)
    with pytest.raises(ValueError, match='2 thresholds for 5 classes'):
        export_onnx(model, out, CLASSES, SIZE, thresholds=[0.5, 0.5])
    with pytest.raises(ValueError, match='input_dtype must be one of'):
        export_onnx(model, out, CLASSES, SIZE, input_dtype='int8')
    single_label = build(
        dict(
            neck=dict(type='GlobalAveragePooling'),
            head=dict(
                type='LinearClsHead', num_classes=NUM_CLASSES,
                in_channels=64)))
    with pytest.raises(
            OnnxExportError,
            match='^Cannot export the head LinearClsHead: only multi-label '
            'heads'):
        export_onnx(single_label, out, CLASSES, SIZE)

    class TopHead(type(model.head)):

        def _get_predictions(self, cls_score, data_samples):
            return super()._get_predictions(cls_score * 2, data_samples)

    model.head.__class__ = TopHead
    with pytest.raises(
            OnnxExportError,
            match='head TopHead: it overrides '
            'MultiLabelClsHead._get_predictions'):
        export_onnx(model, out, CLASSES, SIZE)


def test_a_wrong_graph_is_refused(tmp_path, monkeypatch):
    """The check after the export fails when the graph and the model
    disagree (here the model's predict changes after the export)."""
    model = build(MODELS_BY_HEAD['linear'])
    from mmlml.apis import onnx_export
    real = onnx_export.torch_probabilities
    monkeypatch.setattr(onnx_export, 'torch_probabilities',
                        lambda m, x: real(m, x) * 0.9)
    out = tmp_path / 'wrong.onnx'
    with pytest.raises(
            OnnxExportError,
            match='does not match the PyTorch model: the probabilities '
            'differ by up to'):
        export_onnx(model, str(out), CLASSES, SIZE)
    assert not out.exists()


def test_input_size_of():
    cfg = Config.fromfile(osp.join(ROOT, 'configs/demo/an.py'))
    assert input_size_of(cfg) == (32, 32)
    cfg = Config(
        dict(
            test_dataloader=dict(
                dataset=dict(
                    type='PartialLabelDataset',
                    dataset=dict(pipeline=[
                        dict(type='LoadImageFromFile'),
                        dict(type='Resize', scale=(448, 320)),
                        dict(type='PackInputs')
                    ])))))
    assert input_size_of(cfg) == (320, 448)
    cfg.test_dataloader.dataset.dataset.pipeline.insert(
        2, dict(type='CenterCrop', crop_size=224))
    assert input_size_of(cfg) == (224, 224)
    cfg.test_dataloader.dataset.dataset.pipeline = [
        dict(type='ResizeEdge', scale=256)
    ]
    assert input_size_of(cfg) is None


def test_import_needs_no_onnx():
    """``import mmlml`` needs neither onnx nor onnxruntime: the package
    imports them inside functions only (those of the export)."""
    top_level = []
    for folder, _, files in os.walk(osp.join(ROOT, 'mmlml')):
        for name in files:
            if not name.endswith('.py'):
                continue
            path = osp.join(folder, name)
            with open(path) as f:
                text = f.read()
            if 'onnx' not in text:
                continue
            tree = ast.parse(text)
            inside = {
                id(node)
                for function in ast.walk(tree)
                if isinstance(function, (ast.FunctionDef,
                                         ast.AsyncFunctionDef))
                for node in ast.walk(function)
            }
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    modules = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom):
                    modules = [node.module or '']
                else:
                    continue
                if any(
                        m.split('.')[0] in ('onnx', 'onnxruntime')
                        for m in modules) and id(node) not in inside:
                    top_level.append(osp.relpath(path, ROOT))
    assert top_level == []
