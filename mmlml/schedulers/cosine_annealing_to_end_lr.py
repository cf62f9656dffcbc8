"""Cosine annealing from an epoch to the end of training that accepts a
run ending before that epoch."""
from mmengine.optim.scheduler import CosineAnnealingLR
from mmengine.optim.scheduler.param_scheduler import INF

from mmlml.registry import PARAM_SCHEDULERS

__all__ = ['CosineAnnealingToEndLR']


@PARAM_SCHEDULERS.register_module()
class CosineAnnealingToEndLR(CosineAnnealingLR):
    """MMEngine's ``CosineAnnealingLR`` that stays idle, instead of
    refusing to be built, when training ends at or before its ``begin``.

    A schedule of a warm-up and then cosine annealing to the end of
    training (``begin`` at the end of the warm-up, ``end`` left to the
    Runner, which sets it to ``max_epochs``) is refused by MMEngine in a
    run no longer than the warm-up, e.g. a one-epoch smoke run: ``end
    should be larger than begin``. The annealing would never act in such a
    run, so here its ``end`` is moved one step past ``begin``: it is built,
    and the Runner never reaches it. Otherwise it is ``CosineAnnealingLR``
    (the same values at every step); this is a schedule the stock training
    scripts (MMPretrain's ``tools/train.py``, ``mim train``) run as they
    are, with no ``max_epochs`` read from the config.

    Args:
        optimizer (Optimizer | OptimWrapper): The optimizer.
        begin (int): The step (epoch, or iteration once converted) the
            annealing starts at. Defaults to 0.
        end (int): The step it ends at, by default the end of training.
        **kwargs: The other arguments of ``CosineAnnealingLR``.

    Example:
        >>> param_scheduler = [
        ...     dict(type='LinearLR', start_factor=0.1, by_epoch=True,
        ...          begin=0, end=1, convert_to_iter_based=True),
        ...     dict(type='CosineAnnealingToEndLR', by_epoch=True, begin=1,
        ...          eta_min=0., convert_to_iter_based=True)]
    """

    def __init__(self, optimizer, begin: int = 0, end: int = INF, **kwargs):
        if end <= begin:
            end = begin + 1  # after the end of training: never reached
        super().__init__(optimizer, begin=begin, end=end, **kwargs)
