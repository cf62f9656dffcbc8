"""Sum of several losses, for heads that take a single loss config."""
from typing import List, Sequence, Union

import torch.nn as nn
from torch import Tensor

from mmlml.registry import MODELS
from mmlml.utils.hyperparameters import REQUIRED
from .base import check_use_sigmoid

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
    argument (``avg_factor``, ``weight``, ``reduction_override``) goes to
    every member, and each per-sample state tensor only to the members
    that read it (their ``state_inputs``; the sum reads the union).

    Args:
        losses (Sequence[dict | nn.Module]): Configs (built with the MODELS
            registry) or modules. At least one.
        use_sigmoid (bool): Must be True (see
            :class:`~.base.PartialLabelLoss`).
    """

    def __init__(self,
                 *,
                 losses: Sequence[Union[dict, nn.Module]] = REQUIRED,
                 use_sigmoid: bool = True):
        super().__init__()
        check_use_sigmoid('LossSum', use_sigmoid)
        if losses is REQUIRED:
            raise ValueError('losses is required')
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
        names = [getattr(loss, 'state_inputs', ()) for loss in built]
        self.state_inputs = tuple(dict.fromkeys(n for ns in names for n in ns))
        hooks = [getattr(loss, 'state_hook', None) for loss in built]
        self.state_hook = next((h for h in hooks if h), None)

    def forward(self, cls_score: Tensor, target: Tensor, *args,
                **kwargs) -> Tensor:
        """Sum of ``loss(cls_score, target, *args, **kwargs)`` over the
        members, each given the state tensors it reads."""
        state = {k: kwargs.pop(k) for k in self.state_inputs if k in kwargs}
        total = cls_score.new_zeros(())
        for loss in self.losses:
            mine = {
                k: v
                for k, v in state.items()
                if k in getattr(loss, 'state_inputs', ())
            }
            total = total + loss(cls_score, target, *args, **kwargs, **mine)
        return total
