"""Bad and extreme input across mmlml: losses, label generation, the
partial-label wrapper, the datasets and their annotation files, metrics,
hooks, configs and resuming.

Every case is a *kind* of bad input with an id (``area-what``); a kind
with several values has one case per value (``kind[value]``). Bad input
must raise an error of the stated type whose message names the problem;
extreme but valid input must give finite results; nothing may be silently
wrong. The loss kinds enumerate the registered losses through
``LOSS_CATALOG``.
"""
import inspect
import json
import logging
import math
import os
import os.path as osp
import re
import subprocess
import sys
import textwrap
import types
import uuid

import numpy as np
import pytest
import torch
from conftest import ROOT, load_train_tool
from mmengine.config import Config
from mmengine.dataset import BaseDataset, Compose
from mmengine.logging import MessageHub
from mmengine.registry import DefaultScope
from mmpretrain.evaluation import AveragePrecision, MultiLabelMetric

import mmlml  # noqa: F401  (registers everything)
from mmlml.datasets import (CocoMultiLabel, CUBAttributes,
                            CustomMultiLabelDataset, NUSWide,
                            OpenImagesMultiLabel, PartialLabelDataset,
                            VOCMultiLabel)
from mmlml.evaluation import (ClassWiseMultiLabelMetric,
                              MissingLabelStatistics, MultiLabelF1Metric)
from mmlml.hooks import (APLHook, ClassAPCorrectionHook, LabelEstimatorHook,
                         LargeLossCorrectionHook, MissingLabelDiagnosticsHook)
from mmlml.hooks.resume_check_hook import ResumeCheckHook
from mmlml.models import losses as L
from mmlml.models.losses import LOSS_CATALOG, example_state
from mmlml.registry import DATASETS, METRICS, MODELS, TRANSFORMS
from mmlml.utils.hyperparameters import Real, RealTuple

NAN, INF = float('nan'), float('inf')


def case(kind, make, error, match, value=None):
    """One case of a refused kind: ``make(tmp_path)`` raises ``error``
    with a message that matches ``match``."""
    case_id = kind if value is None else f'{kind}[{value}]'
    return pytest.param(make, error, match, id=case_id)


# ---------------------------------------------------------------- helpers
def synthetic(**kwargs):
    """A tiny SyntheticShapes config (12 images, 4 classes, 12 px)."""
    return dict(
        dict(
            type='SyntheticShapes',
            num_samples=12,
            num_classes=4,
            img_size=12,
            grid_size=2,
            pipeline=[dict(type='PackInputs')]), **kwargs)


def shapes(**kwargs):
    return DATASETS.build(synthetic(**kwargs))


def pld(dataset=None, **kwargs):
    """A PartialLabelDataset over the tiny SyntheticShapes."""
    return PartialLabelDataset(
        dataset=synthetic() if dataset is None else dataset, **kwargs)


class CatIds(BaseDataset):
    """A dataset whose ``get_cat_ids`` returns what it is given."""

    METAINFO = dict(classes=('a', 'b', 'c'))

    def __init__(self, cat_ids):
        self.cat_ids = cat_ids
        super().__init__(ann_file='', pipeline=[], serialize_data=False)

    def load_data_list(self):
        return [dict(img_path=f'{i}.jpg') for i in range(len(self.cat_ids))]

    def get_cat_ids(self, idx):
        return self.cat_ids[idx]


def write_json(path, content):
    path.write_text(
        content if isinstance(content, str) else json.dumps(content))
    return str(path)


GOOD_ANN = dict(
    metainfo=dict(classes=['a', 'b', 'c', 'd']),
    data_list=[
        dict(img_path='x0.jpg', gt_label=[0]),
        dict(img_path='x1.jpg', gt_label=[1, 2]),
        dict(img_path='x2.jpg', gt_label=[3]),
    ])


def custom(tmp_path, content=None, **kwargs):
    """CustomMultiLabelDataset over an annotation file holding
    ``content`` (default: :data:`GOOD_ANN`)."""
    path = write_json(tmp_path / 'ann.json',
                      GOOD_ANN if content is None else content)
    return CustomMultiLabelDataset(
        ann_file=path, serialize_data=False, **kwargs)


def with_items(*items, **extra):
    return dict(GOOD_ANN, data_list=list(items), **extra)


def label_file(tmp_path, array, name='labels.npy'):
    path = tmp_path / name
    np.save(path, array)
    return str(path)


def text_file(tmp_path, lines):
    path = tmp_path / 'labels.txt'
    path.write_text('\n'.join(lines) + '\n')
    return str(path)


def file_mode(tmp_path, path, dataset=None):
    return pld(dataset, mode='file', label_file=path)


def in_path(tmp_path, pattern=''):
    """A regex that matches the pytest directory, then ``pattern``."""
    return re.escape(str(tmp_path)) + pattern


