"""ResumeCheckHook's fingerprint of the training labels: by value (a label
file in another dtype or format is the same labels), covering the
pseudo-labels of VLPseudoLabelHook (scores, thresholds, labeller), and a
checkpoint without it refused unless allowed explicitly; resuming a tiny
LL-Cp run (``trained`` in conftest.py) with another number of classes,
loss, model or partial labels, or without the hook that restores its label
store."""
import json
import logging
import types

import numpy as np
import pytest
import torch
from conftest import write_config
from mmengine.config import Config
from mmengine.registry import DefaultScope

import mmlml  # noqa: F401
from mmlml.hooks import (LargeLossCorrectionHook, ResumeCheckHook,
                         VLPseudoLabelHook)
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


# ------------------------------ resuming the shared tiny LL-Cp training run
def test_resume_with_other_num_classes(trained):
    """resume-other-num-classes: MMEngine skips the head's weights with a
    log line and fails at the first step with "The size of tensor a (20)
    must match the size of tensor b (10)"; ``tools/train.py`` names the
    parameters and their shapes before any weight is loaded."""
    config = write_config(
        trained.directory, 'll_cp_10.py', """
        _base_ = ['ll_cp.py']
        train_dataloader = dict(dataset=dict(dataset=dict(num_classes=10)))
        model = dict(head=dict(num_classes=10))
        data_preprocessor = dict(num_classes=10)
        train_cfg = dict(max_epochs=3)
        """)
    with pytest.raises(
            ValueError,
            match=r'Cannot resume from this checkpoint.*`head\.fc\.weight` '
            r'has shape \(20, 64\) in the checkpoint and \(10, 64\) in the '
            r'model.*set `load_from` and leave `resume` False'):
        trained.tool.main([
            config, '--work-dir',
            str(trained.directory / 'other_classes'), '--resume',
            trained.checkpoint
        ])


def test_resume_drops_no_label_store(trained):
    """resume-label-store-without-hook: resuming an LL-Cp checkpoint with a
    config that has no hook to restore its label store would drop it
    silently (MMEngine ignores the key); it is refused."""
    config = write_config(
        trained.directory, 'plain.py', """
        _base_ = ['tiny.py']
        train_cfg = dict(max_epochs=3)
        """)
    with pytest.raises(
            ValueError,
            match=r'holds a label store.*\[.LargeLossCorrectionHook.\].*no '
            r'hook of this run restores it'):
        trained.tool.main([
            config, '--work-dir',
            str(trained.directory / 'plain'), '--resume', trained.checkpoint
        ])


def _fake_runner(model, hooks=(), loss='LargeLoss', resume=True):
    cfg = Config(dict(model=dict(head=dict(loss=dict(type=loss)))))
    return types.SimpleNamespace(
        _resume=resume, model=model, hooks=list(hooks), cfg=cfg)


def _trained_checkpoint(trained):
    """The checkpoint of the shared LL-Cp run, loaded anew."""
    return torch.load(trained.checkpoint, weights_only=False)


def test_resume_with_other_loss_warns(trained, monkeypatch):
    """resume-other-loss-warns: continuing a run under another loss is
    allowed (the weights fit) but logged."""
    messages = []
    monkeypatch.setattr(
        'mmlml.hooks.resume_check_hook.print_log',
        lambda msg, **kwargs: messages.append((msg, kwargs.get('level'))))
    checkpoint = _trained_checkpoint(trained)
    runner = _fake_runner(
        trained.runner.model, [LargeLossCorrectionHook()], loss='HillLoss')
    ResumeCheckHook().after_load_checkpoint(runner, checkpoint)
    assert messages == [
        ('ResumeCheckHook: the resumed checkpoint was trained with the loss '
         'LargeLoss, and this run continues it with HillLoss.',
         logging.WARNING)
    ]
    # The same loss: nothing to say; loading weights without resuming
    # (fine-tuning) is not checked at all.
    ResumeCheckHook().after_load_checkpoint(
        _fake_runner(trained.runner.model, [LargeLossCorrectionHook()]),
        checkpoint)
    ResumeCheckHook().after_load_checkpoint(
        _fake_runner(torch.nn.Linear(2, 3), resume=False), checkpoint)
    assert len(messages) == 1


def test_resume_with_other_model_keys(trained):
    """resume-other-model-keys: entries that only one side has (ROLE's
    label estimates, another backbone) are refused by name."""
    checkpoint = _trained_checkpoint(trained)
    model = trained.runner.model
    checkpoint['state_dict']['head.extra.weight'] = torch.zeros(2)
    with pytest.raises(
            ValueError,
            match=r"1 entries of the checkpoint are not in the model, e\.g\. "
            r"\['head\.extra\.weight'\]"):
        ResumeCheckHook().after_load_checkpoint(
            _fake_runner(model, [LargeLossCorrectionHook()]), checkpoint)
    del checkpoint['state_dict']['head.fc.bias']
    del checkpoint['state_dict']['head.extra.weight']
    with pytest.raises(
            ValueError,
            match=r"1 entries of the model are not in the checkpoint, e\.g\. "
            r"\['head\.fc\.bias'\]"):
        ResumeCheckHook().after_load_checkpoint(
            _fake_runner(model, [LargeLossCorrectionHook()]), checkpoint)


@pytest.mark.parametrize(
    'change, match',
    [("seed=1", r"seed 1200 -> 1"),
     ("mode='ratio', ratio=0.5",
      r"mode 'single_positive' -> 'ratio'; .*ratio None -> 0.5")],
    ids=['other-seed', 'other-mode'])
def test_resume_on_other_partial_labels(trained, change, match):
    """resume-other-partial-labels: resuming an LL-Cp run after changing
    the partial-label seed or mode would continue its label store on other
    labels without a word; it is refused, naming what changed, unless
    allowed explicitly."""
    name = 'labels_' + change.split('=')[0]
    config = write_config(
        trained.directory, f'{name}.py', f"""
        _base_ = ['ll_cp.py']
        train_dataloader = dict(dataset=dict({change}))
        train_cfg = dict(max_epochs=3)
        """)
    args = [
        config, '--work-dir',
        str(trained.directory / name), '--resume', trained.checkpoint
    ]
    with pytest.raises(ValueError, match=r'partial labels differ.*' + match):
        trained.tool.main(args)
    if change.startswith('seed'):  # allowed explicitly: resumes
        runner = trained.tool.main(args + [
            '--cfg-options',
            'default_hooks.resume_check.allow_label_change=True'
        ])
        assert runner.epoch == 3


def test_checkpoint_holds_the_partial_label_fingerprint(trained):
    saved = _trained_checkpoint(trained)['partial_labels']
    assert saved["mode"] == "single_positive" and saved["seed"] == 1200
    assert saved['num_samples'] == len(trained.runner.train_dataloader.dataset)
    assert len(saved['observed_labels']) == 32
