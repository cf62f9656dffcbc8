"""ResumeCheckHook's fingerprint of the training labels: by value (a label
file in another dtype or format is the same labels), covering the
pseudo-labels of VLPseudoLabelHook (scores, thresholds, labeller), and a
checkpoint without it refused unless allowed explicitly."""
import json
import logging
import types

import numpy as np
import pytest
import torch
from mmengine.config import Config
from mmengine.registry import DefaultScope

import mmlml  # noqa: F401
from mmlml.hooks import ResumeCheckHook, VLPseudoLabelHook
from mmlml.registry import DATASETS

NUM_SAMPLES, NUM_CLASSES = 20, 4


@pytest.fixture
def files(tmp_path):
    """An annotation file, its observed labels as int8 and int64 .npy (and
    with one label changed), and a scores file."""
    rng = np.random.RandomState(0)
    full = (rng.rand(NUM_SAMPLES, NUM_CLASSES) < 0.5).astype(np.uint8)
    full[:, 0] = 1
    ann = tmp_path / 'ann.json'
    ann.write_text(
        json.dumps(
            dict(
                metainfo=dict(classes=[f'c{i}' for i in range(NUM_CLASSES)]),
                data_list=[
                    dict(
                        img_path=f'{i}.jpg',
                        gt_label=np.flatnonzero(row).tolist())
                    for i, row in enumerate(full)
                ])))
    labels = np.where(full == 1, 1, -1).astype(np.int8)
    labels[:, 1] = 0
    paths = types.SimpleNamespace(ann=str(ann))
    paths.int8 = str(tmp_path / 'labels_int8.npy')
    np.save(paths.int8, labels)
    paths.int64 = str(tmp_path / 'labels_int64.npy')
    np.save(paths.int64, labels.astype(np.int64))
    changed = labels.copy()
    changed[3, 1] = 1
    paths.changed = str(tmp_path / 'labels_changed.npy')
    np.save(paths.changed, changed)
    paths.scores = str(tmp_path / 'scores.npy')
    np.save(paths.scores, rng.rand(NUM_SAMPLES, NUM_CLASSES).astype('f4'))
    return paths


def _runner(files, label_file=None, hooks=(), **dataset):
    if label_file is not None:
        dataset.update(mode='file', label_file=label_file)
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        train_set = DATASETS.build(
            dict(
                type='PartialLabelDataset',
                dataset=dict(
                    type='MultiLabelDataset',
                    ann_file=files.ann,
                    pipeline=[dict(type='PackInputs')]),
                **dataset))
    return types.SimpleNamespace(
        _resume=True,
        model=torch.nn.Module(),
        hooks=list(hooks),
        cfg=Config(dict(model=dict(head=dict(loss=dict(type='ANLoss'))))),
        train_dataloader=types.SimpleNamespace(dataset=train_set))


def _checkpoint(runner):
    checkpoint = dict(state_dict={})
    ResumeCheckHook().before_save_checkpoint(runner, checkpoint)
    return checkpoint


def _resume(runner, checkpoint, **kwargs):
    ResumeCheckHook(**kwargs).after_load_checkpoint(runner, checkpoint)


def test_label_file_fingerprint_is_by_value(files):
    """The same labels in an int64 .npy resume a run trained on an int8
    .npy (the bytes differ, the labels do not; refused before); one changed
    label is refused."""
    checkpoint = _checkpoint(_runner(files, files.int8))
    assert 'label_file' not in checkpoint['partial_labels']
    _resume(_runner(files, files.int64), checkpoint)
    with pytest.raises(ValueError, match=r'observed labels'):
        _resume(_runner(files, files.changed), checkpoint)


def test_fingerprint_of_an_earlier_version_is_read(files):
    """A fingerprint with the retired SHA-256 of the label file's bytes
    resumes on the same labels."""
    checkpoint = _checkpoint(_runner(files, files.int8))
    checkpoint['partial_labels']['label_file'] = 'ab' * 32
    _resume(_runner(files, files.int64), checkpoint)


