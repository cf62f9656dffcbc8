"""Summaries of benchmark runs: the usual multi-label numbers of a test,
their mean and spread over seeds, the share of the gap between the
assume-negative baseline and the full-label oracle that a method closes
(and, where a record gives its methods' heads, of the gap to the
same-head oracle: :mod:`.oracle`), the markdown table of a comparison,
and how two benchmarks (two domains) rank the same methods.

Used by ``tools/demo.py`` (one config or a few) and ``tools/benchmark.py``
(methods x settings x seeds).
"""
import math
from typing import Any, Dict, List, Optional, Sequence, Union

import numpy as np

from mmlml.benchmark.reports.oracle import GapEnds, gap_closed, validation_map
from mmlml.benchmark.reports.paper_claims import best_gap_share
from mmlml.benchmark.training.config_keys import EPOCHS_KEY, LR_KEY
from mmlml.benchmark.training.trial_record import COLUMNS, VAL_MAP

__all__ = [
    'COLUMNS', 'ALIASES', 'by_validation', 'alias_names', 'aggregate',
    'tuned_table', 'summarise_tuning', 'gap_closed', 'table_ends',
    'ends_header', 'head_header', 'heads_note', 'markdown_table',
    'rank_correlation', 'rank_correlation_p_value', 'domains_table'
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


def head_header(ends: GapEnds, names: Optional[Dict[str, str]] = None) -> str:
    """The header of a table's same-head gap column."""
    names = names or {}
    return (f'{names.get(ends.baseline, ends.baseline)} → same-head oracle '
            'gap closed')


def _percent(share: float) -> str:
    return 'n/a' if math.isnan(share) else f'{share:+.0%}'


def _test_map(row: dict) -> str:
    if len(row.get('runs', ())) > 1:
        return f'{row["mAP"]:.2f} ± {row["std"]["mAP"]:.2f}'
    return f'{row["mAP"]:.2f}'


def _gap_cells(ends: Optional[GapEnds], name: str,
               results: Dict[str, dict]) -> List[str]:
    """The gap columns of the row ``name``: its share of the gap, and of
    the gap to its same-head oracle where ``ends`` carry the heads."""
    if ends is None:
        return []
    cells = [_percent(ends.share(results[name], results))]
    if ends.heads is not None:
        cells.append(_percent(ends.head_share(name, results)))
    return cells


def heads_note(ends: GapEnds,
               results: Dict[str, dict],
               names: Optional[Dict[str, str]] = None) -> str:
    """The note under a table with a same-head column: each kind of head
    among the rows, its methods and its same-head oracle (the best on
    validation of the runs on all labels with that head) with its test
    mAP; n/a, and why, where there is none (no setting ``full``, no run
    on all labels with that head, or a method whose head is unknown)."""
    names = names or {}
    heads = ends.heads or {}
    per_head = ends.per_head or {}
    baseline = names.get(ends.baseline, ends.baseline)
    if not per_head and not ends.honest:
        return ('Same-head gap closed: n/a, this record has no setting '
                '`full` (no method trained on all labels), so no same-head '
                'oracle.')
    members: Dict[str, List[str]] = {}
    unknown = []
    for name in results:
        if name in heads:
            members.setdefault(heads[name], []).append(names.get(name, name))
        else:
            unknown.append(names.get(name, name))
    most = max(members, key=lambda kind: len(members[kind]), default=None)
    parts = [
        'Same-head oracle: the best on validation of the runs on all '
        'labels (`full`) with the method\'s head; same-head gap closed = '
        f'(mAP − mAP of {baseline}) / (mAP of the same-head oracle − mAP of '
        f'{baseline}), test means.'
    ]
    for kind in dict.fromkeys(heads.values()):
        if kind not in members:
            continue
        if kind == most:
            others = [n for k, v in members.items() if k != kind
                      for n in v] + unknown
            who = 'all but ' + ', '.join(others) if others else 'every method'
        else:
            who = ', '.join(members[kind])
        same = per_head.get(kind)
        if same is None:
            parts.append(f'{kind.capitalize()} head ({who}): n/a, no run on '
                         'all labels with this head.')
            continue
        honest = ' (also the honest oracle)' if ends.honest and \
            same.oracle == ends.oracle else ''
        parts.append(f'{kind.capitalize()} head ({who}): '
                     f'**{names.get(same.oracle, same.oracle)}**, '
                     f'{_test_map(same.oracle_row)} test mAP{honest}.')
    if unknown:
        parts.append(f'No config to read the head of {", ".join(unknown)} '
                     'from: n/a.')
    return ' '.join(parts)


#: Demo configs that are another one's method under a second name (the
#: same maths, another implementation or parameterisation): the name ->
#: the name a table keeps. ``an_mmlml`` is mmlml's ANLoss where ``an``
#: trains MMPretrain's stock BCE; ``zlpr`` is OPML with a = b = 1.
ALIASES = {'an_mmlml': 'an', 'zlpr': 'opml'}


def by_validation(rows: Dict[str, dict]) -> Dict[str, dict]:
    """``rows`` in the order every choice reads: by mean validation mAP
    over the seeds (:func:`~.oracle.validation_map`), best first, the rows
    without one (a fixed recipe's) after them by test mAP; an alias
    (:data:`ALIASES`) is left out where the method it repeats has a row
    (:func:`alias_names` names it there)."""

    def key(item):
        value = validation_map(item[1])
        return (math.isnan(value), -value if not math.isnan(value) else 0.,
                -item[1]['mAP'])

    kept = {
        name: row
        for name, row in rows.items() if ALIASES.get(name) not in rows
    }
    return dict(sorted(kept.items(), key=key))


def alias_names(rows: Dict[str, dict]) -> Dict[str, str]:
    """The displayed name of each row of ``rows`` that stands for an
    alias too (:func:`by_validation`): ``opml (= zlpr)``."""
    names: Dict[str, str] = {}
    for alias, name in ALIASES.items():
        if alias in rows and name in rows:
            names[name] = f'{names.get(name, name)} (= {alias})'
    return names


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
    each row closes (:func:`gap_closed`, in percent). Where ``ends`` carry
    the methods' heads, also each row's share of the gap to its same-head
    oracle (:meth:`~.oracle.GapEnds.head_share`), with a note naming the
    same-head oracles (:func:`heads_note`). ``names`` maps result names to
    the displayed ones."""
    names = names or {}
    show_std = any(len(row.get('runs', ())) > 1 for row in results.values())
    given = ends is not None
    ends = table_ends(results, baseline, oracle, ends)
    header = ['method'] + [f'test {c}' for c in columns]
    if ends is not None:
        header.append(ends_header(ends, names, given))
        if ends.heads is not None:
            header.append(head_header(ends, names))
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
        cells += _gap_cells(ends, name, results)
        lines.append('| ' + ' | '.join(cells) + ' |')
    if ends is not None and ends.heads is not None:
        lines += ['', heads_note(ends, results, names)]
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
                ends: Optional[GapEnds] = None,
                names: Optional[Dict[str, str]] = None) -> str:
    """A markdown table of tuned results (``{name: aggregate + 'tuning'}``,
    in the given order): the chosen point, its validation mAP (first seed),
    the test mAP, CF1 and OF1 over the seeds (mean ± std), the share of the
    tuned baseline -> oracle gap closed (or of the ``ends`` of a record's
    setting, :func:`~.oracle.gap_ends`), where those carry the methods'
    heads the share of the gap to the same-head oracle
    (:meth:`~.oracle.GapEnds.head_share`, the oracles named in a note
    under the table: :func:`heads_note`), and the test mAP of the
    config's own recipe (first seed; blank when the grid did not contain
    it). ``mean val mAP`` is the mean over the seeds, which orders the
    methods (:func:`by_validation`); ``names`` maps result names to the
    displayed ones."""
    names = names or {}
    given = ends is not None
    ends = table_ends(results, baseline, oracle, ends)
    header = [
        'method', 'lr', 'epochs', 'key hyperparameter', VAL_MAP,
        f'mean {VAL_MAP}', 'test mAP', 'test CF1 (paper)', 'test OF1'
    ]
    if ends is not None:
        header.append(ends_header(ends, given=given))
        if ends.heads is not None:
            header.append(head_header(ends))
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
            names.get(name, name),
            _format_value(lr),
            str(epochs), hparam or '-', f'{row["runs"][0][VAL_MAP]:.2f}',
            f'{validation_map(row):.2f}'
        ]
        for key in ('mAP', 'CF1 (paper)', 'OF1'):
            cells.append(f'{row[key]:.2f} ± {row["std"][key]:.2f}' if n >
                         1 else f'{row[key]:.2f}')
        cells += _gap_cells(ends, name, results)
        own = tuning.get('own recipe')
        cells.append(f'{own["mAP"]:.2f}' if own else '')
        lines.append('| ' + ' | '.join(cells) + ' |')
    if ends is not None and ends.heads is not None:
        lines += ['', heads_note(ends, results, names)]
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
