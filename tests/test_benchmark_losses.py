"""The loss cost benchmark runs over every loss of the catalog."""
import os.path as osp
import sys

import pytest
from conftest import ROOT

from mmlml.models.losses import LOSS_CATALOG

sys.path.insert(0, osp.join(ROOT, 'tools', 'analysis'))
import benchmark_losses  # noqa: E402


def test_benchmark_runs(capsys):
    benchmark_losses.main([
        '--shape', '4', '6', '--pairs', '1', '--warmup', '0', '--min-time', '0'
    ])
    out = capsys.readouterr().out
    assert 'fused BCE' in out and '1 thread(s)' in out
    for name in LOSS_CATALOG:
        assert name in out


def test_paired_ratio_of_a_step_with_itself_is_about_one():
    calls = []
    step = lambda: calls.append(sum(range(2000)))  # noqa: E731
    bce, other, ratio = benchmark_losses.paired_times(
        step, step, pairs=5, warmup=1, min_time=0.002, device='cpu')
    assert bce > 0 and other > 0
    assert 0.5 < ratio < 2


def test_unknown_loss_is_refused():
    with pytest.raises(SystemExit):
        benchmark_losses.main(['--losses', 'NoSuchLoss'])