# ------------------------------------------------------ refused: datasets
DATASET_CASES = [
    # PartialLabelDataset: seeds. None would draw other labels in every
    # worker and rank (DDP would train each GPU on other labels).
    case('pld-seed-none', lambda t: pld(seed=None), ValueError,
         r'seed is required.*same in every process'),
    case('pld-seed-float', lambda t: pld(seed=1.5), ValueError,
         r'seed must be an integer.*1\.5'),
    case('pld-seed-integral-float', lambda t: pld(seed=np.float64(3.0)),
         ValueError, r'seed must be an integer'),
    case('pld-seed-str', lambda t: pld(seed='3'), ValueError,
         r"seed must be an integer.*'3'"),
    case('pld-seed-bool', lambda t: pld(seed=True), ValueError,
         r'seed must be an integer.*True'),
    case('pld-seed-out-of-range', lambda t: pld(seed=-1), ValueError,
         r'seed must be an integer.*in \[0, 2\*\*32\)', -1),
    case('pld-seed-out-of-range', lambda t: pld(seed=2**32), ValueError,
         r'seed must be an integer.*in \[0, 2\*\*32\)', '2**32'),
    case('pld-split-seed-none', lambda t: pld(split='train', split_seed=None),
         ValueError, 'split_seed'),
    # Ratios and modes.
    case('pld-ratio-out-of-range', lambda t: pld(mode='ratio', ratio=-0.1),
         ValueError, r'ratio must lie in \[0, 1\].*-0\.1', -0.1),
    case('pld-ratio-out-of-range', lambda t: pld(mode='ratio', ratio=1.5),
         ValueError, r'ratio must lie in \[0, 1\].*1\.5', 1.5),
    case('pld-ratio-nonfinite', lambda t: pld(mode='ratio', ratio=NAN),
         ValueError, r'ratio must be a finite real number.*nan', 'nan'),
    case('pld-ratio-nonfinite', lambda t: pld(mode='ratio', ratio=INF),
         ValueError, r'ratio must be a finite real number.*inf', 'inf'),
    case('pld-ratio-not-a-number', lambda t: pld(mode='ratio', ratio='0.5'),
         ValueError, r"ratio must be a finite real number.*'0\.5'", 'str'),
    case('pld-ratio-not-a-number', lambda t: pld(mode='ratio', ratio=True),
         ValueError, r'ratio must be a finite real number.*True', 'bool'),
    case('pld-ratio-missing', lambda t: pld(mode='ratio'), ValueError,
         r"ratio is required in the 'ratio' mode"),
    case('pld-ratio-in-other-mode', lambda t: pld(ratio=0.5), ValueError,
         r"ratio must be None in the 'single_positive' mode"),
    case('pld-mode-unknown', lambda t: pld(mode='missing'), ValueError,
         r"mode must be one of .*'missing'"),
    case('pld-split-unknown', lambda t: pld(split='test'), ValueError,
         r"split must be one of \('train', 'val'\).*'test'"),
    case('pld-val-frac-bad', lambda t: pld(split='val', val_frac=NAN),
         ValueError, r'val_frac must be a finite real number.*nan', 'nan'),
    case('pld-val-frac-bad', lambda t: pld(split='val', val_frac=1.5),
         ValueError, r'val_frac must lie in \[0, 1\].*1\.5', 1.5),
    case('pld-val-labels-unknown',
         lambda t: pld(split='val', val_labels='noisy'), ValueError,
         r"val_labels must be one of .*'noisy'"),
    case('pld-val-unknown-unknown', lambda t: pld(val_unknown='unknown'),
         ValueError, r"val_unknown must be one of .*'unknown'"),
    case('pld-dataset-not-a-dataset', lambda t: PartialLabelDataset([1, 2]),
         TypeError, r'`dataset` must be a config dict or a dataset'),
    # A config that replaces a base config's dataset without _delete_=True
    # hands the base dataset's arguments to the wrapper.
    case(
        'pld-unexpected-arguments',
        lambda t: pld(data_root='data/', ann_file='a.json', pipeline=[]),
        TypeError, r"unexpected argument\(s\) 'ann_file', 'data_root', "
        r"'pipeline'.*_delete_=True"),
    case('pld-unexpected-argument-unrelated', lambda t: pld(bogus=1),
         TypeError, r"PartialLabelDataset got unexpected argument\(s\) "
         r"'bogus'\.$"),
    # Label files (the 'file' mode).
    case('pld-label-file-required', lambda t: pld(mode='file'), ValueError,
         r"label_file is required in the 'file' mode"),
    case('pld-label-file-in-other-mode', lambda t: pld(label_file='x.npy'),
         ValueError, r"label_file is read only in the 'file' mode"),
    case('pld-label-file-not-a-path', lambda t: pld(mode='file', label_file=3),
         TypeError, r'label_file must be a path, but got 3'),
    case('pld-label-file-missing', lambda t: file_mode(t, str(t / 'nope.npy')),
         FileNotFoundError, r'`label_file` .*nope\.npy.* does not exist'),
    case('pld-label-file-wrong-shape',
         lambda t: file_mode(t, label_file(t, np.zeros((3, 4), np.int8))),
         ValueError, r'labels\.npy.*shape \(3, 4\).*12 x 4'),
    case('pld-label-file-wrong-values',
         lambda t: file_mode(t, label_file(t, np.full((12, 4), 2, np.int8))),
         ValueError, r'must hold only -1 .*, 0 .* and 1 .*row 0, class 0: '
         r'.*2'),
    case(
        'pld-label-file-nonfinite', lambda t: file_mode(
            t, label_file(t, np.where(np.eye(12, 4) > 0, NAN, 0.))),
        ValueError, r'labels\.npy.* holds non-finite values, e\.g\. at row '
        r'0, class 0'),
    case('pld-label-file-wrong-dtype',
         lambda t: file_mode(t, label_file(t, np.zeros((12, 4), 'U1'))),
         TypeError, r'must hold integers -1, 0 and 1, but its dtype is <U1'),
    case('pld-label-file-not-npy',
         lambda t: file_mode(t, write_json(t / 'junk.npy', 'junk')),
         ValueError, r'junk\.npy.* is not a readable \.npy'),
    case('pld-label-file-suffix',
         lambda t: file_mode(t, str(t / 'labels.csv')), ValueError,
         r"labels\.csv.* must be an \.npy matrix or a \.txt file.*'\.csv'"),
    case('pld-text-label-file-unknown-names',
         lambda t: file_mode(t, text_file(t, ['other.jpg,0']), custom(t)),
         ValueError, r'labels\.txt.* has no line for 3 of the 3 samples'),
    case('pld-text-label-file-class-out-of-range',
         lambda t: file_mode(t, text_file(t, ['x0.jpg,0 7']), custom(t)),
         ValueError, r'labels\.txt.*line 1.*class indices \[7\] are outside '
         r'\[0, 4\)'),
    case('pld-text-label-file-not-integers',
         lambda t: file_mode(t, text_file(t, ['x0.jpg,a b']), custom(t)),
         ValueError, r'line 1.*class indices must be integers'),
    case('pld-text-label-file-malformed-line',
         lambda t: file_mode(t, text_file(t, ['x0.jpg 0 1']), custom(t)),
         ValueError, r'line 1 .*expected "<file name>,<class indices'),
    case(
        'pld-text-label-file-repeated-image', lambda t: file_mode(
            t, text_file(t, ['x0.jpg,0', 'x0.jpg,1']), custom(t)), ValueError,
        r"line 2 .*'x0\.jpg' is already listed on line 1"),
    case('pld-text-label-file-without-image-names',
         lambda t: file_mode(t, text_file(t, ['x0.jpg,0'])), ValueError,
         r'names images by file name, but sample 0 .* has no `img_path`'),
    # Category ids of a wrapped dataset are never truncated or parsed.
    case('pld-cat-ids-float', lambda t: pld(CatIds([[1.7], [0]])), ValueError,
         r'Sample 0 .*\[1\.7\].*integers in \[0, 3\)'),
    case('pld-cat-ids-integral-float', lambda t: pld(CatIds([[0], [1.0]])),
         ValueError, r'Sample 1 .*\[1\.0\].*integers'),
    case('pld-cat-ids-str', lambda t: pld(CatIds([['1'], [0]])), ValueError,
         r"Sample 0 .*\['1'\].*integers"),
    case('pld-cat-ids-none', lambda t: pld(CatIds([[None], [0]])), ValueError,
         r'Sample 0 .*\[None\].*integers'),
    case('pld-cat-ids-out-of-range', lambda t: pld(CatIds([[3], [0]])),
         ValueError, r'Sample 0 .*\[3\].*\[0, 3\)', 3),
    case('pld-cat-ids-out-of-range', lambda t: pld(CatIds([[0], [-1]])),
         ValueError, r'Sample 1 .*\[-1\].*\[0, 3\)', -1),
    case('pld-cat-ids-nested', lambda t: pld(CatIds([[[0, 1]], [0]])),
         ValueError, r'Sample 0 .*\[\[0, 1\]\].*flat list'),
    # Indices (MMEngine's BaseDataset semantics: negative ints count from
    # the end; anything but an integer is refused).
    case(
        'pld-index-float', lambda t: pld()[1.0], TypeError,
        r'PartialLabelDataset indices must be integers, got 1\.0 of type '
        r'float'),
    case('pld-index-str', lambda t: pld().get_data_info('1'), TypeError,
         r"indices must be integers, got '1' of type str"),
    case('pld-index-bool', lambda t: pld().get_cat_ids(True), TypeError,
         r'indices must be integers, got True of type bool'),
    case('pld-index-slice', lambda t: pld()[0:2], TypeError,
         r'indices must be integers, got slice'),
    case('pld-index-out-of-range', lambda t: pld()[12], IndexError,
         r'Index 12 out of range for a PartialLabelDataset of length 12', 12),
    case('pld-index-out-of-range', lambda t: pld().get_observed_label(-13),
         IndexError, r'Index -13 out of range .* length 12', -13),
    case('dataset-index-float', lambda t: shapes().get_data_info(1.0),
         TypeError, r'SyntheticShapes indices must be integers, got 1\.0',
         'SyntheticShapes'),
    case('dataset-index-float', lambda t: shapes().get_cat_ids(1.0), TypeError,
         r'SyntheticShapes indices must be integers',
         'SyntheticShapes.get_cat_ids'),
    case('dataset-index-float', lambda t: custom(t)[np.float32(1)], TypeError,
         r'CustomMultiLabelDataset indices must be integers',
         'CustomMultiLabelDataset'),
    case('dataset-index-str', lambda t: custom(t).get_label_states('0'),
         TypeError, r"CustomMultiLabelDataset indices must be integers, got "
         r"'0'"),
    case('dataset-index-out-of-range', lambda t: shapes().get_data_info(12),
         IndexError, r'Index 12 out of range for a SyntheticShapes of '
         r'length 12', 'SyntheticShapes'),
    case(
        'dataset-index-out-of-range', lambda t: custom(t).get_data_info(-4),
        IndexError, r'Index -4 out of range for a CustomMultiLabelDataset '
        r'of length 3', 'CustomMultiLabelDataset'),
    # SyntheticShapes arguments.
    case('synthetic-seed-bad', lambda t: shapes(seed=None), ValueError,
         r'seed must be an integer >= 0, got None', 'None'),
    case('synthetic-seed-bad', lambda t: shapes(seed=1.5), ValueError,
         r'seed must be an integer >= 0, got 1\.5', 1.5),
    case('synthetic-seed-bad', lambda t: shapes(seed=-1), ValueError,
         r'seed must be an integer >= 0, got -1', -1),
    case('synthetic-nonfinite', lambda t: shapes(alpha=NAN), ValueError,
         r'alpha must be a finite real number', 'alpha'),
    case('synthetic-nonfinite', lambda t: shapes(noise_std=INF), ValueError,
         r'noise_std must be a finite real number.*inf', 'noise_std'),
    case('synthetic-nonfinite', lambda t: shapes(distractors=NAN), ValueError,
         r'distractors must be a finite', 'distractors'),
    case('synthetic-nonfinite', lambda t: shapes(colour_jitter=NAN),
         ValueError, r'colour_jitter must be a finite', 'colour_jitter'),
    case('synthetic-not-a-number', lambda t: shapes(p_max='0.5'), ValueError,
         r"p_max must be a finite real number, got '0\.5'"),
    case('synthetic-out-of-range', lambda t: shapes(p_max=0), ValueError,
         r'p_max must lie in \(0, 1\]', 'p_max'),
    case('synthetic-out-of-range', lambda t: shapes(cooccurrence=4),
         ValueError, r'cooccurrence must lie in \[1, 4\)', 'cooccurrence'),
    case('synthetic-out-of-range', lambda t: shapes(num_classes=65),
         ValueError, r'`num_classes` must be an integer in \[2, 64\]',
         'num_classes'),
    case('synthetic-out-of-range', lambda t: shapes(img_size=6), ValueError,
         r'img_size must be an integer >= 8', 'img_size'),
    case('synthetic-integer-as-float', lambda t: shapes(num_samples=12.0),
         ValueError, r'num_samples must be an integer >= 1.*12\.0'),
    case('synthetic-split-unknown', lambda t: shapes(split='val'), ValueError,
         r"`split` must be one of \('train', 'test'\), but got "
         r"'val'"),
    case('synthetic-reads-no-files', lambda t: shapes(data_root='data'),
         TypeError, r"reads no files: unexpected argument 'data_root'"),
    case(
        'synthetic-metainfo-renames-classes',
        lambda t: shapes(metainfo=dict(classes=['a', 'b', 'c', 'd'])),
        ValueError, r"`metainfo\['classes'\]` cannot rename them: got "
        r"\['a', 'b', 'c', 'd'\] for the classes \['red square'"),
    case('synthetic-metainfo-other-number-of-classes',
         lambda t: shapes(metainfo=dict(classes=['red square'])), ValueError,
         r'cannot rename them'),
    # CustomMultiLabelDataset (MMPretrain's annotation JSON).
    case('custom-annotation-missing',
         lambda t: CustomMultiLabelDataset(ann_file=str(t / 'nope.json')),
         FileNotFoundError, r"The annotation file '.*nope\.json' does not "
         r'exist'),
    case(
        'custom-json-empty', lambda t: custom(t, ''), ValueError,
        r"The annotation file '.*ann\.json' cannot be parsed: Expecting "
        r'value: line 1 column 1'),
    case('custom-json-truncated', lambda t: custom(t,
                                                   json.dumps(GOOD_ANN)[:50]),
         ValueError, r"ann\.json' cannot be parsed: .*line 1 column"),
    case(
        'custom-json-not-an-object', lambda t: custom(t, [1, 2]), ValueError,
        r"ann\.json' must hold an object with a `data_list` "
        r'.*holds a list'),
    case(
        'custom-json-no-data-list',
        lambda t: custom(t, dict(metainfo=GOOD_ANN['metainfo'])), ValueError,
        r"`data_list` list of items .*object with the keys "
        r"\['metainfo'\]"),
    case('custom-json-data-list-not-a-list',
         lambda t: custom(t, dict(GOOD_ANN, data_list={'x': 1})), ValueError,
         r'holds a `data_list` of type dict'),
    case('custom-json-metainfo-not-an-object',
         lambda t: custom(t, dict(GOOD_ANN, metainfo=['a'])), ValueError,
         r'The `metainfo` of the annotation file .* must be an object'),
    case(
        'custom-item-not-an-object', lambda t: custom(t, with_items(7)),
        ValueError, r"Item 0 of the annotation file .* must be an object "
        r"with the key\(s\) \('img_path',\).*but is 7"),
    case('custom-item-without-img-path',
         lambda t: custom(t, with_items(dict(gt_label=[0]))), ValueError,
         r"Item 0 .* key\(s\) \('img_path',\).*\{'gt_label': \[0\]\}"),
    case('custom-img-path-not-a-string',
         lambda t: custom(t, with_items(dict(img_path=3, gt_label=[0]))),
         ValueError, r'Item 0 .* has the `img_path` 3; it must be a string'),
    case('custom-gt-label-missing',
         lambda t: custom(t, with_items(dict(img_path='a.jpg'))), ValueError,
         r'item 0 \(a\.jpg\) has no `gt_label`'),
    case(
        'custom-gt-label-scalar',
        lambda t: custom(t, with_items(dict(img_path='a.jpg', gt_label=1))),
        ValueError, r'item 0 \(a\.jpg\): `gt_label` must be a list of class '
        r'indices.*but got 1\.'),
    case(
        'custom-gt-label-float', lambda t: custom(
            t, with_items(dict(img_path='a.jpg', gt_label=[1.7]))), ValueError,
        r'`gt_label` must be a list of class indices, integers in \[0, 4\), '
        r'but got \[1\.7\]'),
    case('custom-gt-label-out-of-range',
         lambda t: custom(t, with_items(dict(img_path='a.jpg', gt_label=[4]))),
         ValueError, r'`gt_label` .*\[0, 4\), but got \[4\]'),
    case(
        'custom-positive-and-negative', lambda t: custom(
            t,
            with_items(
                dict(img_path='a.jpg', gt_label=[0], gt_label_negative=[0])),
            unlisted='unknown'), ValueError,
        r'classes \[0\] are both in `gt_label` and in '
        r'`gt_label_negative`'),
    case(
        'custom-classes-repeated', lambda t: custom(
            t, dict(GOOD_ANN, metainfo=dict(classes=['a', 'b', 'a', 'c']))),
        ValueError,
        r"classes of .* must be a list of distinct names.*repeated: "
        r"\['a'\]"),
    case('custom-classes-missing',
         lambda t: custom(t, dict(data_list=GOOD_ANN['data_list'])),
         ValueError, r'needs the class names: give '
         r'`metainfo=dict\(classes=\.\.\.\)`'),
    case('custom-empty-data-list', lambda t: custom(t, with_items()),
         ValueError, r"ann\.json' lists no image"),
    case('custom-unlisted-unknown', lambda t: custom(t, unlisted='maybe'),
         ValueError, r"`unlisted` must be one of \('negative', 'unknown'\)"),
    # The benchmark readers: missing and malformed files name the file.
    case(
        'coco-annotation-missing', lambda t: CocoMultiLabel(data_root=str(t)),
        FileNotFoundError, r"The COCO annotation file '.*instances_train2014"
        r"\.json' .* does not exist"),
    case(
        'coco-json-malformed', lambda t: CocoMultiLabel(
            data_root=str(t),
            ann_file=write_json(t / 'c.json', '{"images": [}')), ValueError,
        r'c\.json.*line 1, column'),
    case('voc-image-set-missing', lambda t: VOCMultiLabel(data_root=str(t)),
         FileNotFoundError, r"image set file '.*trainval\.txt' .* does not "
         r'exist'),
    case('nus-wide-image-list-missing', lambda t: NUSWide(data_root=str(t)),
         FileNotFoundError, r"The image list '.*TrainImagelist\.txt' does "
         r'not exist'),
    case(
        'nus-wide-csv-empty', lambda t: NUSWide(
            data_root=str(t),
            ann_format='csv',
            csv_file=write_json(t / 'n.csv', '')), ValueError,
        r"CSV file '.*n\.csv' must start with the header "
        r'filepath,label,split_name, but starts with None'),
    case(
        'nus-wide-csv-header-only', lambda t: NUSWide(
            data_root=str(t),
            ann_format='csv',
            csv_file=write_json(t / 'n.csv', 'filepath,label,split_name\n')),
        ValueError, r"n\.csv' lists no image of the split 'train'"),
    case(
        'nus-wide-csv-truncated-row', lambda t: NUSWide(
            data_root=str(t),
            ann_format='csv',
            csv_file=write_json(t / 'n.csv',
                                'filepath,label,split_name\na.jpg,"[\'sky')),
        ValueError, r"Line 2 of the CSV file '.*n\.csv' must have the "
        r'columns'),
    case(
        'nus-wide-csv-unknown-concept', lambda t: NUSWide(
            data_root=str(t),
            ann_format='csv',
            csv_file=write_json(
                t / 'n.csv', 'filepath,label,split_name\na.jpg,"[\'yeti\']",'
                'train\n')), ValueError,
        r"Line 2 .*n\.csv' lists unknown concepts \['yeti'\]"),
    case('cub-attributes-missing', lambda t: CUBAttributes(data_root=str(t)),
         FileNotFoundError, r'attributes\.txt.* were not found'),
    case('openimages-classes-file-missing',
         lambda t: OpenImagesMultiLabel(data_root=str(t)), ValueError,
         r'needs `classes_file`'),
]


