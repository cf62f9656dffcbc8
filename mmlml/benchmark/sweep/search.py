"""The search rules of the benchmark sweep, written once and applied to
every config: which runs a (config, setting, mode) still needs, given the
runs it has, the point chosen, and the table of the tuned results.

Every method, the assume-negative baseline and the full-label oracle
included, is tuned the same way, on the first seed and by **validation mAP
only** (on the validation split's full labels, Cole et al.'s default
protocol, which the papers tune with; with
``val_dataloader.dataset.val_labels='observed'`` on labels as partial as
the training labels), by a coordinate search:

1. learning rate: every rate of the grid (``SearchRules.lrs``) at the
   config's number of epochs and key hyperparameter; **while the best rate
   is at an edge of the rates tried, the next rate beyond that edge** on
   the 1-3-10 ladder (0.3 -> 1, 0.01 -> 0.003), within
   ``SearchRules.lr_bounds``;
2. key hyperparameter: where the config declares one
   (``tuning = {'model.head.loss.tau': [0.6, 0.7, 0.8]}``, the one value
   its paper tunes), its other values at the best point so far;
3. epochs: **while the best point's best validation epoch is its last
   one** (still improving when the schedule ends), the same point with
   twice the epochs, at most ``SearchRules.max_doublings`` times;

then the other seeds at the chosen point, whose test metrics make the
table. Ties go to the point tried first; a pruned run
(:class:`~.same_schedule_successive_halving_pruner.
SameScheduleSuccessiveHalvingPruner`) is
never chosen. Without tuning (``SearchRules.tune=False``) a config runs
its own recipe once per seed. The learning rate and the epochs of a point
are the config keys of :mod:`.config_keys`.

:func:`plan` is a pure function of the runs recorded so far, so any
worker can call it at any time and gets the same answer:
:class:`~mmlml.benchmark.sweep.sweep.Sweep` turns its answer into trials.
"""
import dataclasses
import math
from typing import Any, Dict, List, Optional, Sequence, Tuple

from mmengine.config import Config

from mmlml.benchmark.training.config_keys import EPOCHS_KEY, LR_KEY
from mmlml.benchmark.training.trial_record import BEST_EPOCH, VAL_MAP

__all__ = [
    'SearchRules', 'Plan', 'key_hyperparameter', 'point_name', 'point_key',
    'choose', 'next_lr', 'plan'
]


def _lookup(cfg: Config, key: str):
    """The value of a dotted ``key`` of ``cfg``; KeyError if absent."""
    value = cfg.to_dict() if isinstance(cfg, Config) else cfg
    for part in key.split('.'):
        if not isinstance(value, dict) or part not in value:
            raise KeyError(key)
        value = value[part]
    return value


def key_hyperparameter(cfg: Config,
                       config: str = 'config') -> Optional[Tuple[str, list]]:
    """The ``(key, values)`` of the config's ``tuning`` declaration, the
    config's own value first; None when it declares none.

    Raises:
        ValueError: ``tuning`` is not one dotted key of the config mapped to
            a list of at least two values.
    """
    tuning = cfg.get('tuning')
    if tuning is None:
        return None
    if not isinstance(tuning, dict) or len(tuning) != 1:
        raise ValueError(
            f'{config}: `tuning` must map one dotted config key to the '
            f'values to try, e.g. {{"model.head.loss.tau": [0.6, 0.7]}}; got '
            f'{tuning!r}.')
    (key, values), = tuning.items()
    if not isinstance(values, (list, tuple)) or len(values) < 2:
        raise ValueError(f'{config}: `tuning[{key!r}]` must list at least '
                         f'two values to try; got {values!r}.')
    try:
        default = _lookup(cfg, key)
    except KeyError:
        raise ValueError(f'{config}: `tuning` names {key!r}, which the '
                         'config does not set.') from None
    values = [default] + [v for v in values if v != default]
    return key, values


