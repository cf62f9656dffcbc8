"""A one-cycle learning-rate schedule whose peak follows the optimizer's
learning rate, so that ``auto_scale_lr`` scales it."""
from mmengine.optim.scheduler import OneCycleLR

from mmlml.registry import PARAM_SCHEDULERS

__all__ = ['ScaledOneCycleLR']


@PARAM_SCHEDULERS.register_module()
class ScaledOneCycleLR(OneCycleLR):
    """MMEngine's ``OneCycleLR`` with ``eta_max`` defaulting to the
    optimizer's learning rate when the scheduler is built.

    ``OneCycleLR`` sets the learning rate from its own ``eta_max``
    (rising from ``eta_max / div_factor`` to ``eta_max`` and falling to
    ``eta_max / div_factor / final_div_factor``), so MMEngine's
    ``auto_scale_lr``, which scales ``optim_wrapper.optimizer.lr`` by
    ``world_size x batch_size / base_batch_size`` before the schedulers
    are built, leaves the schedule's peak at its one-GPU value. Here the
    peak of each parameter group is the learning rate the group has when
    the scheduler is built (its ``initial_lr`` where an earlier scheduler
    set one): the configured ``optimizer.lr``, scaled with it. A given
    ``eta_max`` is used as is, as by ``OneCycleLR``.

    Args:
        optimizer (Optimizer | OptimWrapper): The optimizer.
        eta_max (float | list, optional): The peak learning rate (per
            group with a list). Defaults to None: each group's learning
            rate.
        **kwargs: The other arguments of MMEngine's ``OneCycleLR``.

    Example:
        >>> optim_wrapper = dict(optimizer=dict(type='Adam', lr=1e-4))
        >>> param_scheduler = dict(
        ...     type='ScaledOneCycleLR', pct_start=0.2, by_epoch=True,
        ...     convert_to_iter_based=True, begin=0, end=80)
        >>> auto_scale_lr = dict(base_batch_size=128)  # peak scales too
    """

    def __init__(self, optimizer, eta_max=None, **kwargs):
        if eta_max is None:
            eta_max = [
                group.get('initial_lr', group['lr'])
                for group in optimizer.param_groups
            ]
        super().__init__(optimizer, eta_max=eta_max, **kwargs)