@pytest.mark.parametrize('make, error, match', DATASET_CASES)
def test_dataset_input_refused(make, error, match, tmp_path):
    with pytest.raises(error, match=match):
        make(tmp_path)


# ------------------------------------------ datasets: valid edge inputs
def test_pld_numpy_seed_and_index_accepted():
    """pld-seed-numpy-int, pld-index-negative-ok: numpy integers are
    integers, and a negative index counts from the end."""
    dataset = pld(seed=np.int64(1200), split='train')
    reference = pld(split='train')
    assert type(dataset.seed) is int and dataset.seed == 1200
    np.testing.assert_array_equal(dataset.observed_labels,
                                  reference.observed_labels)
    last = len(dataset) - 1
    assert dataset.get_data_info(-1)['sample_idx'] == last
    assert dataset[np.int64(-1)]['data_samples'].sample_idx == last
    np.testing.assert_array_equal(
        dataset.get_observed_label(-len(dataset)),
        dataset.get_observed_label(0))


def test_dataset_negative_index_from_the_end(tmp_path):
    """dataset-index-negative-ok: ``-len`` is the first sample (MMEngine's
    serialised ``get_data_info`` read ``data_address[-len - 1]``)."""
    data = shapes()
    first = data.get_data_info(0)
    assert data.get_data_info(-len(data))['gt_label'] == first['gt_label']
    assert data.get_cat_ids(-1) == data.get_data_info(len(data) -
                                                      1)['gt_label']
    # Serialised, as MMEngine stores the data list by default.
    table = CustomMultiLabelDataset(
        ann_file=write_json(tmp_path / 's.json', GOOD_ANN))
    assert table.get_data_info(-3)['img_path'] == 'x0.jpg'
    assert table.get_label_states(np.int64(-1)).tolist() == [-1, -1, -1, 1]


