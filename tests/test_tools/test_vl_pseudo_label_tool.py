"""tools/vl_pseudo_label.py: the scores file of a config's training images,
with a classifier trained earlier as the labeller (the tiny demo, no CLIP
weights needed)."""
import os.path as osp
import sys

import numpy as np
import pytest
import torch
from conftest import ROOT
from mmengine.config import Config
from mmengine.registry import DefaultScope

import mmlml  # noqa: F401
from mmlml.registry import DATASETS, MODELS

sys.path.insert(0, osp.join(ROOT, 'tools'))
import vl_pseudo_label as tool  # noqa: E402
from test_pseudo_label import labels_config  # noqa: E402


def test_scores_file_of_the_training_rows(tiny_demo_config, tmp_path):
    config = tiny_demo_config()
    cfg = Config.fromfile(config)
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        model = MODELS.build(
            dict(cfg.model, data_preprocessor=cfg.data_preprocessor))
    checkpoint = str(tmp_path / 'demo.pth')
    torch.save(dict(state_dict=model.state_dict(), meta={}), checkpoint)
    out = tmp_path / 'scores.npy'
    argv = [
        config, '--out',
        str(out), '--labeller-options', 'type=ModelPseudoLabeller',
        f'config={config}', f'checkpoint={checkpoint}', '--chunk-size', '16',
        '--device', 'cpu'
    ]
    returned = tool.main(argv)
    scores = np.load(out, allow_pickle=False)
    np.testing.assert_array_equal(scores, returned)
    # 64 images: the 51 training rows scored, the 13 validation rows NaN.
    assert scores.shape == (64, 20) and scores.dtype == np.float32
    scored = ~np.isnan(scores).any(1)
    assert scored.sum() == 51 and not osp.exists(f'{out}.parts')
    # The first rows as the model predicts them (the images of the
    # dataset the training set wraps, BGR as the pipeline packs them).
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        inner = DATASETS.build(cfg.train_dataloader.dataset.dataset)
    rows = np.flatnonzero(scored)[:4]
    images = torch.stack([
        torch.from_numpy(inner.get_data_info(int(i))['img'].copy()).permute(
            2, 0, 1) for i in rows
    ])
    model.eval()
    with torch.no_grad():
        inputs = model.data_preprocessor(dict(inputs=images))['inputs']
        probs = model(inputs, mode='tensor').sigmoid()
    np.testing.assert_allclose(scores[rows], probs.numpy(), atol=1e-6)

    with pytest.raises(FileExistsError, match='--force'):
        tool.main(argv)
    every = tool.main(argv + ['--split', 'all', '--force'])
    assert not np.isnan(every).any()
    np.testing.assert_allclose(every[scored], scores[scored], atol=1e-6)


def _model_labeller(config, tmp_path):
    """The --labeller-options of a ModelPseudoLabeller of the config's
    untrained model."""
    cfg = Config.fromfile(config)
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        model = MODELS.build(
            dict(cfg.model, data_preprocessor=cfg.data_preprocessor))
    checkpoint = str(tmp_path / 'demo.pth')
    torch.save(dict(state_dict=model.state_dict(), meta={}), checkpoint)
    return [
        '--labeller-options', 'type=ModelPseudoLabeller', f'config={config}',
        f'checkpoint={checkpoint}', '--device', 'cpu'
    ]


def test_out_is_never_a_file_of_the_config(tiny_demo_config, tmp_path):
    """`--out` naming the label_file the config trains on wrote scores
    (NaN rows) over it with --force: refused, the file left as it was. The
    scores_file of the config's VLPseudoLabelHook is the tool's output and
    is not refused."""
    config, labels = labels_config(tiny_demo_config, tmp_path)
    before = labels.read_bytes()
    with pytest.raises(ValueError, match='also an input'):
        tool.main([config, '--out', str(labels), '--force'] +
                  _model_labeller(config, tmp_path))
    assert labels.read_bytes() == before
    cfg = Config(
        dict(custom_hooks=[
            dict(type='VLPseudoLabelHook', scores_file=str(labels))
        ]))
    assert tool.hook_score_files(cfg) == [str(labels)]


def test_a_parts_folder_of_someone_else_is_left_alone(tiny_demo_config,
                                                      tmp_path):
    """An existing `<out>.parts/` that mmlml did not make was adopted as
    the chunk folder, then deleted: refused, and left as it was."""
    config = tiny_demo_config()
    out = tmp_path / 'scores.npy'
    folder = tmp_path / 'scores.npy.parts'
    folder.mkdir()
    (folder / 'notes.txt').write_text('mine')
    with pytest.raises(ValueError, match='not made by mmlml'):
        tool.main(
            [config, '--out', str(out), '--chunk-size', '16'] +
            _model_labeller(config, tmp_path))
    assert sorted(p.name for p in folder.iterdir()) == ['notes.txt']
    assert not out.exists()


def test_labeller_from_the_hook_a_file_or_options(tmp_path):
    hook = dict(
        type='VLPseudoLabelHook',
        labeller=dict(type='CLIPPseudoLabeller', tiles=(4, 4)))
    cfg = Config(dict(custom_hooks=[dict(type='EMAHook'), hook]))
    labeller = tool.find_labeller(cfg)
    assert labeller.type == 'CLIPPseudoLabeller'
    assert tuple(labeller.tiles) == (4, 4)
    labeller = tool.find_labeller(cfg, options=dict(tiles=(2, 2), eta=0.3))
    assert tuple(labeller.tiles) == (2, 2) and labeller.eta == 0.3
    path = tmp_path / 'labeller.py'
    path.write_text("labeller = dict(type='ModelPseudoLabeller', "
                    "config='c.py', checkpoint='w.pth')\n")
    assert tool.find_labeller(cfg, str(path)).type == 'ModelPseudoLabeller'
    with pytest.raises(ValueError, match='no labeller'):
        tool.find_labeller(Config(dict()))


def test_out_is_never_a_file_of_the_labeller(tiny_demo_config, tmp_path):
    """`--out` naming a file the labeller reads (its checkpoint, or a
    CLIP labeller's text_embeddings=) is refused even with --force, the
    file left as it was."""
    config = tiny_demo_config()
    options = _model_labeller(config, tmp_path)
    checkpoint = tmp_path / 'weights.npy'  # a checkpoint by any name
    (tmp_path / 'demo.pth').rename(checkpoint)
    options = [
        f'checkpoint={checkpoint}' if o.startswith('checkpoint=') else o
        for o in options
    ]
    before = checkpoint.read_bytes()
    with pytest.raises(ValueError, match='also an input'):
        tool.main([config, '--out', str(checkpoint), '--force'] + options)
    assert checkpoint.read_bytes() == before
    embeddings = tmp_path / 'E.npy'
    np.save(embeddings, np.zeros((2, 4), np.float32))
    before = embeddings.read_bytes()
    with pytest.raises(ValueError, match='also an input'):
        tool.main([
            config, '--out',
            str(embeddings), '--force', '--labeller-options',
            'type=CLIPPseudoLabeller', f'text_embeddings={embeddings}'
        ])
    assert embeddings.read_bytes() == before
