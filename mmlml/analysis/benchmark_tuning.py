"""Validation-driven tuning of a benchmark method: the grid of config
overrides tried, the choice, and the table of the tuned results.

Every method, the assume-negative baseline and the full-label oracle
included, is tuned the same way, on the first seed and by **validation mAP
only** (on the validation split's full labels, Cole et al.'s default
protocol, which the papers tune with; with
``val_dataloader.dataset.val_labels='observed'`` on labels as partial as
the training labels), by a coordinate search:

1. learning rate: every rate of the grid, at the config's number of epochs
   and key hyperparameter;
2. key hyperparameter: where the config declares one
   (``tuning = {'model.head.loss.tau': [0.6, 0.7, 0.8]}``, the one value
   its paper tunes), its other values at the best point so far;
3. epochs: while the best point's best validation epoch is its last one
   (still improving when the schedule ends), the same point with twice the
   epochs, at most ``max_doublings`` times;

then the other seeds at the chosen point, whose test metrics make the
table. Ties go to the point tried first. :func:`tune` does the search
given a function that trains points; ``tools/benchmark.py --tune`` runs it
for every config and setting and records every run.
"""
import math
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from mmengine.config import Config

from .benchmark_results import aggregate, gap_closed

__all__ = [
    'LR_KEY', 'EPOCHS_KEY', 'key_hyperparameter', 'point_name', 'choose',
    'tune', 'tuned_table', 'summarise_tuning'
]

#: The overrides of the learning rate and of the number of epochs.
LR_KEY = 'optim_wrapper.optimizer.lr'
EPOCHS_KEY = 'train_cfg.max_epochs'

#: ``run_points(points, seeds) -> summaries``: train ``points[i]`` with
#: ``seeds[i]`` (in parallel where it can) and return each run's summary
#: (``tools/demo.py``'s, with ``'val mAP'``, ``'best epoch'``, ``'epochs'``).
RunPoints = Callable[[List[dict], List[int]], List[dict]]


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
        if run['val mAP'] > best['val mAP']:
            best = run
    return best


def tune(run_points: RunPoints,
         lrs: Sequence[float],
         epochs: int,
         seeds: Sequence[int],
         hyperparameter: Optional[Tuple[str, list]] = None,
         max_doublings: int = 1) -> dict:
    """The search of the module docstring for one config in one setting.

    Args:
        run_points: Trains points (see :data:`RunPoints`).
        lrs: The learning rates to try.
        epochs: The config's number of epochs.
        seeds: The seeds; the first one tunes.
        hyperparameter: :func:`key_hyperparameter`'s result, or None.
        max_doublings: How many times the epochs may be doubled.

    Returns:
        dict: ``grid`` (every tuning run, in the order tried, each with its
        ``point``), ``chosen`` (the point), ``runs`` (the runs at the
        chosen point, one per seed, the tuning run first).
    """
    if not lrs:
        raise ValueError('tune() needs at least one learning rate.')
    first = seeds[0]
    base = {EPOCHS_KEY: epochs}
    if hyperparameter is not None:
        key, values = hyperparameter
        base[key] = values[0]
    grid = []

    def stage(points):
        runs = run_points(points, [first] * len(points))
        for point, run in zip(points, runs):
            run['point'] = point
        grid.extend(runs)
        return choose(grid)

    best = stage([dict(base, **{LR_KEY: lr}) for lr in lrs])
    if hyperparameter is not None:
        best = stage([dict(best['point'], **{key: v}) for v in values[1:]])
    for _ in range(max_doublings):
        if best['best epoch'] < best['epochs']:
            break
        longer = dict(best['point'])
        longer[EPOCHS_KEY] = 2 * best['point'][EPOCHS_KEY]
        best = stage([longer])
        if best['point'] is not longer:
            break
    chosen = best['point']
    others = list(seeds[1:])
    runs = [best]
    if others:
        runs += run_points([dict(chosen) for _ in others], others)
    return dict(grid=grid, chosen=chosen, runs=runs)


def _format_value(value) -> str:
    return f'{value:g}' if isinstance(value, float) else str(value)


def tuned_table(results: Dict[str, dict],
                baseline: Optional[str] = None,
                oracle: Optional[str] = None) -> str:
    """A markdown table of tuned results (``{name: aggregate + 'tuning'}``,
    in the given order): the chosen point, its validation mAP (first seed),
    the test mAP, CF1 and OF1 over the seeds (mean ± std), the share of the
    tuned baseline -> oracle gap closed, and the test mAP of the config's
    own recipe (first seed; blank when the grid did not contain it)."""
    with_gap = baseline in results and oracle in results
    header = [
        'method', 'lr', 'epochs', 'key hyperparameter', 'val mAP', 'test mAP',
        'test CF1 (paper)', 'test OF1'
    ]
    if with_gap:
        header.append(f'{baseline} → {oracle} gap closed')
    header.append('own recipe test mAP')
    lines = [
        '| ' + ' | '.join(header) + ' |',
        '|' + '|'.join([':---'] + ['---:'] * (len(header) - 1)) + '|'
    ]
    for name, row in results.items():
        tuning = row['tuning']
        point = dict(tuning['chosen'])
        lr = point.pop(LR_KEY)
        epochs = point.pop(EPOCHS_KEY)
        hparam = ', '.join(f'{k.rsplit(".", 1)[-1]} {_format_value(v)}'
                           for k, v in point.items())
        n = len(row['runs'])
        cells = [
            name,
            _format_value(lr),
            str(epochs), hparam or '-', f'{row["runs"][0]["val mAP"]:.2f}'
        ]
        for key in ('mAP', 'CF1 (paper)', 'OF1'):
            cells.append(f'{row[key]:.2f} ± {row["std"][key]:.2f}' if n >
                         1 else f'{row[key]:.2f}')
        if with_gap:
            share = gap_closed(row['mAP'], results[baseline]['mAP'],
                               results[oracle]['mAP'])
            cells.append('n/a' if math.isnan(share) else f'{share:+.0%}')
        own = tuning.get('own recipe')
        cells.append(f'{own["mAP"]:.2f}' if own else '')
        lines.append('| ' + ' | '.join(cells) + ' |')
    return '\n'.join(lines)


def summarise_tuning(tuned: dict, own_point: dict) -> dict:
    """The aggregate of the chosen point's runs with the search attached
    (``'tuning'``: ``grid``, ``chosen`` and ``own recipe``, the grid's run
    at the config's own point, if the grid had it)."""
    row = aggregate(tuned['runs'])
    own = [run for run in tuned['grid'] if run['point'] == own_point]
    row['tuning'] = dict(
        grid=tuned['grid'],
        chosen=tuned['chosen'],
        **{'own recipe': own[0] if own else None})
    return row
