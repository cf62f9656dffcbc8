"""The epoch after which a method trains as itself: where the sweep's
successive halving (:mod:`.same_schedule_successive_halving_pruner`) puts
its first rung."""
from mmengine.config import Config

__all__ = ['steady_epoch']


def _schedulers(cfg: Config) -> list:
    schedulers = cfg.get('param_scheduler') or []
    return [schedulers] if isinstance(schedulers, dict) else list(schedulers)


def steady_epoch(cfg: Config) -> int:
    """:math:`W`, the number of epochs of the run's warm-up: the largest of

    - the epoch-start settings of its hooks and model components
      (``warmup_epochs`` of APL, CRISP, OPML-SP; SPLC's ``change_epoch``;
      :data:`~mmlml.cli.smoke_config.EPOCH_START_ARGS`, set or the class
      default): what the method adds starts after epoch :math:`W`;
    - the ``end`` of each epoch-based parameter scheduler that starts at
      epoch 0 and ends before the training does (a learning-rate warm-up,
      e.g. the demo schedule's one ``LinearLR`` epoch);

    0 without either. From epoch :math:`W + 1` on, the validation mAP
    measures the method as it trains to the end. An iteration-based
    scheduler does not count (its length in epochs depends on the data).

    Args:
        cfg: The run's config, with the run's overrides merged.
    """
    from mmlml.cli.smoke_config import epoch_starts
    from mmlml.registry import HOOKS, MODELS
    epochs = cfg.train_cfg.max_epochs
    warmup = epoch_starts(cfg.get('custom_hooks') or [], HOOKS)
    warmup += epoch_starts(cfg.get('model') or {}, MODELS)
    for scheduler in _schedulers(cfg):
        end = scheduler.get('end')
        if scheduler.get('by_epoch', True) and not scheduler.get('begin') \
                and isinstance(end, int) and end < epochs:
            warmup.append(end)
    return max(warmup, default=0)
