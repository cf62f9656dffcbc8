"""docs/datasets.md stays true to the code: its config snippets run, name
registered datasets and pass them only arguments they take."""
import inspect
import os.path as osp
import re

import pytest
from conftest import ROOT
from mmengine.registry import DefaultScope

import mmlml  # noqa: F401
from mmlml.registry import DATASETS

DOC = osp.join(ROOT, 'docs', 'datasets.md')


def _config_blocks():
    with open(DOC) as f:
        blocks = re.findall(r'```python\n(.*?)```', f.read(), flags=re.S)
    return [b for b in blocks if "type='" in b]


def _dataset_dicts(value):
    if isinstance(value, dict):
        if isinstance(value.get('type'), str):
            yield value
        for item in value.values():
            yield from _dataset_dicts(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _dataset_dicts(item)


def _accepted(cls):
    """The keyword arguments a class takes, through its base classes."""
    names = set()
    for klass in cls.__mro__:
        init = klass.__dict__.get('__init__')
        if init is not None:
            names |= set(inspect.signature(init).parameters)
    return names - {'self', 'args', 'kwargs'}


def test_doc_has_config_snippets():
    assert len(_config_blocks()) >= 6


@pytest.mark.parametrize('index', range(len(_config_blocks())))
def test_config_snippet(index):
    namespace = dict(train_pipeline=[], test_pipeline=[])
    exec(compile(_config_blocks()[index], DOC, 'exec'), namespace)
    checked = 0
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        for cfg in _dataset_dicts({
                k: v
                for k, v in namespace.items() if not k.startswith('__')
        }):
            if cfg['type'] in ('PackInputs', 'LoadImageFromFile', 'Resize',
                               'AveragePrecision', 'MultiLabelMetric'):
                continue
            cls = DATASETS.get(cfg['type'])
            assert cls is not None, f'{cfg["type"]} is not registered'
            unknown = set(cfg) - {'type'} - _accepted(cls)
            assert not unknown, f'{cfg["type"]} takes no {sorted(unknown)}'
            checked += 1
    assert checked
