"""The iteration benchmark trains a ResNet with each loss in turn."""
import os.path as osp
import sys

import pytest
from conftest import ROOT

sys.path.insert(0, osp.join(ROOT, 'tools', 'analysis'))
import benchmark_iteration  # noqa: E402


def test_benchmark_runs_a_tiny_resnet(capsys):
    benchmark_iteration.main([
        '--depth', '18', '--size', '32', '--batch', '2', '--classes', '6',
        '--rounds', '1', '--warmup', '0', '--threads', '1', '--losses',
        'ROLELoss', 'HighRankRegularizer', 'ANLoss'
    ])
    out = capsys.readouterr().out
    assert 'ResNet-18, batch 2 x 32 px, 6 classes' in out
    lines = [line.split()[0] for line in out.strip().splitlines()[2:]]
    # The reference first, once.
    assert lines == ['ANLoss', 'ROLELoss', 'HighRankRegularizer']


def test_the_estimator_logits_get_a_gradient():
    import torch
    logits = torch.zeros(2, 6)
    losses = benchmark_iteration.build_losses(['ROLELoss'], logits)
    loss, state = losses['ROLELoss']
    x = logits.clone().requires_grad_()
    loss(x, torch.tensor([0, 3]), **state).backward()
    assert state['label_estimates'].grad is not None


@pytest.mark.parametrize('argv',
                         [['--losses', 'NoSuchLoss'], ['--rounds', '0']])
def test_bad_arguments_are_refused(argv):
    with pytest.raises(SystemExit):
        benchmark_iteration.main(argv)
