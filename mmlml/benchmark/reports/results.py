"""Summaries of benchmark runs: the usual multi-label numbers of a test,
their mean and spread over seeds, the share of the gap between the
assume-negative baseline and the full-label oracle that a method closes,
the markdown table of a comparison, and how two benchmarks (two domains)
rank the same methods.

Used by ``tools/demo.py`` (one config or a few) and ``tools/benchmark.py``
(methods x settings x seeds).
"""
import math
from typing import Any, Dict, List, Optional, Sequence, Union

import numpy as np

from mmlml.benchmark.reports.oracle import GapEnds, gap_closed
from mmlml.benchmark.reports.paper_claims import best_gap_share
from mmlml.benchmark.training.config_keys import EPOCHS_KEY, LR_KEY
from mmlml.benchmark.training.trial_record import COLUMNS, VAL_MAP

__all__ = [
    'COLUMNS', 'aggregate', 'tuned_table', 'summarise_tuning', 'gap_closed',
    'table_ends', 'ends_header', 'markdown_table', 'rank_correlation',
    'rank_correlation_p_value', 'domains_table'
]


def aggregate(runs: List[dict], columns: Sequence[str] = COLUMNS) -> dict:
    """Mean of each column over ``runs``, with ``'std'`` (the sample standard
    deviation, ``ddof=1``; 0 for a single run) and the runs themselves."""
    if not runs:
        raise ValueError('aggregate() needs at least one run.')
    values = {key: np.array([run[key] for run in runs]) for key in columns}
    result: Dict[str, Any] = {
        key: float(v.mean())
        for key, v in values.items()
    }
    result['std'] = {
        key: float(v.std(ddof=1)) if len(v) > 1 else 0.0
        for key, v in values.items()
    }
    result['runs'] = runs
    return result


def table_ends(results: Dict[str, dict], baseline: Optional[str],
               oracle: Optional[str],
               ends: Optional[GapEnds]) -> Optional[GapEnds]:
    """The ends of a table's gap: ``ends`` where given (a record's,
    :func:`~.oracle.gap_ends`), else ``baseline`` and ``oracle`` where
    both are rows of ``results`` (named as they are)."""
    if ends is not None or baseline not in results or oracle not in results:
        return ends
    return GapEnds(baseline, oracle, results[oracle], False,
                   (baseline, oracle))


def ends_header(ends: GapEnds,
                names: Optional[Dict[str, str]] = None,
                given: bool = True) -> str:
    """The header of a table's gap column: the oracle as its record names
    it (``given``: :func:`~.oracle.gap_ends`'s ends), else by its name."""
    names = names or {}
    oracle = ends.oracle_label if given else names.get(ends.oracle,
                                                       ends.oracle)
    return (f'{names.get(ends.baseline, ends.baseline)} → {oracle} '
            'gap closed')


def markdown_table(results: Dict[str, dict],
                   baseline: Optional[str] = None,
                   oracle: Optional[str] = None,
                   columns: Sequence[str] = ('mAP', 'CF1 (paper)', 'OF1'),
                   names: Optional[Dict[str, str]] = None,
                   ends: Optional[GapEnds] = None) -> str:
    """A markdown table of aggregated results (``{name: aggregate(...)}``),
    in the given order: each column as ``mean ± std`` (the std is left out
    when every row has a single run) and, with a ``baseline`` and an
    ``oracle`` among the results (or the ``ends`` of a record's setting,
    :func:`~.oracle.gap_ends`), the share of the mAP gap between them that
    each row closes (:func:`gap_closed`, in percent). ``names`` maps result
    names to the displayed ones."""
    names = names or {}
    show_std = any(len(row.get('runs', ())) > 1 for row in results.values())
    given = ends is not None
    ends = table_ends(results, baseline, oracle, ends)
    header = ['method'] + [f'test {c}' for c in columns]
    if ends is not None:
        header.append(ends_header(ends, names, given))
    lines = [
        '| ' + ' | '.join(header) + ' |',
        '|' + '|'.join([':---'] + ['---:'] * (len(header) - 1)) + '|'
    ]
    for name, row in results.items():
        cells = [names.get(name, name)]
        for key in columns:
            cell = f'{row[key]:.2f}'
            if show_std:
                cell += f' ± {row["std"][key]:.2f}'
            cells.append(cell)
        if ends is not None:
            share = ends.share(row, results)
            cells.append('n/a' if math.isnan(share) else f'{share:+.0%}')
        lines.append('| ' + ' | '.join(cells) + ' |')
    return '\n'.join(lines)


