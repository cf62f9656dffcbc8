"""The papers' claims checked against benchmark results.

Each claim says that one method beats another (or the baseline) in some
settings. On a benchmark's results (mean and sample std of test mAP over
seeds) a claim **holds** when the difference of means is positive and at
least twice its standard error, ``sqrt(s_a^2 / n_a + s_b^2 / n_b)``, **does
not hold** when it is negative by as much, and is **within noise**
otherwise (with three seeds this is a rough test, not a significance
level). With one seed on either side there is no spread to test against:
the verdict is marked ``(one seed)`` (``holds (one seed)``) and the spread
printed as ``± n/a``. ``tools/benchmark.py --claims FILE`` writes the
verdicts as markdown, so that no hand-typed number can drift from the runs.
"""
import math
from typing import Dict, List, Optional, Sequence

from mmlml.benchmark.reports.oracle import (GapEnds, best_on_validation,
                                            gap_ends, head_oracles,
                                            validation_map)
from mmlml.benchmark.sweep.settings import FULL_SETTING

__all__ = ['CLAIMS', 'verdict', 'claims_markdown', 'best_gap_share']

_SPML = ('single_positive', )
_MISSING = ('single_positive', 'r0.5', 'r0.8')

#: ``(source, better, worse, settings)``: the paper (or papers) claiming
#: that config ``better`` beats config ``worse`` in those settings.
CLAIMS = (
    ('Zhang et al. (Hill, SPLC)', 'hill', 'an', _MISSING),
    ('Zhang et al. (Hill, SPLC)', 'splc', 'an', _MISSING),
    ('Zhang et al. (Hill, SPLC)', 'hill', 'splc', _MISSING),
    ('Zhang et al. (Hill, SPLC)', 'focal_margin', 'focal', _MISSING),
    ('Cole et al. (EPR, ROLE)', 'an_ls', 'an', _SPML),
    ('Cole et al. (EPR, ROLE)', 'role', 'epr', _SPML),
    ('Cole et al. (EPR, ROLE)', 'role', 'an', _SPML),
    ('Kim et al. (Large Loss)', 'll_r', 'an', _SPML),
    ('Kim et al. (Large Loss)', 'll_ct', 'an', _SPML),
    ('Kim et al. (Large Loss)', 'll_cp', 'an', _SPML),
    ('Zhou et al. (EM, APL)', 'em', 'an', _SPML),
    ('Zhou et al. (EM, APL)', 'em_apl', 'em', _SPML),
    ('Zhou et al. (EM, APL)', 'em_apl', 'role', _SPML),
    ('Chen et al. (GR loss)', 'gr', 'an', _SPML),
    ('Chen et al. (GR loss)', 'gr', 'role', _SPML),
    ('Chen et al. (GR loss)', 'gr', 'll_r', _SPML),
    ('LASD paper', 'lasd', 'an', _SPML),
    ('LASD paper', 'lasd', 'em_apl', _SPML),
    ('LASD paper', 'lasd_cr', 'lasd', _SPML),
    ('OPML paper (reconstructed)', 'opml_sp', 'an', _SPML),
    ('EM paper (motivation)', 'an', 'entmin', _SPML),
    ('Liu et al. (CRISP)', 'crisp', 'an', _SPML),
    ('Liu et al. (CRISP)', 'crisp', 'em_apl', _SPML),
    ('Kim et al. (BoostLU)', 'boostlu_ll_r', 'll_r', _SPML),
    ('VLPL paper', 'vlpl', 'an', _SPML),
    ('AEVLP paper (GPR loss)', 'gpr', 'gr', _SPML),
    ('AEVLP paper (GPR loss)', 'gpr', 'vlpl', _SPML),
)


def verdict(better: dict, worse: dict) -> str:
    """``'holds'``, ``'does not hold'`` or ``'within noise'`` for the claim
    that ``better`` beats ``worse`` (two aggregates with ``'mAP'``,
    ``'std'`` and ``'runs'``); ``'holds (one seed)'``, ``'does not hold
    (one seed)'`` or ``'tie (one seed)'`` when either has a single run."""
    diff = better['mAP'] - worse['mAP']
    if min(len(better['runs']), len(worse['runs'])) < 2:
        if diff == 0:
            return 'tie (one seed)'
        return ('holds' if diff > 0 else 'does not hold') + ' (one seed)'
    se = math.sqrt(better['std']['mAP']**2 / len(better['runs']) +
                   worse['std']['mAP']**2 / len(worse['runs']))
    if abs(diff) <= 2 * se:
        return 'within noise'
    return 'holds' if diff > 0 else 'does not hold'


def _cell(row: dict) -> str:
    if len(row['runs']) < 2:
        return f'{row["mAP"]:.2f} ± n/a'
    return f'{row["mAP"]:.2f} ± {row["std"]["mAP"]:.2f}'


