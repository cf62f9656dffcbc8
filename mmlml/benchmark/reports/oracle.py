"""The two ends of the gap that a benchmark's methods close, and every
choice among its rows made on validation.

The low end is the assume-negative baseline of the setting. The high end
is the **honest oracle** where the record has the setting ``full``
(:data:`~.settings.FULL_SETTING`: every method trained on all labels,
tuned by the same rules): the method of that setting with the best
validation mAP. A record without it keeps the **old oracle**, the row
``full_labels`` (plain BCE on all labels) of the setting itself, which
bounds nothing (a method with all labels beats it) and is marked so.

Every choice (the oracle, the best method of a setting) is made by the
mean validation mAP of a row's runs (:func:`validation_map`); the test
mAP is only reported.
"""
import math
from typing import Dict, NamedTuple, Optional, Sequence

from mmlml.benchmark.sweep.settings import FULL_SETTING
from mmlml.benchmark.training.trial_record import VAL_MAP

#: A setting's rows: name -> row (its runs, their mean and spread).
Rows = Dict[str, dict]

__all__ = [
    'gap_closed', 'validation_map', 'best_on_validation', 'GapEnds', 'gap_ends'
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
    """
    baseline: str
    oracle: str
    oracle_row: dict
    honest: bool
    excluded: tuple

    @property
    def oracle_label(self) -> str:
        """The oracle as the reports name it."""
        return f'{"honest" if self.honest else "old"} oracle {self.oracle}'

    def share(self, row: dict, rows: Dict[str, dict]) -> float:
        """The share of the gap that ``row`` of ``rows`` closes."""
        return gap_closed(row['mAP'], rows[self.baseline]['mAP'],
                          self.oracle_row['mAP'])


def gap_ends(mode_results: Dict[str, Dict[str, dict]], setting: str,
             baseline: str, oracle: str) -> Optional[GapEnds]:
    """The ends of the gap of ``setting`` among ``mode_results``
    (``{setting: {name: row}}`` of one mode; see the module docstring):
    None where the setting has no ``baseline`` row, where it is ``full``
    itself, or where neither oracle is there. ``oracle`` names the old
    oracle's row."""
    rows = mode_results.get(setting) or {}
    if setting == FULL_SETTING or baseline not in rows:
        return None
    excluded = (baseline, oracle)
    full = mode_results.get(FULL_SETTING) or {}
    honest = best_on_validation(full)
    if honest is not None:
        return GapEnds(baseline, honest, full[honest], True, excluded)
    if oracle in rows:
        return GapEnds(baseline, oracle, rows[oracle], False, excluded)
    return None