_LABELS_SCRIPT = """
import json, random, sys
import numpy as np, torch
random.seed(int(sys.argv[1])); np.random.seed(int(sys.argv[1]))
torch.manual_seed(int(sys.argv[1]))
import mmlml  # noqa
from mmlml.datasets import PartialLabelDataset
dataset = PartialLabelDataset(
    dict(type='SyntheticShapes', num_samples=40, num_classes=6, img_size=12,
         grid_size=2, pipeline=[]),
    mode='ratio', ratio=0.5, seed=7, split='train')
print(json.dumps(dataset.observed_labels.tolist()))
"""


def test_pld_labels_same_in_every_process():
    """pld-labels-same-in-every-process: an integer seed gives the same
    partial labels whatever the global random state, in this process and
    in a fresh one (every dataloader worker and DDP rank builds the
    wrapper anew)."""
    labels = []
    for state in (0, 12345):
        np.random.seed(state)
        torch.manual_seed(state)
        labels.append(
            PartialLabelDataset(
                dict(
                    type='SyntheticShapes',
                    num_samples=40,
                    num_classes=6,
                    img_size=12,
                    grid_size=2,
                    pipeline=[]),
                mode='ratio',
                ratio=0.5,
                seed=7,
                split='train').observed_labels)
    np.testing.assert_array_equal(labels[0], labels[1])
    out = subprocess.run([sys.executable, '-c', _LABELS_SCRIPT, '999'],
                         capture_output=True,
                         text=True,
                         check=True,
                         cwd=ROOT,
                         env=dict(
                             os.environ,
                             OMP_NUM_THREADS='1',
                             PYTHONHASHSEED='77'))
    other = np.asarray(json.loads(out.stdout.strip().splitlines()[-1]))
    np.testing.assert_array_equal(other, labels[0])
    # A different seed does draw other labels.
    assert not np.array_equal(
        pld(seed=8).observed_labels,
        pld(seed=7).observed_labels)


def test_synthetic_numpy_arguments_and_same_classes_accepted():
    """synthetic-numpy-arguments, synthetic-metainfo-same-classes: numpy
    integers and floats are numbers; ``metainfo['classes']`` equal to the
    generated names (and other metainfo keys) are kept."""
    reference = shapes()
    data = shapes(
        num_samples=np.int64(12),
        num_classes=np.int32(4),
        p_max=np.float32(0.6),
        seed=np.int64(0))
    np.testing.assert_array_equal(data.get_label_matrix(),
                                  reference.get_label_matrix())
    names = list(reference.metainfo['classes'])
    same = shapes(metainfo=dict(classes=names, site='lab'))
    assert same.metainfo['classes'] == tuple(names)
    assert same.metainfo['site'] == 'lab'


def test_custom_repeated_image_warns(tmp_path, monkeypatch):
    """custom-repeated-image-warns: an image listed twice is two samples,
    and the log says so (with the item numbers)."""
    messages = []
    monkeypatch.setattr(
        'mmlml.datasets.custom_multi_label_dataset.print_log',
        lambda msg, **kwargs: messages.append((msg, kwargs.get('level'))))
    dataset = custom(
        tmp_path,
        with_items(
            dict(img_path='a.jpg', gt_label=[0]),
            dict(img_path='b.jpg', gt_label=[1]),
            dict(img_path='a.jpg', gt_label=[2])))
    assert len(dataset) == 3
    warnings = [m for m, level in messages if level == logging.WARNING]
    assert len(warnings) == 1
    assert re.search(
        r"lists 1 images more than once \(e\.g\. items 0 and 2 "
        r"are both 'a\.jpg'\)", warnings[0])


