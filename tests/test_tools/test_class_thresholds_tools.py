"""A run's model card and per-class thresholds through the tools: a tiny
demo training writes model_card.md, tools/choose_thresholds.py stores the
thresholds beside the checkpoint, tools/test.py and tools/infer.py use
them (``--thr`` overrides), and both fill in their card sections."""
import importlib.util
import json
import os.path as osp
import shutil
import textwrap

import mmcv
import numpy as np
import pytest
from conftest import ROOT, load_train_tool

import mmlml  # noqa: F401
from mmlml.datasets import SyntheticShapes
from mmlml.evaluation.class_thresholds import (ClassThresholds,
                                               load_thresholds,
                                               save_thresholds)
from mmlml.utils.model_card import MODEL_CARD, card_sections

SECTIONS = [
    'Config', 'Data', 'Validation metrics', 'Test metrics', 'Thresholds',
    'Commands', 'Software'
]


def _tool(name):
    spec = importlib.util.spec_from_file_location(
        f'mmlml_{name}_tool', osp.join(ROOT, 'tools', f'{name}.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope='module')
def run(tmp_path_factory):
    """The demo config shrunk to 64 training images (51 train, 13 val), 32
    test images and 2 epochs, trained once by tools/train.py."""
    root = tmp_path_factory.mktemp('thresholds')
    config = root / 'tiny_demo.py'
    config.write_text(
        textwrap.dedent(f"""
        _base_ = [{osp.join(ROOT, 'configs/demo/an.py')!r}]
        train_dataloader = dict(
            batch_size=16, dataset=dict(dataset=dict(num_samples=64)))
        val_dataloader = dict(
            batch_size=16, dataset=dict(dataset=dict(num_samples=64)))
        test_dataloader = dict(batch_size=16, dataset=dict(num_samples=32))
        train_cfg = dict(max_epochs=2)
        work_dir = {str(root / 'work')!r}
        """))
    load_train_tool().main([str(config)])
    work = root / 'work'
    checkpoint = str(work / 'epoch_2.pth')
    assert osp.isfile(checkpoint)
    return dict(
        root=root, config=str(config), work=work, checkpoint=checkpoint)


def _card(run):
    return dict(card_sections((run['work'] / MODEL_CARD).read_text())[1])


def test_training_writes_the_model_card(run):
    sections = _card(run)
    assert list(sections) == SECTIONS
    assert 'tiny_demo.py' in sections['Config']
    assert 'CrossEntropyLoss' in sections['Config']
    assert '2 epochs, batch size 16' in sections['Config']
    assert 'seed: 0' in sections['Config']
    data = sections['Data']
    assert '51 images, 20 classes' in data
    assert 'mode `single_positive`' in data
    assert 'validation set: 13 images' in data
    # One observed positive per training image, no known negative.
    assert '51 known positives, 0 known negatives' in data
    assert data.count('\n| ') == 20 + 1  # a row per class and the header
    assert 'multi-label/mAP' in sections['Validation metrics']
    assert 'tools/train.py' in sections['Commands']
    assert 'randomness.seed=0' in sections['Commands']
    kept = run['work'] / 'model_card' / 'tiny_demo.py'
    assert f'tools/train.py {kept} --work-dir {run["work"]}_reproduced ' \
        in sections['Commands']
    assert 'mmengine' in sections['Software']
    assert 'mmpretrain' in sections['Software']


def test_choose_test_and_infer(run, tmp_path, capsys):
    """The thresholds chosen on the validation split, then the test report
    at the three thresholds, then infer with them; --thr overrides."""
    config, checkpoint = run['config'], run['checkpoint']
    chosen = _tool('choose_thresholds').main([config, checkpoint])
    assert load_thresholds(checkpoint) == chosen
    assert chosen.source['split'] == 'val_dataloader.dataset'
    assert sum(chosen.known_positives) + sum(chosen.known_negatives) == \
        13 * 20  # the clean validation labels, all known
    assert '| per-class |' in _card(run)['Thresholds']
    with pytest.raises(SystemExit):  # the file exists: --force replaces it
        _tool('choose_thresholds').main([config, checkpoint])

    test_tool = _tool('test')
    out = tmp_path / 'metrics.json'
    metrics = test_tool.main([
        config, checkpoint, '--work-dir',
        str(tmp_path / 'test'), '--out',
        str(out)
    ])
    printed = capsys.readouterr().out
    suffix = f'_thr-{chosen.global_threshold:.2f}'
    for key in ('CF1', 'OF1', f'CF1{suffix}', f'OF1{suffix}', 'CF1_thr-class',
                'OF1_thr-class'):
        assert f'thresholds/{key}' in metrics, key
    assert json.loads(out.read_text())['thresholds/OF1_thr-class'] == \
        pytest.approx(float(metrics['thresholds/OF1_thr-class']))
    assert metrics['thresholds/CF1'] == metrics['multi-label/CF1']
    assert 'per-class thresholds: CF1' in printed
    assert 'thresholds/CF1_thr-class' in _card(run)['Test metrics']
    # --thr: the metrics at that one threshold, the file unread; the card
    # keeps both tests, a block each.
    metrics = test_tool.main([
        config, checkpoint, '--work-dir',
        str(tmp_path / 'test'), '--thr', '0.3'
    ])
    keys = [k for k in metrics if k.startswith('thresholds/CF1')]
    assert keys == ['thresholds/CF1_thr-0.30']
    tests = _card(run)['Test metrics']
    assert tests.count('### epoch_2.pth on SyntheticShapes, thresholds') == 2
    assert f'thresholds 0.5, {chosen.global_threshold:.2f}, per class' \
        in tests
    assert 'thresholds/CF1_thr-class' in tests
    assert 'thresholds/CF1_thr-0.30' in tests

    # infer: per-class thresholds picked so that only class 0 and 2 can be
    # predicted (thresholds 0 and 0.0 + tiny), the others never (1.0 is
    # above every sigmoid score here).
    images = tmp_path / 'images'
    dataset = SyntheticShapes(split='test', num_samples=3, seed=0)
    paths = []
    for i in range(3):
        paths.append(str(images / f'{i}.png'))
        mmcv.imwrite(dataset.get_data_info(i)['img'], paths[-1])
    copy = str(tmp_path / 'model.pth')
    shutil.copy(checkpoint, copy)
    classes = list(chosen.classes)
    values = [1.0] * len(classes)
    values[0], values[2] = 0.0, 1e-9
    save_thresholds(ClassThresholds(tuple(classes), tuple(values), 0.5), copy)
    infer = _tool('infer')
    results = infer.main([config, copy, *paths])
    assert 'Per-class thresholds from' in capsys.readouterr().err
    for result in results:
        assert set(result['labels']) == {classes[0], classes[2]}
    results = infer.main([config, copy, *paths, '--thr', '1e-9'])
    assert all(len(r['labels']) == len(classes) for r in results)
    # Thresholds of other classes are refused, in one line.
    save_thresholds(ClassThresholds(('a', 'b'), (0.1, 0.2), 0.15), copy)
    with pytest.raises(infer.InputError, match='is for 2 classes'):
        infer.main([config, copy, *paths])
    assert np.isfinite([r['scores'][classes[1]] for r in results]).all()


def test_the_cards_command_reproduces_the_run(run, capsys):
    """The card's "Reproduce" command, after a test in the run's own work
    directory (which writes its config there again, with ``load_from``),
    trains the same run from scratch into a new directory: the same
    validation metrics."""
    _tool('test').main([run['config'], run['checkpoint']])
    sections = _card(run)
    command = next(line.split() for line in sections['Commands'].splitlines()
                   if '_reproduced' in line)
    assert command[:2] == ['python', 'tools/train.py']
    again = command[command.index('--work-dir') + 1]
    load_train_tool().main(command[2:])
    reproduced = dict(
        card_sections(open(osp.join(again, MODEL_CARD)).read())[1])

    def tables(text):  # the metrics, without the checkpoints' paths
        return [line for line in text.splitlines() if line.startswith('|')]

    assert tables(reproduced['Validation metrics']) == tables(
        sections['Validation metrics'])
    assert 'load_from' not in reproduced['Config']
