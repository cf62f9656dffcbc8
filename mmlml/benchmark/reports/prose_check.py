"""The prose of the guides against the benchmark records: every number,
percentage and method name that :data:`PROSE_FILES` quote from a record
is tied to the record cell it quotes, and recomputed from the record.

``tools/benchmark.py --check-docs`` checks that the generated tables are
their records' and that a section quotes only numbers that its records
hold somewhere; it cannot see a number swapped for another of the same
record, a share of the gap or a method name. Here each quote carries an
invisible marker, an HTML comment right before the quoted text::

    the best method on validation, <!-- q heldout sp best name test -->EM,
    50.59 ± 1.04: a third (<!-- q heldout sp best share -->33%) of the gap

and ``--check-docs`` reports every problem of :func:`check_prose` too.
What each field quotes is computed by :mod:`.prose_values` (from the
records, by ``oracle.py`` and ``paper_claims.py`` as the tables and
claims compute it, and printed as they print it); the pages are read and
the quoted texts found by :mod:`.prose_markup`.

**A quote** is ``<!-- q RECORD [MODE] [SETTING] [CONFIG] FIELD... -->``:

- ``RECORD``: an alias of :data:`RECORDS` (a sweep record) or of
  :data:`COMPARISONS` (a cross-domain comparison, whose rank-correlation
  lines are read);
- ``MODE``: needed only for a record of several modes;
- ``SETTING``: ``sp`` (``single_positive``), ``r0.8``, ``r0.5`` or
  ``full``;
- ``CONFIG``: a row of the setting (``em``, ``an``, ...); ``best``, the
  method with the best mean validation mAP over the seeds, neither end
  of the gap (in ``full``: the honest oracle); ``oracle``, the high end
  of the gap (the honest oracle, the best of ``full`` on validation,
  where the record has ``full``; else ``full_labels`` of the setting);
  or a group ``a,b,c``, quoted as the range of its values (``lo to hi``;
  one value where both ends read alike);
- ``FIELD``: what is quoted, ``:N`` after it giving other decimals
  (``mean:1``):

  - of a row: ``name`` (the method as the guides name it,
    :data:`NAMES`), ``test`` (test mAP, ``mean ± std`` over the seeds),
    ``mean`` and ``std`` (its parts), ``val`` (the mean validation mAP
    over the seeds, what every choice reads), ``val0`` (the first
    seed's, the tables' ``val mAP`` column), ``own`` (the config's own
    recipe, test mAP), ``CF1`` and ``OF1`` (test means), ``share`` (of
    the gap: ``(mAP - AN) / (oracle - AN)`` of the test means, in whole
    percent; ``share/CONFIG`` against that row of the setting instead of
    the oracle, ``share@RECORD`` against the ends of another record's
    setting), ``share_head`` (of the gap to the same-head oracle, the
    best run on all labels with the method's head), ``gain`` (test mean
    less the baseline's, in points),
    ``lr`` and ``epochs`` (the chosen point), ``replay_pruned`` and
    ``replay_unpruned`` (the first seed's validation mAP at the pruned
    and at the unpruned choice of the record's ``pruning`` replay of the
    group) and ``replay_pruned_lr`` and ``replay_unpruned_lr`` (their
    learning rates);
  - of a setting (no config): ``hidden`` (the share of positives the
    setting hides, ``domain_statistics``) and ``methods`` (its rows);
  - of a record (no setting): ``runs`` (its trials), ``pruned`` (the
    pruned ones), ``minutes`` (its training minutes), ``pruned_minutes``
    and ``to_the_end`` (the pruned runs' minutes, and what they would
    have taken to their end), ``unpruned_minutes`` (the sweep without
    pruning), ``pruning_share`` (the training minutes over the last),
    ``pruning_saved`` (one less it), ``replays`` and ``replays_same``
    (groups replayed unpruned, and those that chose alike) and
    ``stat.KEY`` (``domain_statistics``: ``classes``, ``train_images``,
    ``labels_per_image``, ``prior_min``, ``prior_max`` and the shares
    ``test_photographs_seen``, ``val_photographs_seen``,
    ``test_backgrounds_seen`` and ``val_backgrounds_seen``);
  - of a comparison (its ``N``-th rank-correlation line in place of the
    setting, the first when not given): ``rho``, ``p`` (as the
    comparison prints them) and ``methods``.

  The texts of a marker's fields follow it in that order, separated
  only by spaces, line breaks and ``( ) , ; : / * _``, and each ends
  there: ``50.5`` is no quote of ``50.59``, ``EM`` none of ``EM + APL``.
  A marker never starts a line or a list item: markdown would end the
  paragraph there (an HTML block).

**An ordered list** is ``<!-- order RECORD [MODE] SETTING [all] -->``
... ``<!-- /order -->``: the methods whose names the quotes inside it
quote (of that record and setting) come in the order of their mean
validation mAP, highest first, each once (``an`` and ``an_mmlml`` are
one method, as are ``opml`` and ``zlpr``: the guides name each pair
once, ``AN (= AN-mmlml)``); with ``all``, every row of the setting but
the ends of the gap whose validation mAP lies between the first listed
and the last is listed too. The values shown are the test numbers; the
order is the validation's.

**Coverage.** In the sections of :data:`COVERED` (README's
``## Benchmark``; all of ``docs/which_method.md``; all of
``docs/benchmark.md`` but :data:`NOT_COVERED`, the design of COCO's
label density, which no sweep has run yet), every two-decimal number and
every percentage of the prose (paragraphs, list items and tables; not
headings, code, inline code or comments) is the quote of a marker or is
named in its paragraph, list item or table by a ``<!-- not from a
record: ... -->`` comment (a probe, the design of a domain, a target,
the default of an option), so that no record number can be added or
edited there unmarked. Integers and numbers of one decimal are checked
where they are marked (runs, minutes, gains, ranges), not required to
be; numbers in words ("nine configs") and the verdicts in words ("level
with", "within noise") are not read.

**Fixing.** When a record is regenerated, :func:`fix_prose`
(``tools/benchmark.py --check-docs --fix-prose``) rewrites each marked
text that differs from what its record now gives, where what stands
there is a text of the same kind (a number, ``mean ± std``, a range, a
percentage, a method's name), and names each change; it reorders no
list and writes no unmarked number: those, and the markers that name
nothing, stay problems for a human, as does the wording around a
changed number.
"""
import os.path as osp
from typing import Dict, List, Optional, Sequence, Tuple

