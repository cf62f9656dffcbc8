"""The loss cost benchmark runs and covers every registered mmlml loss."""
import os.path as osp
import sys

from conftest import ROOT

import mmlml  # noqa: F401
from mmlml.models.losses import PartialLabelLoss
from mmlml.registry import MODELS

sys.path.insert(0, osp.join(ROOT, 'tools', 'analysis'))
import benchmark_losses  # noqa: E402


def test_benchmark_covers_every_mmlml_loss():
    mmlml_losses = {
        name
        for name, cls in MODELS.module_dict.items()
        if cls.__module__.startswith('mmlml.') and (
            issubclass(cls, PartialLabelLoss)
            or name == 'HighRankRegularizer')
    }
    assert mmlml_losses <= set(benchmark_losses.LOSSES)


def test_benchmark_runs(capsys):
    benchmark_losses.main(['--shape', '4', '6', '--repeats', '1'])
    out = capsys.readouterr().out
    assert 'fused BCE' in out
    for name in benchmark_losses.LOSSES:
        assert name in out
