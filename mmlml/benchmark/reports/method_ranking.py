"""The ranking of ``tools/select_method.py``: the methods by mean
validation mAP over the seeds at each one's chosen point, and what keeps
that order from meaning much.

Two methods whose means differ by no more than their seed spread (the
larger of their two sample standard deviations) cannot be told apart:
they share a rank, and the tool says so. One seed measures no spread
(``± n/a``), and a validation split on which a method scores about 100
(:data:`SATURATED`) cannot separate the methods: both are warned about.
"""
from typing import Dict, List, Optional, Tuple

import numpy as np

from mmlml.benchmark.training.config_keys import EPOCHS_KEY, LR_KEY
from mmlml.benchmark.training.trial_record import VAL_MAP

__all__ = [
    'SATURATED', 'point_text', 'chosen_point', 'rank', 'table',
    'ranking_warnings'
]

#: A validation mAP at or above this leaves no room to rank methods.
SATURATED = 99.5


def point_text(point: dict) -> str:
    """A chosen point in words: ``lr 0.03, epochs 10, alpha 0.1``."""
    point = dict(point)
    parts = [f'lr {point.pop(LR_KEY):g}', f'epochs {point.pop(EPOCHS_KEY)}']
    parts += [
        f'{key.rsplit(".", 1)[-1]} {value}' for key, value in point.items()
    ]
    return ', '.join(parts)


def chosen_point(row: dict) -> dict:
    """The point of a method's runs: the one its search chose, or its own
    recipe's where nothing was searched (``--smoke``)."""
    tuning = row.get('tuning')
    return tuning['chosen'] if tuning else row['runs'][0]['point']


def _spread(values: np.ndarray) -> Optional[float]:
    return float(values.std(ddof=1)) if len(values) > 1 else None


def rank(rows: Dict[str, dict]) -> List[Tuple[str, dict]]:
    """``[(method, row)]`` best first by mean validation mAP over the
    seeds. Each row gains ``'val mAP'`` (the mean), ``'val std'`` (None
    with one seed), ``'rank'`` and ``'tied with'``: the first method of
    its rank when it cannot be told apart from it (the difference of
    their means within the larger seed spread), else None."""
    for row in rows.values():
        values = np.array([run[VAL_MAP] for run in row['runs']], float)
        row[VAL_MAP] = float(values.mean())
        row['val std'] = _spread(values)
    ranked = sorted(rows.items(), key=lambda item: -item[1][VAL_MAP])
    leader = None
    for position, (name, row) in enumerate(ranked, 1):
        row['rank'], row['tied with'] = position, None
        if leader is not None:
            first = rows[leader]
            spreads = (first['val std'], row['val std'])
            if None not in spreads and \
                    first[VAL_MAP] - row[VAL_MAP] <= max(spreads):
                row['rank'], row['tied with'] = first['rank'], leader
                continue
        leader = name
    return ranked


def _mean_std(mean: float, std: Optional[float]) -> str:
    return f'{mean:.2f} ± ' + ('n/a' if std is None else f'{std:.2f}')


def table(ranked: List[Tuple[str, dict]], baseline: str = 'an') -> str:
    """The ranked methods: rank (``=`` where tied), validation mAP (mean
    ± std over the seeds, ``n/a`` for one seed), its difference to
    ``baseline`` (when ranked), the test mAP when the runs were tested,
    and the chosen point."""
    rows = dict(ranked)
    header = ['rank', 'method', VAL_MAP]
    if baseline in rows:
        header.append(f'vs {baseline}')
    tested = all('mAP' in row for row in rows.values())
    if tested:
        header.append('test mAP')
    header.append('chosen point')
    lines = [
        '| ' + ' | '.join(header) + ' |',
        '|' + '|'.join(['---:', ':---'] + ['---:'] *
                       (len(header) - 3) + [':---']) + '|'
    ]
    shared = {row['rank'] for row in rows.values() if row['tied with']}
    for name, row in ranked:
        cells = [
            f'{row["rank"]}' + ('=' if row['rank'] in shared else ''), name,
            _mean_std(row[VAL_MAP], row['val std'])
        ]
        if baseline in rows:
            cells.append(f'{row[VAL_MAP] - rows[baseline][VAL_MAP]:+.2f}')
        if tested:
            cells.append(
                _mean_std(row['mAP'],
                          row['std']['mAP'] if len(row['runs']) > 1 else None))
        cells.append(point_text(chosen_point(row)))
        lines.append('| ' + ' | '.join(cells) + ' |')
    return '\n'.join(lines)


def ranking_warnings(ranked: List[Tuple[str, dict]],
                     validation: Optional[dict] = None) -> List[str]:
    """What keeps the order of :func:`rank` from meaning much, one line
    each: methods tied with the best, one seed, a saturated validation
    split (``validation``: its ``images``, ``positives`` and
    ``negatives``, as :func:`~.method_selection.validation_labels`
    counts them)."""
    lines = []
    best, first = ranked[0]
    tied = [name for name, row in ranked[1:] if row['tied with'] == best]
    if tied:
        values = ', '.join(f'{name} {_mean_std(row[VAL_MAP], row["val std"])}'
                           for name, row in ranked
                           if name == best or name in tied)
        lines.append(
            f'no ranking between {best} and {", ".join(tied)}: their '
            f'validation mAP differ by less than their seed spread '
            f'({values}); more seeds (--seeds) or a larger validation '
            'split would tell them apart')
    if first['val std'] is None:
        lines.append('one seed: the spread over seeds is unknown (± n/a), '
                     'so the order may be chance; --seeds 0 1 2 measures it')
    if first[VAL_MAP] >= SATURATED:
        size = '' if validation is None else (
            f' ({validation["images"]} images, {validation["positives"]} '
            f'known positives, {validation["negatives"]} known negatives)')
        lines.append(
            f'validation mAP saturates ({best}: {first[VAL_MAP]:.2f}): '
            f'the validation split{size} is too easy or too small to rank '
            'the methods; a larger one (or harder images) would')
    return lines
