"""The two ends of the gap that a benchmark's methods close, and every
choice among its rows made on validation.

The low end is the assume-negative baseline of the setting. The high end
is the **honest oracle** where the record has the setting ``full``
(:data:`~.settings.FULL_SETTING`: every method trained on all labels,
tuned by the same rules): the method of that setting with the best
validation mAP. A record without it keeps the **old oracle**, the row
``full_labels`` (plain BCE on all labels) of the setting itself, which
bounds nothing (a method with all labels beats it) and is marked so.

**Per head.** Where the methods differ in their head (a pooled linear
one or BoostLU's class-activation map, :mod:`.heads`), part of the gap
to the honest oracle is the head's, not the loss's. So each method is
also measured against the **same-head oracle**: the best on validation
of the setting ``full`` among the methods with its head
(:func:`head_oracles`, :func:`per_head_ends`). Where the record has no
setting ``full``, or no run of it with that head, there is none.

Every share is :func:`gap_closed` of the test means,
``(mAP_method - mAP_baseline) / (mAP_oracle - mAP_baseline)``, against
the honest (or old) oracle by :meth:`GapEnds.share` and against the
same-head oracle by :meth:`GapEnds.head_share`.

Every choice (the oracle, the same-head oracles, the best method of a
setting) is made by the mean validation mAP of a row's runs
(:func:`validation_map`); the test mAP is only reported.
"""
import math
from typing import Dict, Mapping, NamedTuple, Optional, Sequence

from mmlml.benchmark.sweep.settings import FULL_SETTING
from mmlml.benchmark.training.trial_record import VAL_MAP

#: A setting's rows: name -> row (its runs, their mean and spread).
Rows = Dict[str, dict]

__all__ = [
    'gap_closed', 'validation_map', 'best_on_validation', 'head_oracles',
    'GapEnds', 'gap_ends', 'per_head_ends'
]


def gap_closed(value: float, baseline: float, oracle: float) -> float:
    r"""The share of the baseline-to-oracle gap that ``value`` closes,
    :math:`(v - b) / (o - b)`: 0 for the baseline, 1 for the oracle,
    negative below the baseline; NaN when the oracle does not beat the
    baseline (no gap to close)."""
    gap = oracle - baseline
    return (value - baseline) / gap if gap > 0 else math.nan


def validation_map(row: dict) -> float:
    """The mean validation mAP of a row's runs (NaN where none has one:
    a fixed recipe's rows record none)."""
    values = [
        run[VAL_MAP] for run in row.get('runs', ())
        if isinstance(run.get(VAL_MAP), (int, float))
    ]
    return sum(values) / len(values) if values else math.nan


def best_on_validation(rows: Rows, exclude: Sequence = ()) -> Optional[str]:
    """The name of the row (none of ``exclude``) with the best
    :func:`validation_map`, the first of equals; None where no row has a
    validation mAP."""
    best, best_value = None, -math.inf
    for name, row in rows.items():
        value = validation_map(row)
        if name not in exclude and not math.isnan(value) and \
                value > best_value:
            best, best_value = name, value
    return best


def head_oracles(full: Rows, heads: Mapping[str, str]) -> Dict[str, str]:
    """``{head kind: name}``: per kind of ``heads`` (``{name: kind}``, in
    their order of first appearance), the row of ``full`` (the setting
    ``full``) with that head and the best :func:`validation_map`; a kind
    without such a row is left out. A row that ``heads`` does not name
    is no one's."""
    found = {}
    for kind in dict.fromkeys(heads.values()):
        best = best_on_validation({
            n: r
            for n, r in full.items() if heads.get(n) == kind
        })
        if best is not None:
            found[kind] = best
    return found