def _ranks(values: Union[Sequence[float], np.ndarray]) -> np.ndarray:
    """1 for the largest value; equal values share their mean rank."""
    values = np.asarray(values, dtype=float)
    order = np.argsort(-values, kind='stable')
    ranks = np.empty(len(values))
    ranks[order] = np.arange(1, len(values) + 1)
    for value in np.unique(values):
        ranks[values == value] = ranks[values == value].mean()
    return ranks


def rank_correlation(a: Dict[str, float], b: Dict[str, float]) -> float:
    """Spearman's rank correlation of two scorings of the methods they
    share (``{name: score}``): the Pearson correlation of their ranks, ties
    sharing their mean rank; 1 when both order the methods alike, -1 when
    one reverses the other, NaN with fewer than 3 shared methods or a
    scoring without spread."""
    names = [name for name in a if name in b]
    if len(names) < 3:
        return math.nan
    ra = _ranks([a[n] for n in names])
    rb = _ranks([b[n] for n in names])
    if ra.std() == 0 or rb.std() == 0:
        return math.nan
    return float(np.corrcoef(ra, rb)[0, 1])


def rank_correlation_p_value(a: Dict[str, float], b: Dict[str,
                                                          float]) -> float:
    """The two-sided p-value of :func:`rank_correlation` under the null
    hypothesis of no association: exact (every ordering of one scoring's
    ranks) for up to 8 shared methods, else Student's t approximation
    with ``n - 2`` degrees of freedom. NaN where the correlation is."""
    names = [name for name in a if name in b]
    rho = rank_correlation(a, b)
    if math.isnan(rho):
        return math.nan
    n = len(names)
    ra = _ranks([a[m] for m in names])
    rb = _ranks([b[m] for m in names])
    if n <= 8:
        import itertools
        observed = abs(rho) - 1e-12
        hits = total = 0
        for order in itertools.permutations(rb):
            total += 1
            hits += abs(np.corrcoef(ra, order)[0, 1]) >= observed
        return hits / total
    from scipy import stats
    if abs(rho) >= 1:
        return 0.0
    t = rho * math.sqrt((n - 2) / (1 - rho**2))
    return float(2 * stats.t.sf(abs(t), n - 2))