def point_name(point: dict) -> str:
    """A short folder name of a grid point, e.g. ``lr0.1_ep20_tau0.7``
    (the last part of each dotted key; the learning rate and the epochs
    first)."""
    short = {LR_KEY: 'lr', EPOCHS_KEY: 'ep'}
    parts = []
    for key in sorted(point, key=lambda k: (k not in short, k != LR_KEY, k)):
        value = point[key]
        if isinstance(value, float):
            value = f'{value:g}'
        parts.append(f'{short.get(key, key.rsplit(".", 1)[-1])}{value}')
    return '_'.join(parts)


def choose(runs: Sequence[dict]) -> dict:
    """The run with the best validation mAP; the first of equals."""
    if not runs:
        raise ValueError('choose() needs at least one run.')
    best = runs[0]
    for run in runs[1:]:
        if run[VAL_MAP] > best[VAL_MAP]:
            best = run
    return best


@dataclasses.dataclass(frozen=True)
class SearchRules:
    """The rules of :func:`plan`, recorded with every sweep.

    Args:
        lrs: The learning rates tried first, in this order (ties go to the
            earlier one).
        lr_bounds: The lowest and highest learning rate an edge extension
            may reach.
        max_doublings: How many times the epochs of the best point may be
            doubled while its best validation epoch is its last.
        seeds: The seeds; the first one tunes, the others run at the chosen
            point.
        tune: False: no search, every seed at the config's own recipe.
    """
    lrs: Tuple[float, ...] = (0.01, 0.03, 0.1, 0.3)
    lr_bounds: Tuple[float, float] = (0.001, 1.0)
    max_doublings: int = 2
    seeds: Tuple[int, ...] = (0, 1, 2)
    tune: bool = True

    def __post_init__(self):
        if not self.seeds:
            raise ValueError('SearchRules needs at least one seed.')
        if self.tune and not self.lrs:
            raise ValueError('SearchRules needs at least one learning rate.')
        if min(self.lrs, default=1) <= 0 or min(self.lr_bounds) <= 0 or \
                self.lr_bounds[0] > self.lr_bounds[1]:
            raise ValueError('Learning rates and their bounds must be '
                             f'positive, low <= high; got lrs={self.lrs}, '
                             f'lr_bounds={self.lr_bounds}.')
        if self.max_doublings < 0:
            raise ValueError('max_doublings must be >= 0; got '
                             f'{self.max_doublings}.')

    def to_dict(self) -> dict:
        return {
            k: list(v) if isinstance(v, tuple) else v
            for k, v in dataclasses.asdict(self).items()
        }

    @classmethod
    def from_dict(cls, data: dict) -> 'SearchRules':
        fields: Dict[str, Any] = {
            k: tuple(v) if isinstance(v, list) else v
            for k, v in data.items()
        }
        return cls(**fields)


@dataclasses.dataclass
class Plan:
    """What :func:`plan` says of one (config, setting, mode).

    Attributes:
        needed: The ``(point, seed)`` runs to start now (none recorded).
        waiting: Whether runs it needs are still queued or running.
        grid: The finished tuning runs in the order the rules tried them,
            each with its ``point`` (pruned ones included).
        chosen: The chosen point, once the search is over.
        runs: The chosen point's runs, one per seed, once all finished.
    """
    needed: List[Tuple[dict, int]]
    waiting: bool
    grid: List[dict]
    chosen: Optional[dict] = None
    runs: Optional[List[dict]] = None

    @property
    def done(self) -> bool:
        return self.runs is not None


def point_key(point: dict) -> str:
    """A canonical text of a point (its dedup key)."""
    return point_name(point)


def next_lr(lr: float, up: bool) -> float:
    """The next learning rate beyond ``lr`` on the ladder 1, 3, 10, 30, ...
    (times powers of ten): 0.3 -> 1.0 upwards, 0.01 -> 0.003 downwards."""
    exponent = math.floor(math.log10(lr))
    ladder = sorted(
        float(f'{c * 10.0**e:.12g}') for e in range(exponent - 1, exponent + 2)
        for c in (1, 3))
    if up:
        return min(v for v in ladder if v > lr * (1 + 1e-9))
    return max(v for v in ladder if v < lr * (1 - 1e-9))


