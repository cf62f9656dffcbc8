"""tools/export.py: a demo checkpoint to an ONNX file from images to
probabilities, with the class names and the thresholds file beside the
checkpoint in its metadata; ONNX Runtime serves it as the docs show."""
import json
import os.path as osp
import re
import runpy
import sys

import numpy as np
import onnxruntime
import pytest
import torch
from conftest import ROOT
from mmengine.config import Config
from mmengine.registry import DefaultScope

import mmlml  # noqa: F401
from mmlml.datasets import SyntheticShapes
from mmlml.evaluation.class_thresholds import ClassThresholds, save_thresholds
from mmlml.registry import MODELS

sys.path.insert(0, osp.join(ROOT, 'tools'))
import export as tool  # noqa: E402

CONFIG = osp.join(ROOT, 'configs/demo/an.py')
NUM_CLASSES = 20
CLASSES = [f'thing {i}' for i in range(NUM_CLASSES)]
THRESHOLDS = [round(0.2 + 0.03 * i, 2) for i in range(NUM_CLASSES)]


@pytest.fixture(scope='module')
def setup(tmp_path_factory):
    """A random demo model's checkpoint (class names in its meta) with a
    thresholds file beside it, and demo test images (BGR, as
    ``LoadImageFromFile`` reads image files)."""
    root = tmp_path_factory.mktemp('export')
    cfg = Config.fromfile(CONFIG)
    cfg.model.data_preprocessor = cfg.data_preprocessor
    torch.manual_seed(0)
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        model = MODELS.build(cfg.model)
    with torch.no_grad():
        model.head.fc.weight.mul_(30)  # scores spread around 0.5
    model.eval()
    ckpt = str(root / 'model.pth')
    torch.save(
        dict(
            state_dict=model.state_dict(),
            meta=dict(dataset_meta=dict(classes=CLASSES))), ckpt)
    save_thresholds(
        ClassThresholds(
            classes=tuple(CLASSES),
            thresholds=tuple(THRESHOLDS),
            global_threshold=0.4), ckpt)
    dataset = SyntheticShapes(split='test', num_samples=3, seed=0)
    images = np.stack([dataset.get_data_info(i)['img'] for i in range(3)])
    return dict(root=root, model=model, ckpt=ckpt, images=images)


def _scores(model, images):
    inputs = [torch.from_numpy(image).permute(2, 0, 1) for image in images]
    with torch.no_grad():
        samples = model.test_step(dict(inputs=inputs, data_samples=None))
    return torch.stack([s.pred_score for s in samples]).numpy()


def _serving_snippet() -> str:
    """The first Python block of docs/inference.md's "Export to ONNX"
    section (the serving function)."""
    with open(osp.join(ROOT, 'docs/inference.md')) as f:
        text = f.read()
    section = text[text.index('### Export to ONNX'):]
    return re.search(r'```python\n(.*?)```', section, re.S).group(1)


def test_export_and_serve(setup, capsys, monkeypatch):
    differences = tool.main([CONFIG, setup['ckpt']])
    out = osp.splitext(setup['ckpt'])[0] + '.onnx'
    printed = capsys.readouterr().out
    assert f'Wrote {out}: images uint8 (N, 32, 32, 3) -> probabilities ' \
        '(N, 20), class names from the checkpoint, thresholds from ' in printed
    assert 'largest |difference| of the probabilities: batch 1: ' in printed
    assert max(differences.values()) <= 1e-4
    session = onnxruntime.InferenceSession(
        out, providers=['CPUExecutionProvider'])
    meta = session.get_modelmeta().custom_metadata_map
    assert json.loads(meta['classes']) == CLASSES
    assert json.loads(meta['thresholds']) == THRESHOLDS
    assert json.loads(meta['global_threshold']) == 0.4
    assert meta['config'] == 'an.py' and meta['checkpoint'] == 'model.pth'
    images = setup['images']
    reference = _scores(setup['model'], images)
    for batch in (images[:1], images):
        ours = session.run(['probabilities'], dict(images=batch))[0]
        assert np.abs(ours - reference[:len(batch)]).max() <= 1e-4
    # The serving code of the docs, on these images: the classes over
    # their thresholds.
    namespace: dict = {}
    exec(_serving_snippet(), namespace)
    expected = [[
        name for name, score, thr in zip(CLASSES, row, THRESHOLDS)
        if score >= thr
    ] for row in reference]
    assert namespace['predict_labels'](out, images) == expected
    assert any(expected) and not all(len(e) == 20 for e in expected)


def test_options_and_errors(setup, tmp_path, monkeypatch, capsys):
    ckpt = setup['ckpt']
    out = str(tmp_path / 'small.onnx')
    # Another image size and float input; no thresholds file beside this
    # checkpoint.
    bare = str(tmp_path / 'bare.pth')
    torch.save(dict(state_dict=setup['model'].state_dict()), bare)
    tool.main([
        CONFIG, bare, '--out', out, '--input-size', '40', '48',
        '--input-dtype', 'float32'
    ])
    assert 'images float32 (N, 40, 48, 3)' in capsys.readouterr().out
    session = onnxruntime.InferenceSession(
        out, providers=['CPUExecutionProvider'])
    assert session.get_inputs()[0].shape[1:] == [40, 48, 3]
    meta = session.get_modelmeta().custom_metadata_map
    assert 'thresholds' not in meta
    # The names of the config's dataset (the checkpoint has none).
    assert len(json.loads(meta['classes'])) == NUM_CLASSES
    with pytest.raises(FileExistsError, match='pass --force'):
        tool.main([CONFIG, bare, '--out', out])
    with pytest.raises(FileNotFoundError, match='Checkpoint not found'):
        tool.main([CONFIG, str(tmp_path / 'none.pth')])
    other = str(tmp_path / 'other.pth')
    torch.save(dict(state_dict={'head.fc.weight': torch.zeros(3, 64)}), other)
    with pytest.raises(ValueError, match='does not fit the model'):
        tool.main([CONFIG, other])
    # Thresholds chosen for other classes.
    renamed = str(tmp_path / 'renamed.pth')
    torch.save(
        dict(
            state_dict=setup['model'].state_dict(),
            meta=dict(dataset_meta=dict(classes=CLASSES[::-1]))), renamed)
    save_thresholds(
        ClassThresholds(
            classes=tuple(CLASSES),
            thresholds=tuple(THRESHOLDS),
            global_threshold=0.4), renamed)
    with pytest.raises(ValueError, match='renamed.thresholds.json is for'):
        tool.main([CONFIG, renamed])
    capsys.readouterr()
    for argv, message in [
        (['--out', 'x.txt'], "--out must be a .onnx file, got 'x.txt'"),
        (['--input-size', '0', '4'], '--input-size must be two positive'),
        (['--channels', '0'], '--channels must be positive'),
        (['--input-dtype', 'int8'], "invalid choice: 'int8'"),
    ]:
        with pytest.raises(SystemExit):
            tool.parse_args([CONFIG, ckpt] + argv)
        assert message in capsys.readouterr().err
    # The command line prints user errors in one line, no traceback.
    missing = str(tmp_path / 'none.pth')
    monkeypatch.setattr(sys, 'argv', ['export.py', CONFIG, missing])
    with pytest.raises(SystemExit) as exit_info:
        runpy.run_path(osp.join(ROOT, 'tools/export.py'), run_name='__main__')
    assert exit_info.value.code == \
        f'export.py: error: Checkpoint not found: {missing}'
