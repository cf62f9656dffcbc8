"""The configs a user starts from outside the paper folders (the demo,
the custom-dataset config that inherits a paper config) fix their seed:
the paper configs leave it unset, as the papers' code does, and a config
derived from one would otherwise train with another seed at every run."""
import glob
import os.path as osp

import pytest
from conftest import ROOT
from mmengine.config import Config

DERIVED = sorted(
    glob.glob(osp.join(ROOT, 'configs', 'custom', '*.py')) +
    [osp.join(ROOT, 'configs', 'demo', 'an.py')])


@pytest.mark.parametrize(
    'path', DERIVED, ids=[osp.relpath(p, ROOT) for p in DERIVED])
def test_derived_config_fixes_its_seed(path):
    cfg = Config.fromfile(path)
    assert isinstance(
        cfg.randomness.get('seed'),
        int), (f'{osp.relpath(path, ROOT)}: randomness.seed is '
               f'{cfg.randomness.get("seed")!r}; set a fixed seed')


def test_the_paper_config_it_derives_from_has_none():
    """Why the line is needed (guards the test above against passing for
    a reason of its own)."""
    cfg = Config.fromfile(
        osp.join(ROOT, 'configs', 'gr_loss',
                 'gr_resnet50_1xb8_voc2012-single.py'))
    assert cfg.randomness.seed is None
