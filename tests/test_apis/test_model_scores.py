"""mmlml.apis: what training code and the tools call on a trained model,
and that training code imports neither the analysis maths nor the tools'
command line."""
import subprocess
import sys

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


def test_training_code_imports_no_analysis_and_no_cli():
    """``import mmlml`` (every hook, pseudo-labeller, loss, dataset) and
    :mod:`mmlml.apis` leave :mod:`mmlml.analysis` and :mod:`mmlml.cli`
    unimported: training code depends on neither."""
    script = ('import sys, mmlml, mmlml.apis; print(sorted(m for m in '
              "sys.modules if m.startswith(('mmlml.analysis', "
              "'mmlml.cli'))))")
    out = subprocess.run([sys.executable, '-c', script],
                         capture_output=True,
                         text=True,
                         check=True)
    assert out.stdout.strip().splitlines()[-1] == '[]'