def best_gap_share(rows: Dict[str, dict],
                   baseline: str,
                   oracle: str,
                   ends: Optional[GapEnds] = None) -> Optional[tuple]:
    """``(name, share)``: the method (neither endpoint) with the best
    validation mAP (:func:`~.oracle.validation_map`; no test number
    chooses) and the share of the baseline -> oracle gap that its test
    mAP closes; None without both endpoints or another method. ``ends``:
    the record's ends of the gap (:func:`~.oracle.gap_ends`), else
    ``baseline`` and ``oracle`` are rows of ``rows``."""
    if ends is None:
        if baseline not in rows or oracle not in rows:
            return None
        ends = GapEnds(baseline, oracle, rows[oracle], False,
                       (baseline, oracle))
    name = best_on_validation(rows, ends.excluded)
    if name is None:
        return None
    return name, ends.share(rows[name], rows)


def _same_head_oracles(rows: Dict[str, dict],
                       heads: Optional[Dict[str, str]]) -> str:
    """The same-head oracles of the setting ``full`` (``rows``), as the
    line of the honest oracle names them ('' without ``heads``)."""
    if heads is None:
        return ''
    found = head_oracles(rows, heads)
    if not found:
        return ' Same-head oracles: none (no run here has a known head).'
    return ' Same-head oracles (the best on validation per head): ' + \
        '; '.join(f'{kind} head **{name}**, {_cell(rows[name])} test mAP'
                  for kind, name in found.items()) + '.'


def _same_head_share(name: str, rows: Dict[str, dict], ends: GapEnds,
                     baseline: str) -> str:
    """The share of the gap to ``name``'s same-head oracle, as the line
    of the best method states it ('' where ``ends`` carry no heads)."""
    if ends.heads is None:
        return ''
    same = ends.head_ends(name)
    if same is not None:
        return (f' It closes {ends.head_share(name, rows):.0%} of the '
                f'{baseline} → same-head oracle {same.oracle} '
                f'({_cell(same.oracle_row)}, {ends.heads[name]} head) gap.')
    if not ends.per_head and not ends.honest:
        why = 'the record has no setting full'
    elif name not in ends.heads:
        why = 'no config to read its head from'
    else:
        why = f'no run on all labels has its {ends.heads[name]} head'
    return f' Same-head gap closed: n/a ({why}).'


def _best_line(setting: str,
               rows: Dict[str, dict],
               results: Dict[str, Dict[str, dict]],
               baseline: str,
               oracle: str,
               heads: Optional[Dict[str, str]] = None) -> Optional[str]:
    """The line of ``setting`` that names its best method on validation
    (in the setting ``full``: the honest oracle, and with ``heads`` the
    same-head oracles), or None. With ``heads`` (``{name: head kind}``)
    it states the best method's share of the gap to its same-head oracle
    too (:meth:`~.oracle.GapEnds.head_share`)."""
    if setting == FULL_SETTING:
        name = best_on_validation(rows)
        if name is None:
            return None
        return (f'Honest oracle (the best on validation of the {len(rows)} '
                f'methods trained on all labels, mean val mAP '
                f'{validation_map(rows[name]):.2f}): **{name}**, '
                f'{_cell(rows[name])} test mAP; the other settings\' gap '
                'closed ends here.' + _same_head_oracles(rows, heads) + '\n')
    ends = gap_ends(results, setting, baseline, oracle, heads)
    best = best_gap_share(rows, baseline, oracle, ends)
    if ends is None or best is None:
        return None
    name, share = best
    count = sum(k not in ends.excluded for k in rows)
    return (f'Best method on validation (of the {count} run in this '
            f'setting besides the two ends; mean val mAP '
            f'{validation_map(rows[name]):.2f}): **{name}**, '
            f'{_cell(rows[name])} test mAP, closes {share:.0%} of the '
            f'{baseline} ({_cell(rows[baseline])}) → {ends.oracle_label} '
            f'({_cell(ends.oracle_row)}) gap.' +
            _same_head_share(name, rows, ends, baseline) + '\n')


def claims_markdown(results: Dict[str, Dict[str, dict]],
                    titles: Dict[str, str],
                    baseline: str = 'an',
                    oracle: str = 'full_labels',
                    claims: Sequence[tuple] = CLAIMS,
                    heads: Optional[Dict[str, str]] = None) -> str:
    """Markdown: per setting of ``results`` (``{setting: {name:
    aggregate}}`` of one mode), the best method on validation of those
    run there and its share of the gap (:func:`~.oracle.gap_ends`: to the
    honest oracle where ``results`` has the setting ``full``; with
    ``heads``, ``{name: head kind}``, also to its same-head oracle), then
    one line per claim whose two configs were run in that setting."""
    lines: List[str] = []
    for setting, rows in results.items():
        lines.append(f'### {titles.get(setting, setting)}\n')
        best = _best_line(setting, rows, results, baseline, oracle, heads)
        if best is not None:
            lines.append(best)
        lines.append('| claim (source) | better | worse | verdict |')
        lines.append('|:---|---:|---:|:---|')
        for source, good, bad, settings in claims:
            if setting not in settings or good not in rows or \
                    bad not in rows:
                continue
            lines.append(f'| {good} beats {bad} ({source}) | '
                         f'{_cell(rows[good])} | {_cell(rows[bad])} | '
                         f'{verdict(rows[good], rows[bad])} |')
        lines.append('')
    return '\n'.join(lines)
