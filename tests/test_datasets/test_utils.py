"""find_partial_label_dataset: looks through single-dataset wrappers,
refuses concatenations and datasets without full labels."""
import pytest
from mmengine.dataset import ConcatDataset, RepeatDataset
from mmengine.registry import DefaultScope

import mmlml  # noqa: F401
from mmlml.datasets import find_partial_label_dataset
from mmlml.registry import DATASETS

INNER = dict(type='SyntheticShapes', num_samples=16, num_classes=5)
PARTIAL = dict(type='PartialLabelDataset', dataset=INNER, split='train')


def build(cfg):
    # MMEngine's wrappers build their inner datasets in the default scope.
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        return DATASETS.build(cfg)


def test_find_partial_label_dataset():
    dataset = build(PARTIAL)
    assert find_partial_label_dataset(dataset) is dataset
    repeat = build(dict(type='RepeatDataset', times=2, dataset=PARTIAL))
    assert isinstance(repeat, RepeatDataset)
    assert find_partial_label_dataset(repeat) is repeat.dataset
    nested = build(
        dict(
            type='RepeatDataset',
            times=2,
            dataset=dict(
                type='ClassBalancedDataset',
                oversample_thr=0.5,
                dataset=PARTIAL)))
    assert find_partial_label_dataset(nested) is nested.dataset.dataset
    concat = build(dict(type='ConcatDataset', datasets=[PARTIAL] * 2))
    assert isinstance(concat, ConcatDataset)
    with pytest.raises(TypeError, match='concatenates'):
        find_partial_label_dataset(concat)
    with pytest.raises(TypeError, match='PartialLabelDataset'):
        find_partial_label_dataset(build(INNER))


def test_error_names_the_requester():
    with pytest.raises(TypeError) as error:
        find_partial_label_dataset(build(INNER))
    assert str(error.value).startswith(
        'The training dataset must be, or wrap, a PartialLabelDataset')
    assert 'but got SyntheticShapes.' in str(error.value)
    with pytest.raises(TypeError, match=r'^SomeHook: The training dataset'):
        find_partial_label_dataset(build(INNER), requester='SomeHook')
    concat = build(dict(type='ConcatDataset', datasets=[PARTIAL] * 2))
    with pytest.raises(TypeError, match=r'^SomeHook: .*ConcatDataset'):
        find_partial_label_dataset(concat, requester='SomeHook')
