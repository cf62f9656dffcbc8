"""tools/infer.py: labels and scores of image files with a trained model."""
import csv
import json
import os
import os.path as osp
import runpy
import shutil
import sys

import mmcv
import numpy as np
import pytest
import torch
from conftest import ROOT
from mmengine.config import Config
from mmengine.registry import DefaultScope

import mmlml  # noqa: F401
from mmlml.compat.checkpoint_policy import hub_cache_file
from mmlml.datasets import SyntheticShapes
from mmlml.registry import MODELS

sys.path.insert(0, osp.join(ROOT, 'tools'))
import infer as tool  # noqa: E402

CONFIG = osp.join(ROOT, 'configs/demo/an.py')
NUM_CLASSES = 20
CLASSES = [f'thing {i}' for i in range(NUM_CLASSES)]


def _build_model():
    cfg = Config.fromfile(CONFIG)
    cfg.model.data_preprocessor = cfg.data_preprocessor
    torch.manual_seed(0)
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        model = MODELS.build(cfg.model)
    # Spread the scores around 0.5, so that thresholds select some classes.
    with torch.no_grad():
        model.head.fc.weight.mul_(100)
    return model.eval()


@pytest.fixture(scope='module')
def setup(tmp_path_factory):
    """A checkpoint of the demo model (class names in its meta, as the
    Runner saves them), one without meta, and image files: four 32x32
    test images of the demo dataset and a 40x40 one, two of them in a
    subfolder, an upper-case extension and a file that is no image."""
    root = tmp_path_factory.mktemp('infer')
    model = _build_model()
    ckpt = str(root / 'model.pth')
    torch.save(
        dict(
            state_dict=model.state_dict(),
            meta=dict(dataset_meta=dict(classes=CLASSES))), ckpt)
    bare = str(root / 'bare.pth')
    torch.save(dict(state_dict=model.state_dict()), bare)

    images = root / 'images'
    dataset = SyntheticShapes(split='test', num_samples=5, seed=0)
    arrays = [dataset.get_data_info(i)['img'] for i in range(5)]
    arrays[2] = mmcv.imresize(arrays[2], (40, 40))
    names = ['a.png', 'b.PNG', 'c.jpg', 'sub/d.bmp', 'sub/e.webp']
    paths = []
    for name, array in zip(names, arrays):
        mmcv.imwrite(array, str(images / name))
        paths.append(str(images / name))
    (images / 'notes.txt').write_text('not an image')
    return dict(
        root=root,
        model=model,
        ckpt=ckpt,
        bare=bare,
        images=str(images),
        paths=paths)


def _scores(model, paths):
    """Probabilities computed here, image by image, without the tool:
    the image as ``LoadImageFromFile`` reads it (BGR), the preprocessor,
    the network and a sigmoid."""
    out = []
    for path in paths:
        img = torch.from_numpy(mmcv.imread(path)).permute(2, 0, 1)
        with torch.no_grad():
            data = model.data_preprocessor(dict(inputs=[img]), False)
            out.append(torch.sigmoid(model(data['inputs'], mode='tensor'))[0])
    return torch.stack(out).numpy()


def test_labels_json_and_csv(setup, capsys):
    paths = setup['paths']
    expected = _scores(setup['model'], paths)
    out = str(setup['root'] / 'out' / 'results.json')
    results = tool.main([
        CONFIG, setup['ckpt'], *paths, '--thr', '0.6', '--out', out,
        '--batch-size', '2'
    ])
    printed = capsys.readouterr().out.splitlines()
    with open(out) as f:
        written = json.load(f)
    assert written == json.loads(json.dumps(results))
    assert [r['img_path'] for r in written] == paths
    for i, result in enumerate(written):
        assert list(result['scores']) == CLASSES
        scores = np.array([result['scores'][c] for c in CLASSES])
        np.testing.assert_allclose(scores, expected[i], atol=1e-5)
        # Labels: the classes >= thr, highest score first.
        above = np.flatnonzero(expected[i] >= 0.6)
        above = above[np.argsort(-expected[i][above])]
        assert result['labels'] == [CLASSES[c] for c in above]
        line = next(p for p in printed if p.startswith(paths[i] + ': '))
        if len(above):
            assert line == paths[i] + ': ' + ', '.join(
                f'{CLASSES[c]} ({expected[i][c]:.3f})' for c in above)
        else:
            assert line == paths[i] + ': (no class >= 0.6)'
    assert sum(len(r['labels']) for r in written) > 10
    assert tool.format_result(
        dict(img_path='x.png', scores={}, labels=[]),
        0.9) == 'x.png: (no class >= 0.9)'
    assert printed[-1] == f'5 images x 20 class scores written to {out}'

    # CSV: img_path and one column per class; --topk caps the labels.
    out = str(setup['root'] / 'results.csv')
    capped = tool.main(
        [CONFIG, setup['ckpt'], *paths, '--topk', '1', '--out', out])
    with open(out, newline='') as f:
        rows = list(csv.reader(f))
    assert rows[0] == ['img_path'] + CLASSES
    assert [row[0] for row in rows[1:]] == paths
    np.testing.assert_allclose(
        np.array([row[1:] for row in rows[1:]], dtype=float),
        expected,
        atol=1e-5)
    for result, scores in zip(capped, expected):
        best = int(np.argmax(scores))
        assert result['labels'] == ([CLASSES[best]]
                                    if scores[best] >= 0.5 else [])