from mmlml.benchmark.reports import prose_markup as markup
from mmlml.benchmark.reports.oracle import validation_map
from mmlml.benchmark.reports.prose_markup import (NAMES, Edit, MarkerError,
                                                  Quote, line_of)
from mmlml.benchmark.reports.prose_values import (COMPARISONS, RECORDS,
                                                  SETTINGS, Sources)

__all__ = [
    'PROSE_FILES', 'RECORDS', 'COMPARISONS', 'NAMES', 'COVERED', 'NOT_COVERED',
    'check_prose', 'fix_quotes', 'fix_prose'
]

#: The guides whose quotes are checked.
PROSE_FILES = ('README.md', osp.join('docs', 'which_method.md'),
               osp.join('docs', 'benchmark.md'))

#: Configs that are one method (equal to the last digit): an ordered
#: list names each once.
_SAME_METHOD = {'an_mmlml': 'an', 'zlpr': 'opml'}

#: Page -> the headings of its sections whose every two-decimal number
#: and percentage must be a marked quote (``None``: the whole page, less
#: the sections of :data:`NOT_COVERED`).
COVERED: Dict[str, Optional[Tuple[str, ...]]] = {
    'README.md': ('## Benchmark', ),
    osp.join('docs', 'which_method.md'): None,
    osp.join('docs', 'benchmark.md'): None,
}

#: Page -> the headings of the sections that a page covered as a whole
#: leaves out: their numbers come from no record.
NOT_COVERED: Dict[str, Tuple[str, ...]] = {
    osp.join('docs', 'benchmark.md'):
    ("### COCO's label density (`photo_canvases_coco_density`): designed, "
     'not yet benchmarked', ),
}