@pytest.mark.parametrize('wrapped', [False, True], ids=['dataset', 'pld'])
def test_missing_image_names_its_path(tmp_path, wrapped):
    """missing-image-file: loading a sample whose image is missing raises
    ``FileNotFoundError`` with the image's full path (MMPretrain's
    ``LoadImageFromFile``); the wrapper passes it on unchanged."""
    dataset = CustomMultiLabelDataset(
        ann_file=write_json(tmp_path / 'ann.json', GOOD_ANN),
        data_prefix=str(tmp_path / 'images'),
        pipeline=[dict(type='LoadImageFromFile'),
                  dict(type='PackInputs')])
    if wrapped:
        dataset = PartialLabelDataset(dataset)
    with pytest.raises(
            FileNotFoundError, match=in_path(tmp_path, r'/images/x0\.jpg')):
        dataset[0]
    if wrapped:
        # A pipeline that skips missing images (ignore_empty=True) would
        # make MMEngine fetch another index; the wrapper's labels are fixed
        # by index, so it refuses, naming the image.
        dataset.pipeline = Compose([
            TRANSFORMS.build(
                dict(type='LoadImageFromFile', ignore_empty=True))
        ])
        with pytest.raises(
                RuntimeError,
                match=r'returned None for sample 0 \(' +
                in_path(tmp_path, r'/images/x0\.jpg\)')):
            dataset[0]


def test_config_without_delete_explains_it(tmp_path):
    """config-without-delete: a config that replaces its base's dataset by
    a PartialLabelDataset without ``_delete_=True`` gets the base
    dataset's arguments merged in; the error says to add it."""
    inner = synthetic()
    (tmp_path / 'base.py').write_text(f'train_dataloader = dict('
                                      f'batch_size=2, dataset={inner!r})\n')
    for delete, name in ((False, 'child.py'), (True, 'fixed.py')):
        extra = '_delete_=True, ' if delete else ''
        (tmp_path / name).write_text(
            textwrap.dedent(f"""
            _base_ = ['base.py']
            train_dataloader = dict(dataset=dict({extra}
                type='PartialLabelDataset', dataset={inner!r}))
            """))
    cfg = Config.fromfile(str(tmp_path / 'child.py'))
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        with pytest.raises(
                TypeError,
                match=r"PartialLabelDataset got unexpected argument\(s\) "
                r"'grid_size', 'img_size', 'num_classes', 'num_samples', "
                r"'pipeline'.*dataset=dict\(_delete_=True, "
                r"type='PartialLabelDataset'"):
            DATASETS.build(cfg.train_dataloader.dataset)
        fixed = Config.fromfile(str(tmp_path / 'fixed.py'))
        assert len(DATASETS.build(fixed.train_dataloader.dataset)) == 12


# -------------------------------------------------------------- metrics
def evaluate(metric, scores, targets):
    metric.process(None, [
        dict(pred_score=torch.as_tensor(s), gt_score=torch.as_tensor(t))
        for s, t in zip(scores, targets)
    ])
    return metric.evaluate(len(scores))


SCORES = torch.tensor([[0.9, 0.6, 0.2, 0.5], [0.1, 0.8, 0.7, 0.3],
                       [0.4, 0.45, 0.9, 0.5]])
TARGETS = torch.tensor([[1, 0, 0, 1], [0, 1, 1, 0], [1, 0, 1, -1]])

METRIC_CASES = [
    case('f1-thr-out-of-range', lambda t: MultiLabelF1Metric(thr=1.5),
         ValueError, r'thr must be a number in \[0, 1\] or None, got 1\.5',
         1.5),
    case('f1-thr-out-of-range', lambda t: MultiLabelF1Metric(thr=-0.1),
         ValueError, r'thr must be a number in \[0, 1\].*-0\.1', -0.1),
    case('f1-thr-nonfinite', lambda t: MultiLabelF1Metric(thr=NAN), ValueError,
         r'thr must be a number in \[0, 1\] or None, got nan'),
    case('f1-thr-not-a-number', lambda t: MultiLabelF1Metric(thr='0.5'),
         ValueError, r"thr must be a number .*got '0\.5'"),
    case('f1-topk-bad', lambda t: MultiLabelF1Metric(topk=0), ValueError,
         r'topk must be a positive int or None, got 0', 0),
    case('f1-topk-bad', lambda t: MultiLabelF1Metric(topk=1.5), ValueError,
         r'topk must be a positive int or None, got 1\.5', 1.5),
    case('f1-topk-bad', lambda t: MultiLabelF1Metric(topk=True), ValueError,
         r'topk must be a positive int or None, got True', True),
    case('f1-topk-exceeds-classes',
         lambda t: evaluate(MultiLabelF1Metric(topk=5), SCORES, TARGETS),
         ValueError, r'topk=5 exceeds the 4 classes'),
    case('f1-strict-with-topk',
         lambda t: MultiLabelF1Metric(topk=2, strict=True), ValueError,
         r'strict=True .* topk predictions use no threshold'),
    case('f1-strict-not-bool', lambda t: MultiLabelF1Metric(strict='yes'),
         TypeError, r"strict must be a bool, got 'yes'"),
    case('classwise-thr-bad', lambda t: ClassWiseMultiLabelMetric(thr='0.5'),
         ValueError, r"thr must be in \[0, 1\], got '0\.5'", 'str'),
    case('classwise-thr-bad', lambda t: ClassWiseMultiLabelMetric(thr=NAN),
         ValueError, r'thr must be in \[0, 1\], got nan', 'nan'),
    case('classwise-topk-bad', lambda t: ClassWiseMultiLabelMetric(topk=-1),
         ValueError, r'topk must be a positive int or None, got -1'),
    case('classwise-out-file-not-csv',
         lambda t: ClassWiseMultiLabelMetric(out_file='table.txt'), ValueError,
         r"out_file must be a \.csv file, got 'table\.txt'"),
    case(
        'missing-label-statistics-shapes', lambda t: MissingLabelStatistics(
            4).update(torch.zeros(2, 4), torch.zeros(2, 3), torch.zeros(2, 4)),
        ValueError, r'logits, observed and full must have the same shape'),
    case('missing-label-statistics-num-classes',
         lambda t: MissingLabelStatistics(0), ValueError,
         r'num_classes must be an integer >= 1, got 0'),
]


@pytest.mark.parametrize('make, error, match', METRIC_CASES)
def test_metric_input_refused(make, error, match, tmp_path):
    with pytest.raises(error, match=match):
        make(tmp_path)


def test_f1_thr_none_and_topk_follow_mmpretrain():
    """f1-thr-none, f1-topk: ``thr=None`` is MMPretrain's
    ``MultiLabelMetric``'s default (0.5 unless ``topk`` is given), and
    ``topk`` predicts the top-k scores; numpy numbers are accepted."""
    default = evaluate(MultiLabelF1Metric(thr=None), SCORES, TARGETS)
    half = evaluate(MultiLabelF1Metric(thr=np.float32(0.5)), SCORES, TARGETS)
    assert default == half
    reference = evaluate(MultiLabelMetric(thr=None), SCORES, TARGETS)
    assert default['multi-label/CP'] == pytest.approx(
        reference['multi-label/precision'])
    assert default['multi-label/mean-F1'] == pytest.approx(
        reference['multi-label/f1-score'])

    top2 = evaluate(MultiLabelF1Metric(topk=np.int64(2)), SCORES, TARGETS)
    # MMPretrain's calculate() writes into its target: give it a copy.
    precision, recall, f1, _ = MultiLabelMetric.calculate(
        SCORES.clone(), TARGETS.clone(), average='macro', topk=2)
    assert top2['multi-label/CP_top2'] == pytest.approx(precision.item())
    assert top2['multi-label/CR_top2'] == pytest.approx(recall.item())
    assert top2['multi-label/mean-F1_top2'] == pytest.approx(f1.item())
    # Both given: the threshold wins, as in MMPretrain.
    both = evaluate(MultiLabelF1Metric(thr=0.5, topk=2), SCORES, TARGETS)
    assert both == half
    assert METRICS.build(dict(type='MultiLabelF1Metric', thr=None)).thr == 0.5