class GapEnds(NamedTuple):
    """The ends of the gap in one (mode, setting).

    Attributes:
        baseline: The baseline's name (a row of the setting).
        oracle: The oracle's name: a row of the setting ``full`` (honest)
            or of the setting itself (old).
        oracle_row: The oracle's row.
        honest: Whether the oracle is the honest one.
        excluded: The rows that are no method of the setting (the
            baseline and the old oracle's name).
        heads: ``{name: head kind}`` of the record's methods
            (:func:`~.heads.record_heads`); None where the heads were not
            given (no same-head share is reported then).
        per_head: ``{head kind: GapEnds}``: the ends at each same-head
            oracle (:func:`per_head_ends`); empty where there is none.
    """
    baseline: str
    oracle: str
    oracle_row: dict
    honest: bool
    excluded: tuple
    heads: Optional[Dict[str, str]] = None
    per_head: Optional[Dict[str, 'GapEnds']] = None

    @property
    def oracle_label(self) -> str:
        """The oracle as the reports name it."""
        return f'{"honest" if self.honest else "old"} oracle {self.oracle}'

    def share(self, row: dict, rows: Dict[str, dict]) -> float:
        """The share of the gap that ``row`` of ``rows`` closes,
        ``(row mAP - baseline mAP) / (oracle mAP - baseline mAP)`` of the
        test means (:func:`gap_closed`)."""
        return gap_closed(row['mAP'], rows[self.baseline]['mAP'],
                          self.oracle_row['mAP'])

    def head_ends(self, name: str) -> Optional['GapEnds']:
        """The ends of the gap of the method ``name`` at the same-head
        oracle (the best on validation of the setting ``full`` among the
        methods with its head); None where its head is unknown or no run
        on all labels has it."""
        kind = (self.heads or {}).get(name)
        return (self.per_head or {}).get(kind) if kind else None

    def head_share(self, name: str, rows: Dict[str, dict]) -> float:
        """The share of the gap to the same-head oracle that the row
        ``name`` of ``rows`` closes, ``(mAP - baseline mAP) / (same-head
        oracle mAP - baseline mAP)`` of the test means; NaN where there
        is no same-head oracle (:meth:`head_ends`)."""
        ends = self.head_ends(name)
        return math.nan if ends is None else ends.share(rows[name], rows)


def gap_ends(mode_results: Dict[str, Dict[str, dict]],
             setting: str,
             baseline: str,
             oracle: str,
             heads: Optional[Mapping[str, str]] = None) -> Optional[GapEnds]:
    """The ends of the gap of ``setting`` among ``mode_results``
    (``{setting: {name: row}}`` of one mode; see the module docstring):
    None where the setting has no ``baseline`` row, where it is ``full``
    itself, or where neither oracle is there. ``oracle`` names the old
    oracle's row. With ``heads`` (``{name: head kind}``) the ends carry
    the same-head oracles too (:func:`per_head_ends`)."""
    rows = mode_results.get(setting) or {}
    if setting == FULL_SETTING or baseline not in rows:
        return None
    excluded = (baseline, oracle)
    full = mode_results.get(FULL_SETTING) or {}
    honest = best_on_validation(full)
    if heads is None:
        per_head = None
    else:
        heads = dict(heads)
        per_head = per_head_ends(mode_results, setting, baseline, oracle,
                                 heads)
    if honest is not None:
        return GapEnds(baseline, honest, full[honest], True, excluded, heads,
                       per_head)
    if oracle in rows:
        return GapEnds(baseline, oracle, rows[oracle], False, excluded, heads,
                       per_head)
    return None


def per_head_ends(mode_results: Dict[str, Dict[str, dict]], setting: str,
                  baseline: str, oracle: str,
                  heads: Mapping[str, str]) -> Dict[str, GapEnds]:
    """``{head kind: GapEnds}``: per kind of ``heads`` (``{name: head
    kind}``), the ends of the gap of ``setting`` from ``baseline`` to the
    **same-head oracle**, the best on validation of the setting ``full``
    among the methods with that head (:func:`head_oracles`). A method's
    same-head share is then ``(mAP - baseline mAP) / (same-head oracle
    mAP - baseline mAP)`` of the test means. Empty where the setting has
    no ``baseline`` row, is ``full`` itself, or the record has no setting
    ``full``; a kind without a run on all labels is left out. ``oracle``
    names the old oracle's row (no method of the setting)."""
    rows = mode_results.get(setting) or {}
    full = mode_results.get(FULL_SETTING) or {}
    if setting == FULL_SETTING or baseline not in rows:
        return {}
    return {
        kind: GapEnds(baseline, name, full[name], True, (baseline, oracle))
        for kind, name in head_oracles(full, heads).items()
    }