#: An ordered list being read: where it starts, its marker's tokens and
#: the quotes in it so far.
_Order = Tuple[int, List[str], List[Quote]]


class _Checker(Sources):
    """Reads the records once and checks the pages of one checkout."""

    def check_page(self,
                   page: str) -> Tuple[Optional[str], List[str], List[Edit]]:
        """The text of ``page`` (None where it is missing), its problems
        and the edits that would make its quotes their records'."""
        path = osp.join(self.root, page)
        if not osp.isfile(path):
            return None, [f'{page}: missing'], []
        text = markup.read_page(path)
        plain = markup.prose(text)
        problems: List[str] = []
        edits: List[Edit] = []
        covered: List[Tuple[int, int]] = []  # the spans quotes account for
        orders: List[_Order] = []
        for found in markup.MARKER.finditer(plain):
            kind, spec = found.group(1), found.group(2)
            where = f'{page}:{line_of(text, found.start())}'
            if markup.starts_block(plain, found.start()):
                problems.append(
                    f'{where}: a marker that starts a line (or a list item) '
                    'ends the paragraph there in markdown (an HTML block): '
                    'put text of the line before it')
            if kind == '/order':
                if not orders:
                    problems.append(f'{where}: <!-- /order --> without an '
                                    '<!-- order ... -->')
                    continue
                problems += self._check_order(page, text, *orders.pop())
                continue
            if kind == 'order':
                orders.append((found.start(), spec.split(), []))
                continue
            try:
                quote = self.parse(spec, found.end())
            except (MarkerError, KeyError, IndexError, TypeError) as error:
                problems.append(f'{where}: <!-- q{spec}--> {_reason(error)}')
                # What it stood for, to the next comment or the line's
                # end, is no second problem.
                covered.append(
                    (found.end(), markup.line_rest(plain, found.end())))
                continue
            problem, spans, quote_edits = markup.match(plain, quote)
            covered += spans
            edits += quote_edits
            if problem is not None:
                problems.append(f'{page}:{line_of(text, problem[0])}: '
                                f'<!-- q{spec}--> {problem[1]}')
            if orders:
                orders[-1][2].append(quote)
        for start, _, _ in orders:
            problems.append(f'{page}:{line_of(text, start)}: <!-- order --> '
                            'without its <!-- /order -->')
        problems += self._check_coverage(page, text, plain, covered)
        return text, problems, edits

    def _check_order(self, page: str, text: str, start: int, spec: List[str],
                     quotes: List[Quote]) -> List[str]:
        """The problems of the ordered list that starts at ``start``."""
        where = f'{page}:{line_of(text, start)}'
        tokens = list(spec)
        complete = bool(tokens) and tokens[-1] == 'all'
        if complete:
            tokens.pop()
        try:
            if not tokens or tokens[0] not in RECORDS:
                raise MarkerError('names no record')
            record = self.record(tokens[0])
            mode = record.mode(tokens[1] if len(tokens) == 3 else None)
            if len(tokens) < 2 or tokens[-1] not in SETTINGS:
                raise MarkerError('names no setting')
            setting = SETTINGS[tokens[-1]]
            rows = record.rows(mode, setting)
        except MarkerError as error:
            return [f'{where}: <!-- order {" ".join(spec)} --> {error}']
        listed: List[str] = []
        for quote in quotes:
            if not quote.named or (quote.record, quote.mode,
                                   quote.setting) != (tokens[0], mode,
                                                      setting):
                continue
            method = _SAME_METHOD.get(quote.configs[0], quote.configs[0])
            if listed and listed[-1] == method:
                continue
            if method in listed:
                return [f'{where}: the ordered list names {method} twice']
            listed.append(method)
        if len(listed) < 2:
            return [f'{where}: an ordered list of fewer than two methods']
        values = [validation_map(rows[m]) for m in listed]
        for (a,
             x), (b,
                  y) in zip(zip(listed, values), zip(listed[1:], values[1:])):
            if y > x:
                order = sorted(listed, key=lambda m: -validation_map(rows[m]))
                return [
                    f'{where}: the list is not in the order of validation '
                    f'mAP: {b} ({y:.2f}) after {a} ({x:.2f}); by '
                    f'validation: {", ".join(order)}'
                ]
        if complete:
            # The ends of the gap are no methods of the setting.
            ends = [record.baseline, record.old_oracle]
            low, high = min(values), max(values)
            missing = [
                name for name, row in rows.items()
                if _SAME_METHOD.get(name, name) not in listed + ends and name
                not in _SAME_METHOD and low <= validation_map(row) <= high
            ]
            if missing:
                return [
                    f'{where}: the list leaves out {", ".join(missing)}, '
                    'between its first and its last on validation'
                ]
        return []

    def _check_coverage(self, page: str, text: str, plain: str,
                        covered: List[Tuple[int, int]]) -> List[str]:
        """Every two-decimal number and percentage of the covered
        sections of ``page`` that no quote accounts for and no
        ``not from a record`` comment of its paragraph names."""
        if page not in COVERED:
            return []
        problems = []
        found = markup.sections(text, plain)
        headings = COVERED[page]
        left_out = NOT_COVERED.get(page, ())
        for heading in (headings or ()) + left_out:
            if heading not in {h for h, _, _ in found}:
                problems.append(f'{page}: no section {heading!r}, which '
                                'the prose check names (rename it in '
                                'mmlml/benchmark/reports/prose_check.py too)')
        if headings is None:
            first = found[0][1] if found else len(plain)
            spans = [(0, first)] + [(s, e)
                                    for h, s, e in found if h not in left_out]
        else:
            spans = [(s, e) for h, s, e in found if h in headings]
        for start, end in spans:
            for at, number in markup.unmarked_numbers(plain, start, end):
                if not any(s <= at < e for s, e in covered):
                    problems.append(
                        f'{page}:{line_of(text, at)}: {number} has no '
                        'marker (<!-- q ... --> before it, or <!-- not from '
                        'a record: ... --> in its paragraph)')
        return problems