def test_f1_extreme_scores_are_finite():
    """f1-all-ignored-class: a class whose targets are all ignored (-1) and
    scores at 0 and 1 give finite numbers."""
    targets = TARGETS.clone()
    targets[:, 3] = -1
    scores = torch.tensor([[1., 0., 1., 0.], [0., 1., 1., 1.],
                           [1., 1., 0., 0.]])
    result = evaluate(MultiLabelF1Metric(), scores, targets)
    assert all(math.isfinite(v) for v in result.values())


def test_evaluation_never_sees_training_negatives(tmp_path):
    """eval-observed-negatives-kept: a validation split with observed
    labels reaches the evaluators in MMPretrain's encoding (observed
    negatives 0, unknown labels -1); before the fix its training -1s were
    "ignored", so a constant predictor scored mAP 100. Regression test of
    the item "Evaluation sets that carry mmlml's -1 crash AveragePrecision
    or inflate precision" (also ``test_annotated_labels.py``)."""
    items = [
        dict(
            img_path=f'{i}.jpg',
            gt_label=[i % 4],
            gt_label_negative=[(i + 1) % 4, (i + 2) % 4]) for i in range(20)
    ]
    inner = CustomMultiLabelDataset(
        ann_file=write_json(tmp_path / 'a.json', with_items(*items)),
        unlisted='unknown',
        pipeline=[dict(type='PackInputs')])
    val = PartialLabelDataset(
        inner,
        mode='annotated',
        split='val',
        val_frac=0.5,
        val_labels='observed')
    targets = torch.stack(
        [val[i]['data_samples'].gt_score for i in range(len(val))])
    observed = torch.from_numpy(val.observed_labels).float()
    assert torch.equal(targets == 0, observed == -1)
    assert torch.equal(targets == -1, observed == 0)
    # A constant predictor: every known label predicted positive, 1 in 3
    # of them is. In the training encoding the observed negatives would be
    # ignored and the unknown labels counted as negatives: precision 1/2.
    constant = torch.full(targets.shape, 0.7)
    ap = evaluate(AveragePrecision(), constant, targets)
    f1 = evaluate(MultiLabelF1Metric(), constant, targets)
    assert ap['multi-label/mAP'] < 60
    assert f1['multi-label/OP'] == pytest.approx(100 / 3)
    wrong = evaluate(MultiLabelF1Metric(), constant, observed)
    assert wrong['multi-label/OP'] == pytest.approx(50)


# ---------------------------------------------------------------- hooks
HOOK_CASES = [
    case('diagnostics-hook-interval-bad',
         lambda t: MissingLabelDiagnosticsHook(interval=0), ValueError,
         r'interval must be an integer >= 1, got 0', 0),
    case('diagnostics-hook-interval-bad',
         lambda t: MissingLabelDiagnosticsHook(interval=-2), ValueError,
         r'interval must be an integer >= 1, got -2', -2),
    case('diagnostics-hook-interval-bad',
         lambda t: MissingLabelDiagnosticsHook(interval=1.5), ValueError,
         r'interval must be an integer >= 1, got 1\.5', 1.5),
    case('diagnostics-hook-thr-bad',
         lambda t: MissingLabelDiagnosticsHook(thr=1.5), ValueError,
         r'thr must lie in \(0, 1\), got 1\.5', 1.5),
    case('diagnostics-hook-thr-bad',
         lambda t: MissingLabelDiagnosticsHook(thr=0), ValueError,
         r'thr must lie in \(0, 1\), got 0', 0),
    case('diagnostics-hook-thr-bad',
         lambda t: MissingLabelDiagnosticsHook(thr=NAN), ValueError,
         r'thr must be a finite real number, got nan', 'nan'),
    case('diagnostics-hook-num-bins-bad',
         lambda t: MissingLabelDiagnosticsHook(num_bins=1), ValueError,
         r'num_bins must be an integer >= 2, got 1'),
    case('diagnostics-hook-logit-range-bad',
         lambda t: MissingLabelDiagnosticsHook(logit_range=INF), ValueError,
         r'logit_range must be a finite real number, got inf'),
    case('diagnostics-hook-prefix-bad',
         lambda t: MissingLabelDiagnosticsHook(prefix=''), ValueError,
         r'`prefix` must be a non-empty str'),
    case('apl-hook-warmup-bad', lambda t: APLHook(warmup_epochs=0), ValueError,
         r'warmup_epochs must be an integer >= 1, got 0', 0),
    case('apl-hook-warmup-bad', lambda t: APLHook(warmup_epochs=2.0),
         ValueError, r'warmup_epochs must be an integer >= 1, got 2\.0', 2.0),
    case('apl-hook-warmup-bad', lambda t: APLHook(warmup_epochs=True),
         ValueError, r'warmup_epochs must be an integer >= 1, got True', True),
    case('apl-hook-theta-bad', lambda t: APLHook(theta=0), ValueError,
         r'theta must lie in \(0, 1\], got 0', 0),
    case('apl-hook-theta-bad', lambda t: APLHook(theta=1.5), ValueError,
         r'theta must lie in \(0, 1\], got 1\.5', 1.5),
    case('apl-hook-theta-bad', lambda t: APLHook(theta=NAN), ValueError,
         r'theta must lie in \(0, 1\], got nan', 'nan'),
    case('class-ap-hook-warmup-bad',
         lambda t: ClassAPCorrectionHook(warmup_epochs=-1), ValueError,
         r'warmup_epochs must be an integer >= 1, got -1'),
    case('class-ap-hook-delta-bad', lambda t: ClassAPCorrectionHook(delta=NAN),
         ValueError, r'delta must be a finite real number, got nan', 'nan'),
    case('class-ap-hook-delta-bad',
         lambda t: ClassAPCorrectionHook(delta=-0.1), ValueError,
         r'delta must lie in \[0, inf\], got -0\.1', -0.1),
    case('label-estimator-hook-seed-bad',
         lambda t: LabelEstimatorHook(seed=1.5), ValueError,
         r'seed must be a non-negative integer or None, got 1\.5', 1.5),
    case('label-estimator-hook-seed-bad',
         lambda t: LabelEstimatorHook(seed=-3), ValueError,
         r'seed must be a non-negative integer or None, got -3', -3),
]


@pytest.mark.parametrize('make, error, match', HOOK_CASES)
def test_hook_arguments_refused(make, error, match, tmp_path):
    with pytest.raises(error, match=match):
        make(tmp_path)


def test_hook_numpy_arguments_accepted():
    """hook-numpy-arguments: numpy numbers are numbers."""
    hook = APLHook(warmup_epochs=np.int64(3), theta=np.float32(0.5))
    assert (hook.warmup_epochs, hook.theta) == (3, 0.5)
    assert type(hook.warmup_epochs) is int
    assert ClassAPCorrectionHook(warmup_epochs=np.int32(2)).warmup_epochs == 2
    assert LabelEstimatorHook(seed=np.int64(4)).seed == 4
    assert MissingLabelDiagnosticsHook(
        interval=np.int64(2), thr=np.float32(0.25)).interval == 2


