"""The two-stage "BCE + pseudo label" baseline: tools/pseudo_label.py
relabels the training set of a trained tiny demo, and the second stage
trains on the file through PartialLabelDataset's 'file' mode."""
import os.path as osp
import sys
import textwrap

import numpy as np
import pytest
import torch
from conftest import ROOT
from mmengine.config import Config
from mmengine.registry import init_default_scope

import mmlml  # noqa: F401
from mmlml.datasets import split_train_val
from mmlml.registry import DATASETS

sys.path.insert(0, osp.join(ROOT, 'tools'))
import pseudo_label as tool  # noqa: E402
import train as train_tool  # noqa: E402


def test_summarise():
    observed = np.array([[1, 0, 0, -1], [0, 0, 0, 0]], dtype=np.int8)
    labels = np.array([[1, 1, 1, -1], [1, 0, 0, 0]], dtype=np.int8)
    full = np.array([[1, 1, 0, 1], [0, 0, 1, 0]], dtype=np.uint8)
    summary = tool.summarise(observed, labels, full)
    quality = summary.pop('quality')
    assert summary == dict(
        num_images=2,
        num_observed_positives=1,
        num_pseudo_positives=3,
        pseudo_positives_per_image=1.5,
        num_missing_positives=3,
        precision=1 / 3,
        recall=1 / 3)
    # A fully labelled annotation: every entry decided on is known.
    assert (quality['num_positives_on_known'],
            quality['num_positives_on_unknown']) == (3, 0)
    nothing = tool.summarise(observed, observed, full)
    assert nothing['precision'] is None and nothing['recall'] == 0


def test_refuses_other_datasets_and_arguments(tiny_demo_config):
    cfg = Config.fromfile(tiny_demo_config())
    # Looked up through wrappers, e.g. a ClassBalancedDataset.
    wrapped = dict(
        type='ClassBalancedDataset',
        dataset=cfg.train_dataloader.dataset,
        oversample_thr=0.1)
    assert tool.find_partial_label_cfg(wrapped)['mode'] == 'single_positive'
    with pytest.raises(TypeError, match='PartialLabelDataset'):
        tool.find_partial_label_cfg(cfg.test_dataloader.dataset)
    for argv in (['--out', 'labels.txt'], ['--out', 'a.npy', '--thr', '2']):
        with pytest.raises(SystemExit):
            tool.parse_args(['config.py', 'ckpt.pth'] + argv)


def _scores(config, checkpoint):
    """The predicted probabilities of every training image, computed here
    without the tool's loop: preprocessor, backbone, head, sigmoid."""
    cfg = Config.fromfile(config)
    init_default_scope('mmpretrain')
    model, _ = tool.build_model(cfg, checkpoint, 'cpu')
    dataset = tool.build_dataset(cfg)
    samples = [dataset[i] for i in range(len(dataset))]
    batch = dict(
        inputs=[s['inputs'] for s in samples],
        data_samples=[s['data_samples'] for s in samples])
    with torch.no_grad():
        data = model.data_preprocessor(batch, False)
        logits = model(data['inputs'], mode='tensor')
    return torch.sigmoid(logits).numpy(), model, dataset


