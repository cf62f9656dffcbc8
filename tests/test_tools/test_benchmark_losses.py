"""The loss cost benchmark runs over every loss of the catalog, eager and
compiled, and times their share of a demo iteration."""
import os.path as osp
import sys

import pytest
from conftest import ROOT

from mmlml.models.losses import LOSS_CATALOG

sys.path.insert(0, osp.join(ROOT, 'tools', 'analysis'))
import benchmark_losses  # noqa: E402

#: The cheapest timing: one pair, no warm-up, one call per sample.
QUICK = ['--pairs', '1', '--warmup', '0', '--min-time', '0']


def test_benchmark_runs_every_loss_eager(capsys):
    benchmark_losses.main(
        ['--shape', '4', '6', '--sections', 'shapes', '--no-compile'] + QUICK)
    out = capsys.readouterr().out
    assert 'fused BCE' in out and '1 thread(s)' in out
    assert 'compiled' not in out
    for name in LOSS_CATALOG:
        assert name in out


def test_a_loss_is_timed_compiled(capsys):
    benchmark_losses.main([
        '--shape', '4', '6', '--sections', 'shapes', '--losses', 'HillLoss',
        '--backend', 'eager'
    ] + QUICK)
    out = capsys.readouterr().out
    header, row = out.strip().splitlines()[1:3]
    assert header.split()[-5:] == ['compiled', 'us', 'compiled', 'x', 'BCE']
    assert row.split()[0] == 'HillLoss' and len(row.split()) == 6
    assert 'compiling (eager) took' in out


def test_demo_share(capsys):
    benchmark_losses.main(
        ['--sections', 'demo', '--losses', 'ANLoss', '--no-compile'] + QUICK)
    out = capsys.readouterr().out
    assert 'Demo iteration (an.py: ResNet_CIFAR, batch 32 x 32 px, ' \
        '20 classes)' in out
    assert 'N=32, C=20' in out and 'goal: under 5% eager' in out
    rows = [line.split() for line in out.strip().splitlines()[3:]]
    assert [row[0] for row in rows] == ['fused', 'ANLoss']
    assert rows[1][2].endswith('%')


def test_paired_ratios_on_a_fake_clock(monkeypatch):
    # Steps that advance a fake clock by fixed seconds, so the figures are
    # exact however loaded the machine is.
    clock = [0.0]
    monkeypatch.setattr(benchmark_losses.time, 'perf_counter',
                        lambda: clock[0])

    def step(seconds):
        return lambda: clock.__setitem__(0, clock[0] + seconds)

    bce, other, ratio = benchmark_losses.paired_times(
        step(0.001),
        step(0.003),
        pairs=5,
        warmup=1,
        min_time=0.01,
        device='cpu')
    assert bce == pytest.approx(0.001) and other == pytest.approx(0.003)
    assert ratio == pytest.approx(3)


def test_paired_times_of_several_candidates_alternate_the_order():
    calls = []
    steps = [lambda i=i: calls.append(i) for i in range(3)]
    _, times, ratios = benchmark_losses.paired_times_many(
        steps[0], steps[1:], pairs=2, warmup=0, min_time=0, device='cpu')
    assert len(times) == len(ratios) == 2
    # Three calls each to size the samples, then one round each way.
    assert calls[-6:] == [0, 1, 2, 2, 1, 0]


@pytest.mark.parametrize(
    'argv',
    [['--losses', 'NoSuchLoss'], ['--pairs', '0'], ['--sections', 'nothing']])
def test_bad_arguments_are_refused(argv):
    with pytest.raises(SystemExit):
        benchmark_losses.main(argv)