# ------------------------------------------- training runs and resuming
TINY = """
_base_ = [{an!r}]
train_dataloader = dict(
    batch_size=16,
    dataset=dict(dataset=dict(num_samples=64,
                              pipeline=[dict(type='PackInputs')])))
val_dataloader = None
val_cfg = None
val_evaluator = None
test_dataloader = None
test_cfg = None
test_evaluator = None
train_cfg = dict(max_epochs=2, val_interval=100)
default_hooks = dict(
    logger=dict(interval=10),
    checkpoint=dict(interval=1, max_keep_ckpts=-1, save_best=None))
"""

#: The LL-Cp method: a loss that reads a label store and the hook that
#: keeps it (saved in every checkpoint as ``label_store``).
LL_CP = """
_base_ = ['tiny.py']
model = dict(head=dict(type='PartialLabelLinearClsHead',
                       loss=dict(_delete_=True, type='LargeLoss',
                                 mode='permanent', delta_rel=0.01)))
custom_hooks = [dict(type='LargeLossCorrectionHook')]
"""


def _write(directory, name, text):
    path = directory / name
    path.write_text(textwrap.dedent(text))
    return str(path)


@pytest.fixture(scope='module')
def trained(tmp_path_factory):
    """One tiny LL-Cp training run of 2 epochs through ``tools/train.py``
    (64 images, 4 iterations an epoch), shared by the resume cases."""
    directory = tmp_path_factory.mktemp('bad_input_runs')
    _write(directory, 'tiny.py',
           TINY.format(an=osp.join(ROOT, 'configs', 'demo', 'an.py')))
    config = _write(directory, 'll_cp.py', LL_CP)
    tool = load_train_tool()
    runner = tool.main([config, '--work-dir', str(directory / 'll_cp')])
    checkpoint = str(directory / 'll_cp' / 'epoch_2.pth')
    assert osp.isfile(checkpoint)
    return types.SimpleNamespace(
        directory=directory, tool=tool, runner=runner, checkpoint=checkpoint)


