"""mmlml.apis: what training code and the tools call on a trained model
(that training code imports neither the analysis maths nor the tools'
command line: tests/test_layout.py)."""
import pytest

from mmlml.apis import find_pipeline

PIPELINE = [dict(type='LoadImageFromFile'), dict(type='PackInputs')]


def test_find_pipeline_through_wrappers():
    assert find_pipeline(dict(pipeline=PIPELINE), 'val_dataloader') == \
        PIPELINE
    wrapped = dict(
        type='ClassBalancedDataset',
        dataset=dict(
            type='PartialLabelDataset', dataset=dict(pipeline=PIPELINE)))
    assert find_pipeline(wrapped, 'val_dataloader') == PIPELINE
    concat = dict(
        type='ConcatDataset',
        datasets=[dict(pipeline=PIPELINE),
                  dict(pipeline=[])])
    assert find_pipeline(concat, 'val_dataloader') == PIPELINE
    with pytest.raises(ValueError, match='test_dataloader.dataset has no'):
        find_pipeline(dict(dataset=dict(type='X')), 'test_dataloader')
