"""Bad and extreme input of the datasets: the partial-label wrapper (seeds,
ratios, modes, label files, indices), SyntheticShapes, the annotation files
of CustomMultiLabelDataset and of the benchmark readers, and configs that
replace a base config's dataset.

Every case is a *kind* of bad input with an id (``area-what``); a kind
with several values has one case per value (``kind[value]``). Bad input
must raise an error of the stated type whose message names the problem;
extreme but valid input must give finite results; nothing may be silently
wrong.
"""
import json
import logging
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
from conftest import ROOT, case
from mmengine.config import Config
from mmengine.dataset import BaseDataset, Compose
from mmengine.registry import DefaultScope

import mmlml  # noqa: F401  (registers everything)
from mmlml.datasets import (CocoMultiLabel, CUBAttributes,
                            CustomMultiLabelDataset, NUSWide,
                            OpenImagesMultiLabel, PartialLabelDataset,
                            VOCMultiLabel)
from mmlml.registry import DATASETS, TRANSFORMS

NAN, INF = float('nan'), float('inf')


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
         r'seed must be an integer in \[0, 4294967295\], got -1', -1),
    case('pld-seed-out-of-range', lambda t: pld(seed=2**32), ValueError,
         r'seed must be an integer in \[0, 4294967295\], got 4294967296',
         '2**32'),
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
         r'seed is required \(every process must draw the same images',
         'None'),
    case('synthetic-seed-bad', lambda t: shapes(seed=1.5), ValueError,
         r'seed must be an integer in \[0, 4294967295\], got 1\.5', 1.5),
    case('synthetic-seed-bad', lambda t: shapes(seed=2**32), ValueError,
         r'seed must be an integer in \[0, 4294967295\], got 4294967296',
         '2**32'),
    case('synthetic-seed-bad', lambda t: shapes(seed=-1), ValueError,
         r'seed must be an integer in \[0, 4294967295\], got -1', -1),
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
         ValueError, r'num_classes must be an integer in \[2, 64\]',
         'num_classes'),
    case(
        'synthetic-out-of-range', lambda t: shapes(img_size=6), ValueError,
        r'SyntheticShapes: img_size must be an integer >= 4 \* grid_size '
        r'.*got img_size=6 with grid_size=2', 'img_size'),
    case('synthetic-out-of-range', lambda t: shapes(img_size=3), ValueError,
         r'img_size must be an integer >= 4, got 3', 'img_size=3'),
    case('synthetic-out-of-range', lambda t: shapes(source_for=4), ValueError,
         r'source_for must be None or an int in \[2, num_classes=4\), got 4',
         'source_for'),
    case('synthetic-integer-as-float', lambda t: shapes(num_samples=12.0),
         ValueError, r'num_samples must be an integer >= 1.*12\.0'),
    case('synthetic-split-unknown', lambda t: shapes(split='val'), ValueError,
         r"split must be one of \('train', 'test'\), got 'val'"),
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
    # Values numpy cannot hold or would misread: each names the file, the
    # item and its values in one line.
    case(
        'custom-gt-label-beyond-int64', lambda t: custom(
            t,
            with_items(
                dict(img_path='x.jpg', gt_label=[0]),
                dict(img_path='a.jpg', gt_label=[10**30]))), ValueError,
        r"ann\.json', item 1 \(a\.jpg\): `gt_label` must be a list of class "
        r'indices, integers in \[0, 4\), but got \[10{30}\]\.$'),
    case(
        'custom-gt-label-nested', lambda t: custom(
            t,
            with_items(
                dict(img_path='x.jpg', gt_label=[0]),
                dict(img_path='a.jpg', gt_label=[[0]]))), ValueError,
        r"ann\.json', item 1 \(a\.jpg\): `gt_label` .*but got \[\[0\]\]\.$"),
    case(
        'custom-gt-label-ragged', lambda t: custom(
            t, with_items(dict(img_path='a.jpg', gt_label=[0, [1]]))),
        ValueError, r"item 0 \(a\.jpg\): `gt_label` .*but got \[0, \[1\]\]"),
    case(
        'custom-gt-label-negative',
        lambda t: custom(t, with_items(dict(img_path='a.jpg', gt_label=[-1]))),
        ValueError, r"item 0 \(a\.jpg\): `gt_label` .*but got \[-1\]"),
    case(
        'custom-gt-label-bool', lambda t: custom(
            t,
            with_items(
                dict(img_path='x.jpg', gt_label=[2]),
                dict(img_path='a.jpg', gt_label=[0, True]))), ValueError,
        r"item 1 \(a\.jpg\): `gt_label` .*but got \[0, True\]"),
    case(
        'custom-gt-label-negative-nested', lambda t: custom(
            t,
            with_items(
                dict(img_path='a.jpg', gt_label=[0], gt_label_negative=[[1]])),
            unlisted='unknown'), ValueError,
        r"item 0 \(a\.jpg\): `gt_label_negative` .*but got \[\[1\]\]"),
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
         ValueError, r"unlisted must be one of \('negative', 'unknown'\)"),
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


@pytest.mark.slow
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