def _reason(error: Exception) -> str:
    if isinstance(error, KeyError):
        return f'names nothing of its record (no {error})'
    return str(error)


def check_prose(root: str, pages: Sequence[str] = PROSE_FILES) -> List[str]:
    """The quotes of ``pages`` (:data:`PROSE_FILES`) under ``root`` that
    their records do not make, the ordered lists out of order, and the
    unmarked numbers of the covered sections (see the module docstring):
    one line per problem, ``page:line: what was expected, what was
    found``; empty when all is well."""
    checker = _Checker(root)
    problems: List[str] = []
    for page in pages:
        problems += checker.check_page(page)[1]
    return problems


def fix_quotes(root: str, pages: Sequence[str] = PROSE_FILES) -> List[str]:
    """Rewrite in place each quote of ``pages`` under ``root`` whose text
    differs from what its record gives, where what stands there is a
    text of the same kind (a number, a range, a percentage, a method's
    name; see the module docstring); a page is written, atomically, only
    where it changed. One line per change, ``page:line: old -> new``."""
    checker = _Checker(root)
    changes: List[str] = []
    for page in pages:
        text, _, edits = checker.check_page(page)
        if text is None or not edits:
            continue
        fixed = text
        for edit in sorted(edits, reverse=True):
            fixed = fixed[:edit.start] + edit.new + fixed[edit.end:]
        changes += [
            f'{page}:{line_of(text, e.start)}: {" ".join(e.old.split())} -> '
            f'{" ".join(e.new.split())}' for e in edits
        ]
        if fixed != text:
            markup.write_page(osp.join(root, page), fixed)
    return changes


def fix_prose(root: str, pages: Sequence[str] = PROSE_FILES) -> List[str]:
    """:func:`fix_quotes`, then :func:`check_prose` of the pages as they
    are after it: the changes made (``page:line: old -> new``), then the
    problems left (an ordered list out of order is reported, never
    reordered; a marker that names nothing, a text of another kind and
    an unmarked number are left as they are)."""
    return fix_quotes(root, pages) + check_prose(root, pages)
