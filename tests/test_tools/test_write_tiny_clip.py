"""tools/write_tiny_clip.py: the random tiny CLIP of offline trials, the
same builder as the pseudo-labeller tests' (one implementation)."""
import os.path as osp
import sys

import numpy as np
import pytest
import torch
from conftest import ROOT
from mmengine.config import Config
from mmengine.registry import DefaultScope

from mmlml.pseudo_labellers import tiny_clip
from mmlml.registry import MODELS

sys.path.insert(0, osp.join(ROOT, 'tools'))


def test_tool_writes_a_labeller_that_scores(tmp_path):
    import pseudo_labeller_fixtures
    import write_tiny_clip
    assert pseudo_labeller_fixtures.write_tiny_clip is \
        tiny_clip.write_tiny_clip
    out = tmp_path / 'clip'
    written = write_tiny_clip.main([str(out), '--num-classes', '5'])
    assert np.load(out / 'text_embeddings.npy').shape == (5, 16)
    labeller_cfg = Config.fromfile(str(out / 'labeller.py')).labeller
    assert labeller_cfg.to_dict() == written
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        labeller = MODELS.build(labeller_cfg)
    images = torch.randint(0, 256, (2, 3, 40, 40), dtype=torch.uint8)
    scores = labeller.score(images)
    assert scores.shape == (2, 5) and torch.isfinite(scores).all()
    # The same seed writes the same weights; files are not replaced
    # without --force.
    with pytest.raises(FileExistsError):
        write_tiny_clip.main([str(out)])
    before = torch.load(out / 'tiny_clip.pth')['state_dict']
    write_tiny_clip.main([str(out), '--num-classes', '5', '--force'])
    after = torch.load(out / 'tiny_clip.pth')['state_dict']
    assert all(torch.equal(before[k], after[k]) for k in before)


def test_bad_number_of_classes():
    with pytest.raises(ValueError, match='num_classes'):
        tiny_clip.write_tiny_clip('.', num_classes=0)