def test_two_stages(tiny_demo_config, tmp_path, capsys):
    config = tiny_demo_config()
    work_dir = Config.fromfile(config).work_dir
    runner = train_tool.main([config])
    best = runner.message_hub.get_info('best_ckpt')
    assert best and osp.isfile(best)

    scores, model, dataset = _scores(config, best)
    observed, full = dataset.observed_labels, dataset.full_labels
    assert observed.shape == scores.shape == (64, 20)
    # A threshold inside the range of the scores of unannotated labels.
    thr = float(np.median(scores[observed == 0]))
    out = osp.join(work_dir, 'pseudo', 'labels.npy')
    summary = tool.main(
        [config, best, '--out', out, '--thr', f'{thr!r}', '--batch-size', '7'])
    labels = np.load(out)
    assert labels.shape == (64, 20) and labels.dtype == np.int8
    # Observed labels are kept; an unannotated label becomes positive iff
    # its probability is strictly above the threshold.
    expected = np.where((observed == 0) & (scores > thr), 1, observed)
    changed = labels != observed
    assert changed.any() and (labels[changed] == 1).all()
    assert (observed[changed] == 0).all()
    mismatch = labels != expected
    # Batches of 7 and of 64 may differ in the last bits of a score.
    assert (np.abs(scores[mismatch] - thr) < 1e-5).all()

    added = labels - observed == 1
    precision = (added & (full == 1)).sum() / added.sum()
    assert summary['all']['num_pseudo_positives'] == added.sum()
    assert summary['all']['precision'] == pytest.approx(precision)
    assert summary['all']['pseudo_positives_per_image'] == pytest.approx(
        added.sum() / 64)
    train_idx, _ = split_train_val(64)
    assert summary['train']['num_images'] == len(train_idx) == 51
    assert summary['train']['num_pseudo_positives'] == added[train_idx].sum()
    printed = capsys.readouterr().out
    assert f'written to {out}: 64 x 20, int8' in printed
    assert f'precision {100 * precision:.1f}%' in printed

    # Threshold 1 adds nothing (nothing is > 1); 0 fills every unknown.
    np.testing.assert_array_equal(
        tool.pseudo_label(model, dataset, 1., batch_size=64), observed)
    np.testing.assert_array_equal(
        tool.pseudo_label(model, dataset, 0., batch_size=64),
        np.where(observed == 0, 1, observed))

    # Stage 2 reads the file in the 'file' mode, with the training split of
    # stage 1.
    stage2 = tmp_path / 'stage2.py'
    stage2.write_text(
        textwrap.dedent(f"""
        _base_ = [{config!r}]
        train_dataloader = dict(
            dataset=dict(mode='file', label_file={out!r}))
        """))
    cfg = Config.fromfile(str(stage2))
    train = DATASETS.build(cfg.train_dataloader.dataset)
    np.testing.assert_array_equal(train.observed_labels, labels[train_idx])
    np.testing.assert_array_equal(train.full_labels, full[train_idx])
    assert train.statistics()['num_false_observed_positives'] == (
        added[train_idx] & (full[train_idx] == 0)).sum()
    sample = train[0]['data_samples']
    np.testing.assert_array_equal(sample.gt_score.numpy(),
                                  labels[train_idx[0]])


def test_demo_tool_skips_a_second_stage_without_its_file(
        tmp_path, capsys, monkeypatch):
    import demo as demo_tool
    monkeypatch.chdir(tmp_path)  # no work_dirs/an/pseudo_labels.npy here
    config = osp.join(ROOT, 'configs', 'demo', 'pseudo_label.py')
    assert demo_tool.missing_label_file(config) == \
        'work_dirs/an/pseudo_labels.npy'
    assert demo_tool.missing_label_file(
        osp.join(ROOT, 'configs', 'demo', 'an.py')) is None
    assert demo_tool.main([config, '--work-dir', str(tmp_path)]) == {}
    assert '[pseudo_label] skipped' in capsys.readouterr().out


def labels_config(tiny_demo_config, tmp_path):
    """The tiny demo trained on a label file (64 x 20 int8): the config and
    the file."""
    labels = tmp_path / 'first_stage_labels.npy'
    np.save(labels, np.zeros((64, 20), dtype=np.int8))
    config = tiny_demo_config()
    with open(config, 'a') as f:
        f.write(f'train_dataloader = dict(dataset=dict(mode="file", '
                f'label_file={str(labels)!r}))\n')
    return config, labels


def test_out_is_never_the_label_file_of_the_config(tiny_demo_config, tmp_path):
    """`--out` naming the label_file the config trains on replaced the
    config's own labels with --force: refused, the file left as it was."""
    config, labels = labels_config(tiny_demo_config, tmp_path)
    before = labels.read_bytes()
    checkpoint = tmp_path / 'model.pth'
    checkpoint.write_bytes(b'unused')
    for out in (str(labels), str(tmp_path / '.' / labels.name)):
        with pytest.raises(ValueError, match='also an input'):
            tool.main([config, str(checkpoint), '--out', out, '--force'])
    assert labels.read_bytes() == before
