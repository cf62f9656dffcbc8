"""What ``tools/benchmark.py --check-docs`` checks beyond the files a
record writes: that each row of a record is what its runs and trials
make, and that the pages quote the records' numbers.

- **Rows** (:func:`check_rows`): each row's means and spreads are those
  of its runs; each of its runs (and each run of its search) is one of
  the record's trials, with the same seed, validation mAP and test
  metrics; the chosen point is the search's run with the best validation
  mAP, and every seed ran at it. A row edited without its runs, or a run
  without its trial, is reported.
- **Quotes** (:func:`check_quotes`): in :data:`QUOTING_PAGES`, each
  section (from one heading to the next) that links a file of the
  results folder quotes only numbers (two decimals, outside code blocks)
  of the records it links (a report stands for its record, a comparison
  for itself and its records). A number that comes from elsewhere (a
  probe, a statistic of the data) is named in the section by a comment
  ``<!-- not from a record: 98.81 -->``.
"""
import math
import os.path as osp
import re
from typing import Dict, List, Sequence, Set, Tuple

from mmlml.benchmark.reports.results import COLUMNS, aggregate
from mmlml.benchmark.sweep.search import choose, point_key
from mmlml.benchmark.training.trial_record import VAL_MAP

__all__ = ['QUOTING_PAGES', 'check_rows', 'check_quotes', 'quoted_numbers']

#: The pages whose quoted numbers must be the records'.
QUOTING_PAGES = ('README.md', osp.join('docs', 'benchmark.md'),
                 osp.join('docs', 'which_method.md'))

#: What a row's run shares with its trial.
_RUN_KEYS = ('seed', VAL_MAP) + COLUMNS

_NUMBER = re.compile(r'(?<![\d.])\d+\.\d\d(?!\d)')
_EXEMPT = re.compile(r'<!--\s*not from a record:([^>]*)-->')
_FENCE = re.compile(r'^\s*(```|~~~).*?^\s*\1[^\n]*$', re.S | re.M)
_LINK = re.compile(r'\]\(([^)#\s]+)')


def _value(run: dict, key: str):
    """A run's ``key``; a validation mAP that a run lacks counts as 0, as
    its trial's value was recorded (a fixed recipe records none)."""
    value = run.get(key)
    return 0.0 if key == 'val mAP' and value is None else value


def _same(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(
            b, (int, float)) and math.isclose(
                a, b, abs_tol=1e-9)
    return a == b


def check_rows(record: str, data: dict) -> List[str]:
    """The rows of the record ``data`` (at ``record``) that its runs and
    trials do not make (see the module docstring); empty: none."""
    problems = []
    trials: Dict[str, List[dict]] = {}
    for trial in data.get('trials', []):
        trials.setdefault(trial.get('run'), []).append(trial)
    for mode, by_setting in data.get('results', {}).items():
        for setting, by_name in by_setting.items():
            for name, row in by_name.items():
                where = f'{record}: {mode} {setting} {name}'
                problems += _check_row(where, row, trials)
    return problems


def _check_row(where: str, row: dict, trials: Dict[str,
                                                   List[dict]]) -> List[str]:
    runs = row.get('runs') or []
    if not runs:
        return [f'{where}: a row without runs']
    problems = []
    made = aggregate(runs)
    for key in COLUMNS:
        for given, fresh, what in ((row.get(key), made[key], 'mean'),
                                   (row.get('std', {}).get(key),
                                    made['std'][key], 'std')):
            if not _same(given, fresh):
                problems.append(
                    f'{where}: its {key} {what} {given} is not its runs\' '
                    f'({fresh}): edited without its runs')
    tuning = row.get('tuning') or {}
    for run in runs + list(tuning.get('grid') or []):
        found = trials.get(run.get('run'), [])
        if not any(
                all(_same(_value(run, k), _value(t, k)) for k in _RUN_KEYS)
                for t in found):
            problem = (f'{where}: run {run.get("run")} is no trial of the '
                       'record (a run without its trial)')
            if problem not in problems:  # a seed's run is in its search
                problems.append(problem)
    if tuning:
        grid = [
            r for r in tuning.get('grid') or []
            if r.get('state') != 'pruned' and isinstance(r.get('point'), dict)
        ]
        chosen = tuning.get('chosen') or {}
        if not grid or point_key(choose(grid)['point']) != point_key(chosen):
            problems.append(f'{where}: its chosen point is not the search\'s '
                            'run with the best validation mAP')
        elif any(
                point_key(run.get('point') or {}) != point_key(chosen)
                for run in runs):
            problems.append(f'{where}: a run of its seeds is not at its '
                            'chosen point')
    return problems


def quoted_numbers(text: str) -> Set[str]:
    """The two-decimal numbers of ``text`` outside code blocks, less those
    a ``<!-- not from a record: ... -->`` comment names."""
    text = _FENCE.sub('', text)
    exempt = {n for found in _EXEMPT.findall(text) for n in found.split()}
    return set(_NUMBER.findall(_EXEMPT.sub('', text))) - exempt


def _sections(text: str) -> List[Tuple[int, str]]:
    """``(line, text)`` of each section of a markdown page (its code
    blocks kept: a heading inside one is no heading)."""
    sections: List[Tuple[int, str]] = []
    lines: List[str] = []
    start, fenced = 1, False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith(('```', '~~~')):
            fenced = not fenced
        if not fenced and re.match(r'#{1,6} ', line) and lines:
            sections.append((start, '\n'.join(lines)))
            start, lines = number, []
        lines.append(line)
    sections.append((start, '\n'.join(lines)))
    return sections


def check_quotes(root: str,
                 groups: Sequence[Tuple[Set[str], str]],
                 pages: Sequence[str] = QUOTING_PAGES) -> List[str]:
    """The numbers that ``pages`` (under ``root``) quote and the records
    they link do not hold (see the module docstring).

    Args:
        root: The checkout.
        groups: Per record or comparison, the files that stand for it
            (relative to ``root``) and the text of what it makes.
        pages: The pages to read.
    """
    problems = []
    for page in pages:
        path = osp.join(root, page)
        if not osp.isfile(path):
            continue
        with open(path, encoding='utf-8') as f:
            text = f.read()
        for line, section in _sections(text):
            links = {
                osp.normpath(osp.join(osp.dirname(page), link))
                for link in _LINK.findall(_FENCE.sub('', section))
            }
            texts = [made for files, made in groups if files & links]
            if not texts:
                continue
            allowed = '\n'.join(texts)
            missing = sorted((
                n for n in quoted_numbers(section)
                if not re.search(rf'(?<![\d.]){re.escape(n)}(?!\d)', allowed)),
                             key=float)
            if missing:
                problems.append(
                    f'{page}:{line}: the section quotes {", ".join(missing)}'
                    ', which the records it links do not hold (quote the '
                    'record again, or name a number from elsewhere in '
                    '<!-- not from a record: ... -->)')
    return problems
