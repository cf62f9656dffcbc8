"""The dataset summary of the converters and of
tools/dataset_converters/dataset_summary.py."""
import json
import os.path as osp
import sys
import textwrap

import mmcv
import numpy as np
import pytest
from conftest import ROOT

import mmlml  # noqa: F401
from mmlml.datasets import CustomMultiLabelDataset
from mmlml.datasets.summary import dataset_summary, format_summary

sys.path.insert(0, osp.join(ROOT, 'tools', 'dataset_converters'))
import dataset_summary as tool  # noqa: E402


def _dataset(tmp_path):
    data_list = [
        dict(img_path='a.jpg', gt_label=[0], gt_label_negative=[2]),
        dict(img_path='b.jpg', gt_label=[1, 2]),
        dict(img_path='c.jpg', gt_label=[], gt_label_negative=[1]),
        dict(img_path='d.jpg', gt_label=[]),
    ]
    ann = tmp_path / 'ann.json'
    ann.write_text(
        json.dumps(
            dict(metainfo=dict(classes=['x', 'y', 'z']), data_list=data_list)))
    for name in ('a.jpg', 'c.jpg'):
        mmcv.imwrite(np.zeros((4, 4, 3), np.uint8), str(tmp_path / name))
    return str(ann)


def test_summary_counts_and_missing_images(tmp_path):
    ann = _dataset(tmp_path)
    dataset = CustomMultiLabelDataset(
        ann_file=ann, data_prefix=str(tmp_path), unlisted='unknown')
    summary = dataset_summary(dataset, progress=False)
    assert summary['num_images'] == 4 and summary['num_classes'] == 3
    assert summary['num_positives'] == 3 and summary['num_negatives'] == 2
    assert summary['num_unknown'] == 12 - 3 - 2
    assert summary['num_images_without_positive'] == 2
    assert summary['num_images_without_label'] == 1
    assert summary['num_missing_images'] == 2
    missing = [str(tmp_path / 'b.jpg'), str(tmp_path / 'd.jpg')]
    assert summary['missing_images'] == missing
    text = format_summary(summary, 'mine')
    assert 'mine: 4 images, 3 classes' in text
    assert 'missing image files: 2' in text and missing[0] in text
    short = dataset_summary(dataset, progress=False, max_missing=1)
    assert short['missing_images'] == missing[:1]
    assert format_summary(short).endswith('...')


def test_summary_of_a_stock_dataset(tmp_path):
    ann = _dataset(tmp_path)
    from mmpretrain.datasets import MultiLabelDataset
    dataset = MultiLabelDataset(ann_file=ann, data_prefix=str(tmp_path))
    summary = dataset_summary(dataset, check_images=False)
    assert summary['num_negatives'] == 12 - 3 and summary['num_unknown'] == 0
    assert 'num_missing_images' not in summary
    # The counts of mmlml's dataset reading the same file fully labelled.
    ours = CustomMultiLabelDataset(ann_file=ann, data_prefix=str(tmp_path))
    assert summary == ours.annotation_statistics()


def test_summary_tool(tmp_path, capsys):
    ann = _dataset(tmp_path)
    config = tmp_path / 'config.py'
    config.write_text(
        textwrap.dedent(f"""
        default_scope = 'mmpretrain'
        train_dataloader = dict(dataset=dict(
            type='PartialLabelDataset', mode='annotated',
            dataset=dict(type='CustomMultiLabelDataset', ann_file={ann!r},
                         data_prefix={str(tmp_path)!r}, unlisted='unknown',
                         pipeline=[])))
        """))
    assert tool.main([str(config)]) == 0
    out = capsys.readouterr().out
    assert 'PartialLabelDataset (train):' in out
    assert 'num_observed_negatives: 2' in out
    assert 'CustomMultiLabelDataset: 4 images, 3 classes' in out
    assert str(tmp_path / 'd.jpg') in out
    assert tool.main([str(config), '--split', 'test']) == 1


def _fully_labelled(tmp_path):
    """A fully labelled file (``gt_label`` only), as a test.json is."""
    ann = tmp_path / 'test.json'
    ann.write_text(
        json.dumps(
            dict(
                metainfo=dict(classes=['x', 'y', 'z']),
                data_list=[
                    dict(img_path='a.jpg', gt_label=[0]),
                    dict(img_path='b.jpg', gt_label=[1, 2])
                ])))
    return str(ann)


def test_evaluation_split_without_a_known_negative_is_refused(tmp_path):
    """A fully labelled test file read with unlisted='unknown': every known
    label is a positive, so any predictor would score mAP 100; refused
    when loaded as an evaluation split, naming the fix. The same file with
    unlisted='negative', or read for training, loads."""
    from mmlml.datasets.custom_multi_label_dataset import NoKnownNegative
    ann = _fully_labelled(tmp_path)
    with pytest.raises(NoKnownNegative, match="unlisted='negative'"):
        CustomMultiLabelDataset(
            ann_file=ann, unlisted='unknown', test_mode=True)
    test = CustomMultiLabelDataset(
        ann_file=ann, unlisted='negative', test_mode=True)
    assert test.annotation_statistics()['num_negatives'] == 3
    train = CustomMultiLabelDataset(ann_file=ann, unlisted='unknown')
    assert train.annotation_statistics()['num_negatives'] == 0


def test_summary_tool_warns_on_a_test_split_without_negative(tmp_path, capsys):
    ann = _fully_labelled(tmp_path)
    config = tmp_path / 'config.py'
    config.write_text(
        textwrap.dedent(f"""
        default_scope = 'mmpretrain'
        test_dataloader = dict(dataset=dict(
            type='CustomMultiLabelDataset', ann_file={ann!r},
            unlisted='unknown', test_mode=True, pipeline=[]))
        """))
    assert tool.main([str(config), '--split', 'test',
                      '--no-check-images']) == 0
    captured = capsys.readouterr()
    assert 'warning:' in captured.err and "unlisted='negative'" in \
        captured.err
    assert 'negatives: 0' in captured.out
