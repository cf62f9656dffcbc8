"""Sum of several losses, for heads that take a single loss config."""
from typing import List, Sequence, Union

import torch.nn as nn
from torch import Tensor

from mmlml.registry import MODELS

__all__ = ['LossSum']


@MODELS.register_module()
class LossSum(nn.Module):
    """Sum of several losses called with the same arguments.

    MMPretrain's classification heads build one ``loss`` module; this one
    builds several and adds their values, e.g. a loss and a regulariser::

        model = dict(head=dict(loss=dict(type='LossSum', losses=[
            dict(type='OPMLLoss'),
            dict(type='HighRankRegularizer', loss_weight=1e-3)])))

    Each member keeps its own ``loss_weight`` and ``reduction``; every call
    argument (``avg_factor``, ``weight``, ``reduction_override``, and any
    per-call tensor) goes to every member, so members must accept them.

    Args:
        losses (Sequence[dict | nn.Module]): Configs (built with the MODELS
            registry) or modules. At least one.
    """

    def __init__(self, losses: Sequence[Union[dict, nn.Module]]):
        super().__init__()
        if isinstance(losses, (dict, nn.Module)) or not losses:
            raise ValueError('losses must be a non-empty list of loss '
                             f'configs or modules, got {losses!r}')
        built: List[nn.Module] = []
        for loss in losses:
            if isinstance(loss, dict):
                loss = MODELS.build(loss)
            if not isinstance(loss, nn.Module):
                raise TypeError('each entry of losses must be a config dict '
                                f'or an nn.Module, got {type(loss).__name__}')
            built.append(loss)
        self.losses = nn.ModuleList(built)

    def forward(self, cls_score: Tensor, target: Tensor, *args,
                **kwargs) -> Tensor:
        """Sum of ``loss(cls_score, target, *args, **kwargs)`` over the
        members."""
        total = self.losses[0](cls_score, target, *args, **kwargs)
        for loss in self.losses[1:]:
            total = total + loss(cls_score, target, *args, **kwargs)
        return total
