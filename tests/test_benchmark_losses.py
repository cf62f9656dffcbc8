"""The loss cost benchmark runs over every loss of the catalog."""
import os.path as osp
import sys

from conftest import ROOT

from mmlml.models.losses import LOSS_CATALOG

sys.path.insert(0, osp.join(ROOT, 'tools', 'analysis'))
import benchmark_losses  # noqa: E402


def test_benchmark_runs(capsys):
    benchmark_losses.main(['--shape', '4', '6', '--repeats', '1'])
    out = capsys.readouterr().out
    assert 'fused BCE' in out
    for name in LOSS_CATALOG:
        assert name in out