def domains_table(domains: Dict[str, Dict[str, dict]],
                  baseline: str = 'an',
                  oracle: str = 'full_labels',
                  ends: Optional[Dict[str, Optional[GapEnds]]] = None) -> str:
    """Markdown: the methods that every domain ran (``{domain: {name:
    aggregate}}``), one row each, ordered by the first domain's test mAP;
    per domain the test mAP (mean ± std), its rank and the share of the
    ``baseline`` -> ``oracle`` gap it closes (:func:`gap_closed`). Then
    Spearman's rank correlation of every pair of domains over those
    methods, the baseline and the oracle left out (their places are fixed
    by construction), and per domain the best method on validation with
    its share of the gap. ``ends`` gives a domain's ends of the gap
    (:func:`~.oracle.gap_ends` of its record: the honest oracle where it
    has one); a domain it leaves out has ``baseline`` and ``oracle`` as
    rows."""
    given = ends or {}
    if not domains:
        raise ValueError('domains_table() needs at least one domain.')
    names = list(domains)
    shared = [
        m for m in domains[names[0]] if all(m in domains[d] for d in names)
    ]
    if not shared:
        raise ValueError('The domains share no method.')
    first = domains[names[0]]
    shared.sort(key=lambda m: -first[m]['mAP'])
    ranks = {
        d: dict(zip(shared, _ranks([domains[d][m]['mAP'] for m in shared])))
        for d in names
    }
    header = ['method']
    for d in names:
        header += [f'{d} test mAP', 'rank', 'gap closed']
    lines = [
        '| ' + ' | '.join(header) + ' |',
        '|' + '|'.join([':---'] + ['---:'] * (len(header) - 1)) + '|'
    ]
    domain_ends = {
        d: table_ends(domains[d], baseline, oracle, given.get(d))
        for d in names
    }
    for m in shared:
        cells = [m]
        for d in names:
            rows = domains[d]
            row = rows[m]
            cells += [
                f'{row["mAP"]:.2f} ± {row["std"]["mAP"]:.2f}',
                f'{ranks[d][m]:g}'
            ]
            end = domain_ends[d]
            share = end.share(row, rows) if end else math.nan
            cells.append('n/a' if math.isnan(share) else f'{share:+.0%}')
        lines.append('| ' + ' | '.join(cells) + ' |')
    methods = [m for m in shared if m not in (baseline, oracle)]
    lines.append('')
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            scores = [{
                m: domains[d][m]['mAP']
                for m in methods
            } for d in (a, b)]
            rho = rank_correlation(*scores)
            p_value = rank_correlation_p_value(*scores)
            lines.append(f'Rank correlation (Spearman) of the {len(methods)} '
                         f'methods other than {baseline} and {oracle}, {a} '
                         f'vs {b}: {rho:.2f} (two-sided p = {p_value:.2g}).')
    for d in names:
        rows, end = domains[d], domain_ends[d]
        found = best_gap_share({m: rows[m]
                                for m in shared}, baseline, oracle, end)
        if found is None or end is None:
            continue
        best, share = found
        label = end.oracle_label if d in given else oracle
        lines.append(f'{d}: best of them on validation **{best}**, '
                     f'{rows[best]["mAP"]:.2f} test mAP, '
                     f'{share:.0%} of the {baseline} → {label} gap.')
    return '\n'.join(lines)


def _format_value(value) -> str:
    return f'{value:g}' if isinstance(value, float) else str(value)


def tuned_table(results: Dict[str, dict],
                baseline: Optional[str] = None,
                oracle: Optional[str] = None,
                ends: Optional[GapEnds] = None) -> str:
    """A markdown table of tuned results (``{name: aggregate + 'tuning'}``,
    in the given order): the chosen point, its validation mAP (first seed),
    the test mAP, CF1 and OF1 over the seeds (mean ± std), the share of the
    tuned baseline -> oracle gap closed (or of the ``ends`` of a record's
    setting, :func:`~.oracle.gap_ends`), and the test mAP of the config's
    own recipe (first seed; blank when the grid did not contain it)."""
    given = ends is not None
    ends = table_ends(results, baseline, oracle, ends)
    header = [
        'method', 'lr', 'epochs', 'key hyperparameter', VAL_MAP, 'test mAP',
        'test CF1 (paper)', 'test OF1'
    ]
    if ends is not None:
        header.append(ends_header(ends, given=given))
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
            str(epochs), hparam or '-', f'{row["runs"][0][VAL_MAP]:.2f}'
        ]
        for key in ('mAP', 'CF1 (paper)', 'OF1'):
            cells.append(f'{row[key]:.2f} ± {row["std"][key]:.2f}' if n >
                         1 else f'{row[key]:.2f}')
        if ends is not None:
            share = ends.share(row, results)
            cells.append('n/a' if math.isnan(share) else f'{share:+.0%}')
        own = tuning.get('own recipe')
        cells.append(f'{own["mAP"]:.2f}' if own else '')
        lines.append('| ' + ' | '.join(cells) + ' |')
    return '\n'.join(lines)


def summarise_tuning(tuned: dict, own_point: dict) -> dict:
    """The aggregate of the chosen point's runs with the search attached
    (``'tuning'``: ``grid``, ``chosen`` and ``own recipe``, the grid's run
    at the config's own point, if the grid had it and it was not
    pruned)."""
    row = aggregate(tuned['runs'])
    own = [
        run for run in tuned['grid']
        if run['point'] == own_point and run.get('state') != 'pruned'
    ]
    row['tuning'] = dict(
        grid=tuned['grid'],
        chosen=tuned['chosen'],
        **{'own recipe': own[0] if own else None})
    return row