def test_resume_with_other_num_classes(trained):
    """resume-other-num-classes: MMEngine skips the head's weights with a
    log line and fails at the first step with "The size of tensor a (20)
    must match the size of tensor b (10)"; ``tools/train.py`` names the
    parameters and their shapes before any weight is loaded."""
    config = _write(
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
    config = _write(
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


def _checkpoint(trained):
    return torch.load(trained.checkpoint, weights_only=False)


def test_resume_with_other_loss_warns(trained, monkeypatch):
    """resume-other-loss-warns: continuing a run under another loss is
    allowed (the weights fit) but logged."""
    messages = []
    monkeypatch.setattr(
        'mmlml.hooks.resume_check_hook.print_log',
        lambda msg, **kwargs: messages.append((msg, kwargs.get('level'))))
    checkpoint = _checkpoint(trained)
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
    checkpoint = _checkpoint(trained)
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
    config = _write(
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
    saved = _checkpoint(trained)['partial_labels']
    assert saved["mode"] == "single_positive" and saved["seed"] == 1200
    assert saved['num_samples'] == len(trained.runner.train_dataloader.dataset)
    assert len(saved['observed_labels']) == 32


def test_resume_without_label_store_warns(trained, monkeypatch):
    """resume-without-label-store-warns: a checkpoint without a label store
    resumed by a run with a store hook starts from the initial labels, and
    the log says so (``LabelStoreHook``)."""
    messages = []
    monkeypatch.setattr('mmlml.hooks.label_store_hook.print_log',
                        lambda msg, *args, **kwargs: messages.append(msg))
    checkpoint = _checkpoint(trained)
    del checkpoint['label_store']
    hook = LargeLossCorrectionHook()
    hook.after_load_checkpoint(_fake_runner(None), checkpoint)
    assert len(messages) == 1
    assert re.search(
        r'LargeLossCorrectionHook: the resumed checkpoint holds no label '
        r'store; training continues from the initial labels', messages[0])


def test_epoch_dependent_loss_after_training(trained):
    """loss-epoch-after-training: once a Runner's ``train()`` has finished,
    an epoch-dependent loss called without ``set_epoch`` refuses to guess
    the epoch."""
    hubs = MessageHub._instance_dict
    hub = trained.runner.message_hub
    hubs[hub.instance_name] = hubs.pop(hub.instance_name)  # make current
    assert MessageHub.get_current_instance() is hub
    for name in EPOCH_LOSSES:
        loss = MODELS.build(dict(type=name, **LOSS_CATALOG[name]))
        x = torch.randn(4, 5)
        with pytest.raises(RuntimeError, match='set_epoch'):
            loss(x, tri_state(), **example_state(loss, x))


@pytest.mark.parametrize(
    'hook, warmup, match',
    [('APLHook', 2, r'APLHook: warmup_epochs=2 leaves no epoch to '
      r'pseudo-label in 2 epochs'),
     ('ClassAPCorrectionHook', 3, r'ClassAPCorrectionHook: warmup_epochs=3 '
      r'leaves no epoch trained on corrected labels in 2 epochs'),
     ('ClassPriorHook', 2, r'ClassPriorHook: warmup_epochs=2 leaves no '
      r'epoch trained with the estimated priors in 2 epochs')],
    ids=[
        'apl-hook-warmup-ge-max-epochs', 'class-ap-hook-warmup-ge-max-epochs',
        'class-prior-hook-warmup-ge-max-epochs'
    ])
def test_hook_warmup_ge_max_epochs(trained, hook, warmup, match):
    """A warm-up as long as the training refuses to start."""
    loss = {
        'APLHook':
        dict(type='EMAPLLoss', alpha=0.2, beta=0.5),
        'ClassAPCorrectionHook':
        dict(type='LossSum', losses=[dict(type='OPMLSPLoss', rho=0.5)]),
        'ClassPriorHook':
        dict(type='CRISPLoss'),
    }[hook]
    config = _write(
        trained.directory, f'{hook}.py', f"""
        _base_ = ['tiny.py']
        model = dict(head=dict(type='PartialLabelLinearClsHead',
                               loss=dict(_delete_=True, **{loss!r})))
        custom_hooks = [dict(type={hook!r}, warmup_epochs={warmup})]
        """)
    with pytest.raises(ValueError, match=match):
        trained.tool.main(
            [config, '--work-dir',
             str(trained.directory / hook)])


# ---------------------------------------------------------------- losses
#: Losses whose behaviour depends on the training epoch.
EPOCH_LOSSES = [
    name for name in LOSS_CATALOG if hasattr(MODELS.get(name), 'set_epoch')
]


def tri_state(num=4, num_classes=5):
    target = torch.tensor([[1., 0., -1., 0., 1.], [0., 1., -1., -1., 0.],
                           [-1., 0., 1., 0., 0.], [1., -1., 0., 1., -1.]])
    return target[:num, :num_classes]


def build_loss(name, **overrides):
    """A catalog loss, built through the registry at epoch 2 of 10."""
    loss = MODELS.build(dict(type=name, **{**LOSS_CATALOG[name], **overrides}))
    if hasattr(loss, 'set_epoch'):
        loss.set_epoch(2, 10)
    return loss


def call(loss, cls_score, target):
    return loss(cls_score, target, **example_state(loss, cls_score.detach()))


def _float_hyperparameters():
    """(loss, hyperparameter) for every declared real hyperparameter."""
    return [(name, hp) for name in LOSS_CATALOG for hp, spec in getattr(
        MODELS.get(name), 'hyperparameters', {}).items()
            if isinstance(spec, Real)]


def _tuple_hyperparameters():
    """(loss, hyperparameter, index) for every entry of a declared tuple
    hyperparameter (GR Loss's linear schedules)."""
    return [(name, hp, i) for name in LOSS_CATALOG for hp, spec in getattr(
        MODELS.get(name), 'hyperparameters', {}).items()
            if isinstance(spec, RealTuple) for i in range(len(spec.names))]


#: Functional forms with the arguments they need besides the tensors.
FUNCTIONALS = {
    'hill_loss': {},
    'focal_margin_loss': {},
    'splc_loss': {},
    'lasd_loss': {},
    'em_loss': {},
    'opml_loss': {},
    'zlpr_loss': {},
    'assume_negative_loss': {},
    'negative_mse_loss': {},
    'asymmetric_focal_loss': {},
    'epr_loss': dict(expected_positives=2.0),
    'entmin_loss': dict(alpha=0.1),
}


@pytest.mark.parametrize('value', [NAN, INF, -INF], ids=['nan', 'inf', '-inf'])
@pytest.mark.parametrize('name', list(LOSS_CATALOG))
def test_loss_target_nonfinite(name, value):
    """loss-target-nonfinite: a target with NaN or +-inf is refused (it
    raised ``cannot convert float NaN to integer`` or ``OverflowError``,
    and OPML/ZLPR returned NaN)."""
    loss = build_loss(name)
    target = tri_state()
    target[1, 2] = value
    with pytest.raises(ValueError, match='non-finite'):
        call(loss, torch.randn(4, 5), target)


@pytest.mark.parametrize('value', [NAN, INF], ids=['nan', 'inf'])
@pytest.mark.parametrize('name', sorted(FUNCTIONALS))
def test_loss_functional_target_nonfinite(name, value):
    """loss-functional-target-nonfinite: the functional forms too."""
    target = tri_state()
    target[0, 0] = value
    with pytest.raises(ValueError, match='non-finite'):
        getattr(L, name)(torch.randn(4, 5), target, **FUNCTIONALS[name])


@pytest.mark.parametrize('value', [NAN, INF], ids=['nan', 'inf'])
@pytest.mark.parametrize(
    'name, hp', _float_hyperparameters(), ids=lambda v: str(v))
def test_loss_hyperparameter_nonfinite(name, hp, value):
    """loss-hyperparameter-nonfinite: every real hyperparameter refuses
    NaN and inf, naming itself."""
    with pytest.raises(ValueError, match=rf'{hp}.*finite'):
        build_loss(name, **{hp: value})


def _takes(name, argument):
    return argument in inspect.signature(MODELS.get(name)).parameters


#: Losses with a ``loss_weight`` (``LossSum`` weighs its parts instead).
WEIGHTED_LOSSES = [
    name for name in LOSS_CATALOG if _takes(name, 'loss_weight')
]


@pytest.mark.parametrize(
    'value', [NAN, INF, np.float32('nan')],
    ids=['nan', 'inf', 'np.float32-nan'])
@pytest.mark.parametrize('name', WEIGHTED_LOSSES)
def test_loss_weight_nonfinite(name, value):
    """loss-weight-nonfinite: ``loss_weight`` too."""
    with pytest.raises(ValueError, match=r'loss_weight.*finite'):
        build_loss(name, loss_weight=value)


@pytest.mark.parametrize(
    'name, hp, index', _tuple_hyperparameters(), ids=lambda v: str(v))
def test_loss_schedule_entry_nonfinite(name, hp, index):
    """loss-schedule-nonfinite: each entry of GR Loss's tuple schedules
    refuses NaN, naming the entry."""
    spec = MODELS.get(name).hyperparameters[hp]
    value = list(spec.default)
    value[index] = NAN
    with pytest.raises(ValueError, match=rf'{hp}\[{index}\].*finite'):
        build_loss(name, **{hp: tuple(value)})


def _numpy_overrides(name):
    """Every real and integer hyperparameter of a loss with a value, as a
    numpy scalar, and the same as Python numbers."""
    numpy_values, python_values = {}, {}
    for hp, spec in getattr(MODELS.get(name), 'hyperparameters', {}).items():
        value = LOSS_CATALOG[name].get(hp, spec.default)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        scalar = np.int64(value) if isinstance(value,
                                               int) else np.float32(value)
        numpy_values[hp], python_values[hp] = scalar, scalar.item()
    if _takes(name, 'loss_weight'):
        numpy_values['loss_weight'] = np.float32(2.0)
        python_values['loss_weight'] = 2.0
    return numpy_values, python_values


@pytest.mark.parametrize('name', list(LOSS_CATALOG))
def test_loss_numpy_scalar_hyperparameters(name):
    """loss-numpy-scalars: ``np.float32(2.0)`` and ``np.int64(1)`` are real
    numbers and behave like the Python number."""
    numpy_values, python_values = _numpy_overrides(name)
    x, target = torch.randn(4, 5), tri_state()
    expected = call(build_loss(name, **python_values), x, target)
    got = call(build_loss(name, **numpy_values), x, target)
    torch.testing.assert_close(got, expected)


@pytest.mark.parametrize('name', list(LOSS_CATALOG))
def test_loss_use_sigmoid(name):
    """loss-use-sigmoid: ``use_sigmoid=True`` (the stock multi-label loss
    config's) is accepted; ``False`` (a softmax) is refused."""
    build_loss(name, use_sigmoid=True)
    with pytest.raises(ValueError, match='sigmoid'):
        build_loss(name, use_sigmoid=False)


def test_cfg_options_loss_type_on_a_stock_config():
    """cfg-options-loss-type: the tools' help example
    ``--cfg-options model.head.loss.type=HillLoss`` on a stock multi-label
    config (its loss is ``CrossEntropyLoss(use_sigmoid=True)``)."""
    cfg = Config.fromfile(osp.join(ROOT, 'configs', 'demo', 'an.py'))
    assert cfg.model.head.loss.use_sigmoid is True
    cfg.merge_from_dict({'model.head.loss.type': 'HillLoss'})
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        model = MODELS.build(cfg.model)
    assert type(model.head.loss_module).__name__ == 'HillLoss'


@pytest.mark.parametrize(
    'dtype', [torch.float32, torch.float64], ids=['float32', 'float64'])
@pytest.mark.parametrize('name', list(LOSS_CATALOG))
def test_loss_extreme_logits(name, dtype):
    """loss-extreme-logits: logits of +-1e4 give a finite loss and finite
    gradients."""
    x = (torch.tensor([[1., -1., 1., -1., 1.], [-1., 1., -1., 1., -1.],
                       [1., 1., -1., -1., 1.], [-1., -1., 1., 1., -1.]]) *
         1e4).to(dtype).requires_grad_(True)
    loss = call(build_loss(name), x, tri_state().to(dtype))
    assert torch.isfinite(loss).all()
    loss.sum().backward()
    assert torch.isfinite(x.grad).all()


@pytest.mark.parametrize('name', list(LOSS_CATALOG))
def test_loss_float16_logits(name):
    """loss-float16: half-precision logits (AMP) give a finite loss and
    finite gradients."""
    x = (torch.randn(4, 5, generator=torch.Generator().manual_seed(0)) *
         8).half().requires_grad_(True)
    loss = call(build_loss(name), x, tri_state().half())
    assert torch.isfinite(loss).all()
    loss.float().sum().backward()
    assert torch.isfinite(x.grad).all()


@pytest.mark.parametrize('name', EPOCH_LOSSES)
def test_epoch_dependent_loss_outside_training(name):
    """loss-epoch-outside-training: with a fresh MessageHub (no training),
    an epoch-dependent loss called without ``set_epoch`` refuses to
    guess."""
    MessageHub.get_instance(f'bad_input_{uuid.uuid4().hex}')
    loss = MODELS.build(dict(type=name, **LOSS_CATALOG[name]))
    x = torch.randn(4, 5)
    with pytest.raises(RuntimeError, match='set_epoch'):
        loss(x, tri_state(), **example_state(loss, x))
