"""CosineAnnealingToEndLR is MMEngine's CosineAnnealingLR, built idle in a
run that ends at or before its ``begin`` (a one-epoch run of the demo
schedule: a warm-up epoch, then the annealing)."""
import pytest
import torch
from mmengine.optim import OptimWrapper
from mmengine.optim.scheduler import CosineAnnealingLR

import mmlml  # noqa: F401
from mmlml.registry import PARAM_SCHEDULERS
from mmlml.schedulers import CosineAnnealingToEndLR


def _optimizer(lr=0.1):
    return OptimWrapper(
        torch.optim.SGD(torch.nn.Linear(2, 2).parameters(), lr=lr))


def _lrs(scheduler, optimizer, steps):
    values = []
    for _ in range(steps):
        values.append(optimizer.param_groups[0]['lr'])
        scheduler.step()
    return values


@pytest.mark.parametrize('begin, end', [(0, 10), (3, 10), (4, 5)])
def test_same_values_as_cosine_annealing(begin, end):
    ours, stock = _optimizer(), _optimizer()
    kwargs = dict(begin=begin, end=end, eta_min=0.01, by_epoch=False)
    assert _lrs(CosineAnnealingToEndLR(ours, **kwargs), ours,
                12) == _lrs(CosineAnnealingLR(stock, **kwargs), stock, 12)


def test_built_idle_when_training_ends_before_it_begins():
    """What the Runner builds for the demo schedule with max_epochs=1 and
    4 iterations per epoch: begin = end = 4 iterations."""
    with pytest.raises(ValueError, match='end should be larger than begin'):
        CosineAnnealingLR.build_iter_from_epoch(
            _optimizer(), begin=1, end=1, epoch_length=4)
    optimizer = _optimizer()
    scheduler = PARAM_SCHEDULERS.build(
        dict(
            type='CosineAnnealingToEndLR',
            begin=1,
            end=1,
            eta_min=0.,
            by_epoch=True,
            convert_to_iter_based=True),
        default_args=dict(optimizer=optimizer, epoch_length=4))
    assert (scheduler.begin, scheduler.end) == (4, 5)
    # The 4 iterations of the run leave the learning rate alone.
    assert _lrs(scheduler, optimizer, 4) == [0.1] * 4