def test_folders_and_class_names(setup, capsys):
    paths, images = setup['paths'], setup['images']
    # A folder: its image files, sorted, any extension case, not its
    # subfolders unless --recursive; notes.txt is skipped.
    assert tool.collect_images([images]) == paths[:3]
    assert tool.collect_images([images], recursive=True) == paths
    assert tool.collect_images([paths[4], images]) == [paths[4]] + paths[:3]

    # Batches hold images of one size, in input order (c.jpg is 40x40).
    inferencer = tool.build_inferencer(Config.fromfile(CONFIG), setup['ckpt'])
    assert inferencer.classes == CLASSES
    batches = list(inferencer.preprocess(paths, batch_size=2))
    assert [len(b['inputs']) for b in batches] == [2, 1, 2]
    assert [s.img_path for b in batches for s in b['data_samples']] == paths

    # Without names in the checkpoint: the config's test dataset's.
    results = tool.main([CONFIG, setup['bare'], paths[0]])
    demo = list(SyntheticShapes(num_samples=1).metainfo['classes'])
    assert list(results[0]['scores']) == demo
    # Without either: class_0 ... (the demo datasets refuse 1 class).
    capsys.readouterr()
    results = tool.main([
        CONFIG, setup['bare'], images, '--cfg-options',
        'test_dataloader.dataset.num_classes=1',
        'val_dataloader.dataset.dataset.num_classes=1'
    ])
    assert list(results[0]['scores']) == [f'class_{i}' for i in range(20)]
    assert 'No class names found' in capsys.readouterr().err


def test_checkpoint_url(setup, torch_home):
    """A checkpoint URL is loaded through the loading policy (served here
    from torch.hub's cache, so no network), as tools/test.py loads it,
    instead of being refused as a missing file."""
    url = 'https://example.invalid/models/demo-0123abcd.pth'
    cached = hub_cache_file(url)
    os.makedirs(osp.dirname(cached))
    shutil.copy(setup['ckpt'], cached)
    paths = setup['paths'][:2]
    from_url = tool.main([CONFIG, url, *paths])
    assert from_url == tool.main([CONFIG, setup['ckpt'], *paths])
    assert list(from_url[0]['scores']) == CLASSES  # the checkpoint's meta


def test_errors(setup, tmp_path, monkeypatch, capsys):
    ckpt, image = setup['ckpt'], setup['paths'][0]
    missing = str(tmp_path / 'missing.png')
    with pytest.raises(FileNotFoundError, match='Input not found: .*missing'):
        tool.main([CONFIG, ckpt, image, missing])
    empty = tmp_path / 'empty'
    (empty / 'sub').mkdir(parents=True)
    (empty / 'readme.txt').write_text('')
    with pytest.raises(
            tool.InputError,
            match='No image file .* in the '
            'folder .*empty .*--recursive'):
        tool.main([CONFIG, ckpt, str(empty)])
    broken = tmp_path / 'broken.png'
    broken.write_bytes(b'not a png')
    with pytest.raises(
            tool.InputError, match='Cannot read the image .*broken.png'):
        tool.main([CONFIG, ckpt, image, str(broken)])
    with pytest.raises(FileNotFoundError, match='Checkpoint not found'):
        tool.main([CONFIG, str(tmp_path / 'none.pth'), image])
    # A checkpoint of another model.
    other = str(tmp_path / 'other.pth')
    torch.save(dict(state_dict={'head.fc.weight': torch.zeros(3, 64)}), other)
    with pytest.raises(tool.InputError, match='does not fit the model'):
        tool.main([CONFIG, other, image])
    # Names that do not match the model.
    short = str(tmp_path / 'short.pth')
    torch.save(
        dict(
            state_dict=setup['model'].state_dict(),
            meta=dict(dataset_meta=dict(classes=['a', 'b']))), short)
    with pytest.raises(
            tool.InputError,
            match='2 class names in the '
            'checkpoint, but the model has 20'):
        tool.main([CONFIG, short, image])
    capsys.readouterr()
    for argv, message in [
        (['--thr', '0'], '--thr must lie in (0, 1), got 0.0'),
        (['--thr', '1'], '--thr must lie in (0, 1), got 1.0'),
        (['--topk', '0'], '--topk must be positive'),
        (['--batch-size', '0'], '--batch-size must be positive'),
        (['--out', 'x.txt'], '--out must be a .json or .csv file'),
    ] + ([] if torch.cuda.is_available() else
         [(['--device', 'cuda'], 'CUDA is not available here')]):
        with pytest.raises(SystemExit):
            tool.parse_args([CONFIG, ckpt, image] + argv)
        assert message in capsys.readouterr().err
    # The command line prints user errors in one line, no traceback.
    monkeypatch.setattr(sys, 'argv', ['infer.py', CONFIG, ckpt, missing])
    with pytest.raises(SystemExit) as exit_info:
        runpy.run_path(osp.join(ROOT, 'tools/infer.py'), run_name='__main__')
    assert exit_info.value.code == f'infer.py: error: Input not found: ' \
        f'{missing}'