def plan(records: Sequence[dict],
         rules: SearchRules,
         epochs: int,
         lr: float,
         hyperparameter: Optional[Tuple[str, list]] = None) -> Plan:
    """The search of the module docstring for one config in one setting
    and mode, replayed from the runs recorded so far.

    Args:
        records: The runs recorded, each with ``point``, ``seed`` and
            ``state`` (``'complete'``, ``'pruned'`` or ``'pending'``, i.e.
            queued or running) and, when complete, ``'val mAP'``, ``'best
            epoch'`` and ``'epochs'``. Of two records of the same run the
            first finished one counts.
        rules: The search rules.
        epochs: The config's number of epochs.
        lr: The config's learning rate (its own recipe, without tuning).
        hyperparameter: :func:`key_hyperparameter`'s result, or None.
    """
    runs_by_key: Dict[tuple, dict] = {}
    for record in records:
        run_key = (point_key(record['point']), record['seed'])
        known = runs_by_key.get(run_key)
        if known is None or (known['state'] == 'pending'
                             and record['state'] != 'pending'):
            runs_by_key[run_key] = record
    first = rules.seeds[0]
    grid: List[dict] = []
    needed: List[Tuple[dict, int]] = []
    waiting = False

    def lookup(points, seed):
        """The records of ``points`` at ``seed``, or None while any is
        missing (then added to ``needed``) or pending."""
        nonlocal waiting
        found = []
        for point in points:
            record = runs_by_key.get((point_key(point), seed))
            if record is None:
                needed.append((dict(point), seed))
            elif record['state'] == 'pending':
                waiting = True
            found.append(record)
        return None if needed or waiting else found

    def stage(points):
        """The best tuning run once ``points`` (first seed) finished."""
        found = lookup(points, first)
        if found is None:
            return None
        for point, record in zip(points, found):
            if all(
                    point_key(run['point']) != point_key(point)
                    for run in grid):
                grid.append(dict(record, point=dict(point)))
        return choose([run for run in grid if run['state'] == 'complete'])

    base = {EPOCHS_KEY: epochs}
    if not rules.tune:
        chosen = dict(base, **{LR_KEY: lr})
    else:
        if hyperparameter is not None:
            base[hyperparameter[0]] = hyperparameter[1][0]
        lrs = list(rules.lrs)
        best = stage([dict(base, **{LR_KEY: v}) for v in lrs])
        while best is not None:
            best_lr, tried = best['point'][LR_KEY], sorted(lrs)
            extra = None
            if best_lr == tried[-1]:
                extra = next_lr(best_lr, up=True)
                extra = extra if extra <= rules.lr_bounds[1] * (1 + 1e-9) \
                    else None
            if extra is None and best_lr == tried[0]:
                extra = next_lr(best_lr, up=False)
                extra = extra if extra >= rules.lr_bounds[0] * (1 - 1e-9) \
                    else None
            if extra is None or extra in lrs:
                break
            lrs.append(extra)
            best = stage([dict(base, **{LR_KEY: extra})])
        if best is not None and hyperparameter is not None:
            name, values = hyperparameter
            best = stage(
                [dict(best['point'], **{name: v}) for v in values[1:]])
        for _ in range(rules.max_doublings):
            if best is None or best[BEST_EPOCH] < best['epochs']:
                break
            longer = dict(best['point'])
            longer[EPOCHS_KEY] = 2 * best['point'][EPOCHS_KEY]
            best = stage([longer])
            if best is not None and point_key(best['point']) != \
                    point_key(longer):
                break
        if best is None:
            return Plan(needed, waiting, grid)
        chosen = dict(best['point'])
    runs = []
    for seed in rules.seeds if not rules.tune else rules.seeds[1:]:
        found_run = runs_by_key.get((point_key(chosen), seed))
        if found_run is None:
            needed.append((dict(chosen), seed))
        elif found_run['state'] == 'pending':
            waiting = True
        else:
            runs.append(dict(found_run, point=dict(chosen)))
    if needed or waiting:
        return Plan(needed, waiting, grid, chosen)
    if rules.tune:
        runs.insert(0, best)
    return Plan(needed, waiting, grid, chosen, runs)