def test_missing_fingerprint_is_refused_unless_allowed(files, monkeypatch):
    """A checkpoint without a fingerprint (saved before fingerprints, or
    by a run without the hook) used to skip the check: it is refused, and
    resumes with a warning with allow_missing_fingerprint=True (or
    allow_label_change=True)."""
    runner = _runner(files)
    checkpoint = dict(state_dict={})
    with pytest.raises(
            ValueError,
            match=r'no fingerprint of its training labels.*'
            r'allow_missing_fingerprint=True'):
        _resume(runner, checkpoint)
    messages = []
    monkeypatch.setattr(
        'mmlml.hooks.resume_check_hook.print_log',
        lambda msg, **kwargs: messages.append((msg, kwargs.get('level'))))
    _resume(runner, checkpoint, allow_missing_fingerprint=True)
    _resume(runner, checkpoint, allow_label_change=True)
    assert len(messages) == 2
    assert all(level == logging.WARNING for _, level in messages)
    # The option does not let other labels through.
    checkpoint = _checkpoint(runner)
    with pytest.raises(ValueError, match=r'seed 1200 -> 1'):
        _resume(
            _runner(files, seed=1), checkpoint, allow_missing_fingerprint=True)


def _vl_hook(scores_file, **kwargs):
    return VLPseudoLabelHook(scores_file=scores_file, **kwargs)


def test_pseudo_label_source_is_in_the_fingerprint(files, tmp_path):
    """A VLPL/GPR run resumed with another threshold or a scores file of
    other values used to restore its store with an INFO line: refused,
    naming the change; the same scores in another file resume."""
    checkpoint = _checkpoint(
        _runner(files, hooks=[_vl_hook(files.scores, pos_thr=0.3)]))
    source = checkpoint['partial_labels']['pseudo_labels']
    assert source['VLPseudoLabelHook']['pos_thr'] == 0.3
    copy = str(tmp_path / 'copy.npy')
    np.save(copy, np.load(files.scores))
    _resume(_runner(files, hooks=[_vl_hook(copy, pos_thr=0.3)]), checkpoint)

    with pytest.raises(
            ValueError,
            match=r'pseudo_labels\.VLPseudoLabelHook\.pos_thr 0\.3 -> 0\.5'):
        _resume(
            _runner(files, hooks=[_vl_hook(files.scores, pos_thr=0.5)]),
            checkpoint)
    other = str(tmp_path / 'other.npy')
    np.save(other, np.load(files.scores) / 2)
    with pytest.raises(
            ValueError, match=r'pseudo_labels\.VLPseudoLabelHook\.scores'):
        _resume(
            _runner(files, hooks=[_vl_hook(other, pos_thr=0.3)]), checkpoint)
    # The labeller's identity when it scores the training set itself.
    labeller = dict(type='ModelPseudoLabeller', config='a.py')
    checkpoint = _checkpoint(
        _runner(files, hooks=[VLPseudoLabelHook(labeller=labeller)]))
    labeller = dict(labeller, config='b.py')
    with pytest.raises(
            ValueError, match=r'pseudo_labels\.VLPseudoLabelHook\.labeller'):
        _resume(
            _runner(files, hooks=[VLPseudoLabelHook(labeller=labeller)]),
            checkpoint)


def test_checkpoint_without_the_pseudo_label_source(files):
    """A checkpoint whose fingerprint predates the pseudo-label sources
    cannot show its pseudo-labels: refused unless allowed explicitly."""
    checkpoint = _checkpoint(_runner(files))
    runner = _runner(files, hooks=[_vl_hook(files.scores)])
    with pytest.raises(
            ValueError,
            match=r'no fingerprint of pseudo_labels\.VLPseudoLabelHook'):
        _resume(runner, checkpoint)
    _resume(runner, checkpoint, allow_missing_fingerprint=True)
