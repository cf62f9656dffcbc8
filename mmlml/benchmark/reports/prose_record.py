"""A sweep record as the prose check's markers read it
(:mod:`.prose_values`): its rows, the ends of a setting's gap
(:func:`~.oracle.gap_ends`, the honest oracle where the record has
``full``, else its old oracle in the setting), the best method of a
setting (:func:`~.paper_claims.best_gap_share`; in ``full``,
:func:`~.oracle.best_on_validation`: the honest oracle) and the shares of
the gap (:meth:`~.oracle.GapEnds.share`, :func:`~.oracle.gap_closed`,
:meth:`~.oracle.GapEnds.head_share`).
"""
import math
from typing import Dict, Optional, Tuple

from mmlml.benchmark.reports.heads import record_heads
from mmlml.benchmark.reports.oracle import (GapEnds, best_on_validation,
                                            gap_closed, gap_ends)
from mmlml.benchmark.reports.paper_claims import best_gap_share
from mmlml.benchmark.reports.prose_markup import MarkerError
from mmlml.benchmark.sweep.settings import FULL_SETTING

__all__ = ['Record']

#: A setting's rows: config -> row (its runs, their means and spreads).
_Rows = Dict[str, dict]


class Record:
    """A sweep record as the markers read it."""

    def __init__(self, alias: str, data: dict):
        self.alias = alias
        self.data = data
        self.results: Dict[str, Dict[str, _Rows]] = data.get('results', {})
        sweep = data.get('sweep', {})
        self.baseline = sweep.get('baseline') or 'an'
        self.old_oracle = sweep.get('oracle') or 'full_labels'

    def mode(self, mode: Optional[str]) -> str:
        if mode is not None:
            return mode
        if len(self.results) != 1:
            raise MarkerError(f'{self.alias} has the modes '
                              f'{sorted(self.results)}: name one')
        return next(iter(self.results))

    def rows(self, mode: str, setting: str) -> _Rows:
        rows = self.results.get(mode, {}).get(setting)
        if not rows:
            raise MarkerError(f'{self.alias} has no setting {setting} in '
                              f'mode {mode}')
        return rows

    def row(self, mode: str, setting: str, config: str) -> dict:
        rows = self.rows(mode, setting)
        if config not in rows:
            raise MarkerError(f'{self.alias} {setting} has no row {config}')
        return rows[config]

    def head_share(self, mode: str, setting: str, config: str) -> float:
        """The share of the gap to the same-head oracle that ``config``
        closes in ``setting`` (:meth:`~.oracle.GapEnds.head_share`, the
        heads read from the record's configs: :func:`~.heads.record_heads`).
        """
        sweep = self.data.get('sweep', {})
        ends = gap_ends(
            self.results.get(mode, {}), setting, self.baseline,
            self.old_oracle,
            record_heads(sweep.get('configs', []), sweep.get('domain')))
        share = math.nan if ends is None else ends.head_share(
            config, self.rows(mode, setting))
        if math.isnan(share):
            raise MarkerError(f'{self.alias} {setting} {config}: no '
                              'same-head oracle')
        return share

    def ends(self, mode: str, setting: str) -> GapEnds:
        """The ends of ``setting``'s gap (:func:`~.oracle.gap_ends`)."""
        ends = gap_ends(
            self.results.get(mode, {}), setting, self.baseline,
            self.old_oracle)
        if ends is None:
            raise MarkerError(f'{self.alias} {setting} has no gap (the '
                              f'setting {FULL_SETTING}, or no '
                              f'{self.baseline} or no oracle)')
        return ends

    def oracle(self, mode: str, setting: Optional[str]) -> Tuple[str, str]:
        """``(setting, config)`` of the high end of ``setting``'s gap:
        the honest oracle where the record has ``full``, else its old
        oracle in ``setting``."""
        if setting is not None and setting != FULL_SETTING:
            ends = self.ends(mode, setting)
            return FULL_SETTING if ends.honest else setting, ends.oracle
        if not self.results.get(mode, {}).get(FULL_SETTING):
            raise MarkerError(f'{self.alias} has no honest oracle: name '
                              'the setting of the old one')
        return FULL_SETTING, self.best(mode, FULL_SETTING)

    def best(self, mode: str, setting: str) -> str:
        """The best method of ``setting`` on validation (neither end of
        the gap; in ``full``, the honest oracle)."""
        rows = self.rows(mode, setting)
        if setting == FULL_SETTING:
            best = best_on_validation(rows)
        else:
            found = best_gap_share(rows, self.baseline, self.old_oracle,
                                   self.ends(mode, setting))
            best = found[0] if found is not None else None
        if best is None:
            raise MarkerError(f'{self.alias} {setting}: no row has a '
                              'validation mAP')
        return best

    def share(self, mode: str, setting: str, row: dict,
              oracle: Optional[str]) -> float:
        """The share of ``setting``'s gap that ``row``'s test mean closes
        (``oracle``: that row of the setting in place of the oracle)."""
        if oracle is None:
            share = self.ends(mode, setting).share(row,
                                                   self.rows(mode, setting))
        else:
            share = gap_closed(row['mAP'],
                               self.row(mode, setting, self.baseline)['mAP'],
                               self.row(mode, setting, oracle)['mAP'])
        if math.isnan(share):
            raise MarkerError('the oracle does not beat the baseline')
        return share
