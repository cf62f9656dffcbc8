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

The records are read here as JSON (the standard library only); what is
derived from them (the best method on validation, the honest oracle, the
share of the gap) is computed as ``mmlml/benchmark/reports/oracle.py``,
``paper_claims.py`` and ``results.py`` compute it for the tables and
claims, and printed as they print it.

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
    setting), ``gain`` (test mean less the baseline's, in points),
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
"""
import json
import math
import os.path as osp
import re
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

__all__ = [
    'PROSE_FILES', 'RECORDS', 'COMPARISONS', 'NAMES', 'COVERED', 'NOT_COVERED',
    'check_prose'
]

#: The guides whose quotes are checked.
PROSE_FILES = ('README.md', osp.join('docs', 'which_method.md'),
               osp.join('docs', 'benchmark.md'))

#: Where the records are, relative to the checkout.
_RESULTS = osp.join('docs', 'results')

#: A marker's record alias -> the record (JSON) under ``docs/results``.
RECORDS = {
    'heldout': 'benchmark_photo_heldout.json',
    'heldout_ft': 'benchmark_photo_heldout_finetune.json',
    'disjoint': 'benchmark_photo_heldout_disjoint.json',
    'combined': 'benchmark_photo_heldout_combined.json',
    'photo': 'benchmark_photo.json',
    'photo_ft': 'benchmark_photo_finetune.json',
    'synthetic': 'benchmark_synthetic.json',
    'observed_val': 'benchmark_synthetic_observed_val.json',
    'digits': 'benchmark_digits.json',
    'fixed': 'benchmark.json',
}

#: A marker's comparison alias -> the comparison (markdown, made from
#: records by ``tools/analysis/compare_benchmarks.py`` and checked
#: against them by ``--check-docs``).
COMPARISONS = {
    'domains': 'benchmark_domains.md',
    'domains_photo': 'benchmark_domains_photo.md',
    'domains_photo_r08': 'benchmark_domains_photo_r08.md',
    'domains_photo_r05': 'benchmark_domains_photo_r05.md',
    'domains_photo_ft': 'benchmark_domains_photo_finetune.md',
}

#: A marker's setting -> the record's.
_SETTINGS = {
    'sp': 'single_positive',
    'single_positive': 'single_positive',
    'r0.8': 'r0.8',
    'r0.5': 'r0.5',
    'full': 'full',
}

_FULL = 'full'

#: Config -> the names the guides give it (the first is the usual one).
NAMES: Dict[str, Tuple[str, ...]] = {
    'an': ('AN', ),
    'an_mmlml': ('AN-mmlml', ),
    'an_ls': ('AN-LS', ),
    'asl': ('ASL', ),
    'boostlu_an': ('BoostLU on AN', ),
    'boostlu_em': ('BoostLU + EM', ),
    'boostlu_ll_r': ('BoostLU + LL-R', ),
    'crisp': ('CRISP', ),
    'em': ('EM', ),
    'em_apl': ('EM + APL', ),
    'entmin': ('EntMin', ),
    'epr': ('EPR', ),
    'focal': ('focal loss', ),
    'focal_margin': ('focal margin', ),
    'full_labels': ('full labels', 'plain BCE'),
    'gpr': ('GPR', ),
    'gr': ('GR', ),
    'high_rank': ('high-rank regularisation', ),
    'hill': ('Hill', ),
    'lasd': ('LASD', ),
    'lasd_cr': ('LASD + consistency', ),
    'll_cp': ('LL-Cp', ),
    'll_ct': ('LL-Ct', ),
    'll_r': ('LL-R', ),
    'mse_neg': ('MSE on negatives', ),
    'n_ls': ('N-LS', ),
    'opml': ('OPML', ),
    'opml_sp': ('OPML-SP', ),
    'pseudo_label': ('pseudo-labelling', ),
    'role': ('ROLE', ),
    'splc': ('SPLC', ),
    'vlpl': ('VLPL', ),
    'vlpl_em': ("VLPL on EM's scores", ),
    'wan': ('WAN', ),
    'zlpr': ('ZLPR', ),
}

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

_VAL_MAP = 'val mAP'
_LR_KEY = 'optim_wrapper.optimizer.lr'
_EPOCHS_KEY = 'train_cfg.max_epochs'

_MARKER = re.compile(r'<!--\s*(q|order|/order)\b(.*?)-->', re.S)
_COMMENT = re.compile(r'<!--.*?-->', re.S)
_EXEMPT = re.compile(r'<!--\s*not from a record:(.*?)-->', re.S)
_FENCE_LINE = re.compile(r'^\s*(```|~~~)')
_HEADING = re.compile(r'#{1,6} ')
_ITEM = re.compile(r'\s*(?:[-*+]|\d+\.)\s')
#: What may stand before a marker that starts a block of markdown: a
#: line's indent, list item and quote markers.
_BLOCK_START = re.compile(r'\s*(?:(?:[-*+]|\d+[.)])\s+|>\s*)*')
_INLINE_CODE = re.compile(r'`(?:[^`\n]|\n(?!\s*\n))*`')
#: What must be a marked quote in a covered section: two decimals, or a
#: percentage.
_QUOTABLE = re.compile(r'(?<![\w.])(?:\d+(?:\.\d+)?%|\d+\.\d\d(?![\d%]))')
_FIRST_GLUE = re.compile(r'[\s*_]*')
_GLUE = re.compile(r'[\s(),;:/*_]*')
_CORRELATION = re.compile(r'Rank correlation \(Spearman\) of the (\d+) '
                          r'methods.*: (\S+) \(two-sided p = ([^)]+)\)\.')

_ROW_FIELDS = ('name', 'test', 'mean', 'std', 'val', 'val0', 'own', 'CF1',
               'OF1', 'share', 'gain', 'lr', 'epochs', 'replay_pruned',
               'replay_unpruned', 'replay_pruned_lr', 'replay_unpruned_lr')
_SETTING_FIELDS = ('hidden', 'methods')
_RECORD_FIELDS = ('runs', 'pruned', 'minutes', 'pruned_minutes', 'to_the_end',
                  'unpruned_minutes', 'pruning_share', 'pruning_saved',
                  'replays', 'replays_same')
_COMPARISON_FIELDS = ('rho', 'p', 'methods')
_STATISTICS = {
    'classes': ('classes', '{:d}'),
    'train_images': ('train_images', '{:d}'),
    'labels_per_image': ('labels_per_image', '{:.2f}'),
    'prior_min': (('class_prior_range', 0), '{:.1%}'),
    'prior_max': (('class_prior_range', 1), '{:.1%}'),
    'test_photographs_seen': ('test_photographs_seen_in_training', '{:.1%}'),
    'val_photographs_seen': ('val_photographs_seen_in_training', '{:.1%}'),
    'test_backgrounds_seen': ('test_backgrounds_seen_in_training', '{:.1%}'),
    'val_backgrounds_seen': ('val_backgrounds_seen_in_training', '{:.1%}'),
}

#: A setting's rows: config -> row (its runs, their means and spreads).
_Rows = Dict[str, dict]

#: A value and how it is printed (a format, or None for a text).
_Value = Tuple[Union[float, int, str], Optional[str]]


class MarkerError(ValueError):
    """A marker that names nothing of its record."""


class _Quote(NamedTuple):
    """A parsed ``q`` marker: where it ends, its record, mode, setting
    and configs (resolved), the texts it expects (the alternatives of
    each field) and whether it quotes a name (a member of a list)."""
    end: int
    record: str
    mode: Optional[str]
    setting: Optional[str]
    configs: Tuple[str, ...]
    expected: List[Tuple[str, ...]]
    named: bool


def _validation_map(row: dict) -> float:
    """The mean validation mAP of a row's runs (NaN without one)."""
    values = [
        run[_VAL_MAP] for run in row.get('runs', ())
        if isinstance(run.get(_VAL_MAP), (int, float))
    ]
    return sum(values) / len(values) if values else math.nan


def _best_on_validation(rows: _Rows, exclude: tuple = ()) -> Optional[str]:
    """The row (none of ``exclude``) with the best mean validation mAP,
    the first of equals."""
    best, best_value = None, -math.inf
    for name, row in rows.items():
        value = _validation_map(row)
        if name not in exclude and not math.isnan(value) and \
                value > best_value:
            best, best_value = name, value
    return best


class _Record:
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

    def rows(self, mode: str, setting: str) -> Dict[str, dict]:
        rows = self.results.get(mode, {}).get(setting)
        if not rows:
            raise MarkerError(f'{self.alias} has no setting {setting} in '
                              f'mode {mode}')
        return rows

    def oracle(self, mode: str, setting: Optional[str]) -> Tuple[str, str]:
        """``(setting, config)`` of the high end of ``setting``'s gap:
        the honest oracle where the record has ``full``, else its old
        oracle in ``setting``."""
        full = self.results.get(mode, {}).get(_FULL)
        if full:
            best = _best_on_validation(full)
            if best is not None:
                return _FULL, best
        if setting is None or setting == _FULL:
            raise MarkerError(f'{self.alias} has no honest oracle: name '
                              'the setting of the old one')
        return setting, self.old_oracle

    def best(self, mode: str, setting: str) -> str:
        """The best method of ``setting`` on validation (neither end of
        the gap; in ``full``, the honest oracle)."""
        rows = self.rows(mode, setting)
        exclude = () if setting == _FULL else (self.baseline, self.old_oracle)
        best = _best_on_validation(rows, exclude)
        if best is None:
            raise MarkerError(f'{self.alias} {setting}: no row has a '
                              'validation mAP')
        return best

    def row(self, mode: str, setting: str, config: str) -> dict:
        rows = self.rows(mode, setting)
        if config not in rows:
            raise MarkerError(f'{self.alias} {setting} has no row {config}')
        return rows[config]


def _format(value: _Value, digits: Optional[int]) -> str:
    """A value as the guides print it; ``digits`` replaces the
    format's decimals."""
    number, spec = value
    if spec is None:
        return str(number)
    if digits is not None:
        spec = re.sub(r'\.\d+', f'.{digits}', spec)
        if 'd' in spec:
            spec = spec.replace('d', f'.{digits}f')
    return spec.format(number)


def _chosen(row: dict, key: str):
    chosen = (row.get('tuning') or {}).get('chosen') or {}
    if key not in chosen:
        raise MarkerError(f'the row has no chosen {key}')
    return chosen[key]


class _Checker:
    """Reads the records once and checks the pages of one checkout."""

    def __init__(self, root: str):
        self.root = root
        self.records: Dict[str, Union[_Record, MarkerError]] = {}
        self.comparisons: Dict[str, Union[List[Tuple[str, str, str]],
                                          MarkerError]] = {}

    # The sources -------------------------------------------------------

    def record(self, alias: str) -> _Record:
        if alias not in self.records:
            path = osp.join(self.root, _RESULTS, RECORDS[alias])
            try:
                with open(path, encoding='utf-8') as f:
                    self.records[alias] = _Record(alias, json.load(f))
            except (OSError, ValueError) as error:
                self.records[alias] = MarkerError(
                    f'{osp.join(_RESULTS, RECORDS[alias])} unreadable '
                    f'({error})')
        found = self.records[alias]
        if isinstance(found, MarkerError):
            raise found
        return found

    def correlations(self, alias: str) -> List[Tuple[str, str, str]]:
        """``(methods, rho, p)`` of each rank-correlation line of the
        comparison ``alias``, as printed."""
        if alias not in self.comparisons:
            rel = osp.join(_RESULTS, COMPARISONS[alias])
            try:
                with open(osp.join(self.root, rel), encoding='utf-8') as f:
                    lines = _CORRELATION.findall(f.read())
                self.comparisons[alias] = [tuple(x) for x in lines]
            except OSError as error:
                self.comparisons[alias] = MarkerError(
                    f'{rel} unreadable ({error})')
        found = self.comparisons[alias]
        if isinstance(found, MarkerError):
            raise found
        return found

    # A marker ----------------------------------------------------------

    def parse(self, spec: str, end: int) -> _Quote:
        """The quote that the marker text ``spec`` (after ``q``) names,
        with the texts it expects."""
        tokens = spec.split()
        if not tokens:
            raise MarkerError('an empty marker')
        alias, rest = tokens[0], tokens[1:]
        if alias in COMPARISONS:
            return self._parse_comparison(alias, rest, end)
        if alias not in RECORDS:
            raise MarkerError(f'no record or comparison {alias!r} (known: '
                              f'{", ".join(sorted(RECORDS))}; '
                              f'{", ".join(sorted(COMPARISONS))})')
        record = self.record(alias)
        mode = None
        if rest and rest[0] in record.results:
            mode, rest = rest[0], rest[1:]
        mode = record.mode(mode)
        setting = None
        if rest and rest[0] in _SETTINGS:
            setting, rest = _SETTINGS[rest[0]], rest[1:]
        configs: Tuple[str, ...] = ()
        if rest and _field_name(rest[0]) not in _ROW_FIELDS + \
                _SETTING_FIELDS + _RECORD_FIELDS and \
                not rest[0].startswith('stat.'):
            config_setting = setting
            names = []
            for name in rest[0].split(','):
                if name == 'best':
                    if setting is None:
                        raise MarkerError('best needs a setting')
                    name = record.best(mode, setting)
                elif name == 'oracle':
                    config_setting, name = record.oracle(mode, setting)
                elif setting is None:
                    raise MarkerError(f'{name} needs a setting')
                names.append(name)
            rest = rest[1:]
            for name in names:
                record.row(mode, config_setting or '', name)
            configs = tuple(names)
            setting = config_setting
        if not rest:
            raise MarkerError('no field to quote')
        expected = [
            self._field(record, mode, setting, configs, field)
            for field in rest
        ]
        named = any(_split_field(f)[0] == 'name' for f in rest)
        return _Quote(end, alias, mode, setting, configs, expected, named)

    def _parse_comparison(self, alias: str, rest: List[str],
                          end: int) -> _Quote:
        index = 1
        if rest and rest[0].isdigit():
            index, rest = int(rest[0]), rest[1:]
        lines = self.correlations(alias)
        if not 1 <= index <= len(lines):
            raise MarkerError(f'{alias} has {len(lines)} rank '
                              f'correlation line(s), not a {index}th')
        methods, rho, p = lines[index - 1]
        values = dict(methods=methods, rho=rho, p=p)
        expected: List[Tuple[str, ...]] = []
        for field in rest:
            if field not in _COMPARISON_FIELDS:
                raise MarkerError(f'no field {field!r} of a comparison '
                                  f'({", ".join(_COMPARISON_FIELDS)})')
            expected.append((values[field], ))
        if not expected:
            raise MarkerError('no field to quote')
        return _Quote(end, alias, None, None, (), expected, False)

    def _field(self, record: _Record, mode: str, setting: Optional[str],
               configs: Tuple[str, ...], field: str) -> Tuple[str, ...]:
        """The texts that quote ``field`` (one, or the accepted names)."""
        name, digits = _split_field(field)
        if configs:
            if name == 'name':
                if len(configs) > 1:
                    raise MarkerError('a group has no name')
                return NAMES.get(configs[0], (configs[0], ))
            if _field_name(name) not in _ROW_FIELDS:
                raise MarkerError(f'no field {name!r} of a row '
                                  f'({", ".join(_ROW_FIELDS)})')
            assert setting is not None
            texts = [
                self._row_field(record, mode, setting, config, name, digits)
                for config in configs
            ]
            if len(texts) == 1:
                return (texts[0], )
            values = [
                self._row_value(record, mode, setting, c, name)
                for c in configs
            ]
            low = min(range(len(values)), key=lambda i: values[i][0])
            high = max(range(len(values)), key=lambda i: values[i][0])
            low_text = _format(values[low], digits)
            high_text = _format(values[high], digits)
            if low_text == high_text:
                return (low_text, )
            return (f'{low_text} to {high_text}', )
        if setting is not None and name in _SETTING_FIELDS:
            return (_format(
                self._setting_value(record, mode, setting, name), digits), )
        if name in _RECORD_FIELDS or name.startswith('stat.'):
            return (_format(self._record_value(record, name), digits), )
        raise MarkerError(f'no field {name!r} here (of a row: '
                          f'{", ".join(_ROW_FIELDS)}; of a setting: '
                          f'{", ".join(_SETTING_FIELDS)}; of a record: '
                          f'{", ".join(_RECORD_FIELDS)}, stat.KEY)')

    def _row_field(self, record: _Record, mode: str, setting: str, config: str,
                   name: str, digits: Optional[int]) -> str:
        row = record.row(mode, setting, config)
        if name == 'test':
            mean = _format((row['mAP'], '{:.2f}'), digits)
            if len(row.get('runs', ())) < 2:
                return mean
            return f'{mean} ± ' + _format(
                (row['std']['mAP'], '{:.2f}'), digits)
        return _format(
            self._row_value(record, mode, setting, config, name), digits)

    def _row_value(self, record: _Record, mode: str, setting: str, config: str,
                   field: str) -> _Value:
        row = record.row(mode, setting, config)
        if field in ('test', 'mean'):
            return row['mAP'], '{:.2f}'
        if field == 'std':
            return row['std']['mAP'], '{:.2f}'
        if field == 'val':
            return _validation_map(row), '{:.2f}'
        if field == 'val0':
            return row['runs'][0][_VAL_MAP], '{:.2f}'
        if field == 'own':
            own = (row.get('tuning') or {}).get('own recipe')
            if not own:
                raise MarkerError(f'{config} has no own-recipe run')
            return own['mAP'], '{:.2f}'
        if field == 'CF1':
            return row['CF1 (paper)'], '{:.2f}'
        if field == 'OF1':
            return row['OF1'], '{:.2f}'
        if field == 'gain':
            base = record.row(mode, setting, record.baseline)
            return row['mAP'] - base['mAP'], '{:.1f}'
        if field == 'lr':
            return f'{_chosen(row, _LR_KEY):g}', None
        if field == 'epochs':
            return int(_chosen(row, _EPOCHS_KEY)), '{:d}'
        if field.startswith('replay_'):
            return self._replay(record, mode, setting, config, field)
        if _field_name(field) == 'share':
            return self._share(record, mode, setting, row, field), '{:.0%}'
        raise MarkerError(f'no field {field!r} of a row')

    def _share(self, record: _Record, mode: str, setting: str, row: dict,
               field: str) -> float:
        """``share[/CONFIG][@RECORD]`` of ``row``."""
        found = re.fullmatch(r'share(?:/(\w+))?(?:@(\w+))?', field)
        if found is None:
            raise MarkerError(f'not a share: {field!r}')
        oracle_config, other = found.groups()
        ends = record
        if other is not None:
            if other not in RECORDS:
                raise MarkerError(f'no record {other!r}')
            ends = self.record(other)
        ends_mode = ends.mode(mode if mode in ends.results else None)
        if setting == _FULL:
            raise MarkerError('the setting full has no gap')
        baseline = ends.row(ends_mode, setting, ends.baseline)['mAP']
        if oracle_config is not None:
            oracle = ends.row(ends_mode, setting, oracle_config)['mAP']
        else:
            oracle_setting, name = ends.oracle(ends_mode, setting)
            oracle = ends.row(ends_mode, oracle_setting, name)['mAP']
        if oracle <= baseline:
            raise MarkerError('the oracle does not beat the baseline')
        return (row['mAP'] - baseline) / (oracle - baseline)

    @staticmethod
    def _replay(record: _Record, mode: str, setting: str, config: str,
                field: str) -> _Value:
        """``replay_pruned``, ``replay_unpruned`` (the validation mAP of
        each choice of the unpruned replay of a group) or their ``_lr``
        (the learning rate each chose)."""
        which = field.split('_')[1]
        for choice in (record.data.get('pruning') or {}).get('choices', ()):
            name = osp.splitext(osp.basename(choice.get('config', '')))[0]
            if (choice.get('mode'), choice.get('setting'),
                    name) == (mode, setting, config):
                if field.endswith('_lr'):
                    return f'{choice[which][_LR_KEY]:g}', None
                return choice[f'{which} val mAP'], '{:.2f}'
        raise MarkerError(f'{record.alias} replayed no {mode} {setting} '
                          f'{config}')

    @staticmethod
    def _setting_value(record: _Record, mode: str, setting: str,
                       field: str) -> _Value:
        if field == 'methods':
            return len(record.rows(mode, setting)), '{:d}'
        hidden = (record.data.get('domain_statistics')
                  or {}).get('hidden_positive_share') or {}
        if setting not in hidden:
            raise MarkerError(f'{record.alias} states no hidden share of '
                              f'{setting}')
        return hidden[setting], '{:.1%}'

    @staticmethod
    def _record_value(record: _Record, field: str) -> _Value:
        data = record.data
        trials = data.get('trials', [])
        pruning = data.get('pruning') or {}
        minutes = data.get('training_minutes', 0.0)
        pruned = pruning.get('minutes', 0.0)
        to_the_end = pruning.get('minutes_to_the_end', 0.0)
        unpruned = minutes - pruned + to_the_end
        if field.startswith('stat.'):
            key = field[len('stat.'):]
            if key not in _STATISTICS:
                raise MarkerError(f'no statistic {key!r} (known: '
                                  f'{", ".join(_STATISTICS)})')
            path, spec = _STATISTICS[key]
            statistics = data.get('domain_statistics')
            if not statistics:
                raise MarkerError(f'{record.alias} has no domain_statistics')
            value = statistics[path[0]][path[1]] if isinstance(
                path, tuple) else statistics[path]
            return value, spec
        trials_pruned = sum(t.get('state') == 'pruned' for t in trials)
        values: Dict[str, _Value] = dict(
            runs=(len(trials), '{:d}'),
            pruned=(trials_pruned, '{:d}'),
            minutes=(minutes, '{:.0f}'),
            pruned_minutes=(pruned, '{:.0f}'),
            to_the_end=(to_the_end, '{:.0f}'),
            unpruned_minutes=(unpruned, '{:.0f}'),
            pruning_share=(minutes / unpruned if unpruned else math.nan,
                           '{:.0%}'),
            pruning_saved=(1 - minutes / unpruned if unpruned else math.nan,
                           '{:.0%}'),
            replays=(pruning.get('choices_compared', 0), '{:d}'),
            replays_same=(pruning.get('choices_same', 0), '{:d}'),
        )
        return values[field]

    # A page ------------------------------------------------------------

    def check_page(self, page: str) -> List[str]:
        path = osp.join(self.root, page)
        if not osp.isfile(path):
            return [f'{page}: missing']
        with open(path, encoding='utf-8') as f:
            text = f.read()
        plain = _INLINE_CODE.sub(_blank, _blank_fences(text))
        problems: List[str] = []
        covered: List[Tuple[int, int]] = []  # the spans quotes account for
        orders: List[Tuple[int, List[str], List[Tuple[int, _Quote]]]] = []
        for found in _MARKER.finditer(plain):
            kind, spec = found.group(1), found.group(2)
            line = _line(text, found.start())
            if _BLOCK_START.fullmatch(
                    plain[plain.rfind('\n', 0, found.start()) +
                          1:found.start()]):
                problems.append(
                    f'{page}:{line}: a marker that starts a line (or a '
                    'list item) ends the paragraph there in markdown (an '
                    'HTML block): put text of the line before it')
            if kind == '/order':
                if not orders:
                    problems.append(f'{page}:{line}: <!-- /order --> '
                                    'without an <!-- order ... -->')
                    continue
                problems += self._check_order(page, text, *orders.pop())
                continue
            if kind == 'order':
                orders.append((found.start(), spec.split(), []))
                continue
            try:
                quote = self.parse(spec, found.end())
            except (MarkerError, KeyError, IndexError, TypeError) as error:
                problems.append(f'{page}:{line}: <!-- q{spec}--> '
                                f'{_reason(error)}')
                # What it stood for, to the next comment or the line's
                # end, is no second problem.
                rest = re.compile(r'[^\n]*?(?=<!--|\n|$)').match(
                    plain, found.end())
                assert rest is not None
                covered.append((found.end(), rest.end()))
                continue
            problem, spans = _match(plain, quote)
            covered += spans
            if problem is not None:
                problems.append(f'{page}:{_line(text, problem[0])}: '
                                f'<!-- q{spec}--> {problem[1]}')
            if orders:
                orders[-1][2].append((found.start(), quote))
        for start, _, _ in orders:
            problems.append(f'{page}:{_line(text, start)}: <!-- order --> '
                            'without its <!-- /order -->')
        problems += self._check_coverage(page, text, plain, covered)
        return problems

    def _check_order(self, page: str, text: str, start: int, spec: List[str],
                     quotes: List[Tuple[int, _Quote]]) -> List[str]:
        """The problems of the ordered list that starts at ``start``."""
        where = f'{page}:{_line(text, start)}'
        tokens = list(spec)
        complete = bool(tokens) and tokens[-1] == 'all'
        if complete:
            tokens.pop()
        try:
            if not tokens or tokens[0] not in RECORDS:
                raise MarkerError('names no record')
            record = self.record(tokens[0])
            mode = tokens[1] if len(tokens) == 3 else None
            mode = record.mode(mode)
            if len(tokens) < 2 or tokens[-1] not in _SETTINGS:
                raise MarkerError('names no setting')
            setting = _SETTINGS[tokens[-1]]
            rows = record.rows(mode, setting)
        except MarkerError as error:
            return [f'{where}: <!-- order {" ".join(spec)} --> {error}']
        listed: List[str] = []
        for _, quote in quotes:
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
        values = [_validation_map(rows[m]) for m in listed]
        for (a,
             x), (b,
                  y) in zip(zip(listed, values), zip(listed[1:], values[1:])):
            if y > x:
                order = sorted(listed, key=lambda m: -_validation_map(rows[m]))
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
                not in _SAME_METHOD and low <= _validation_map(row) <= high
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
        sections = _sections(text, plain)
        headings = COVERED[page]
        left_out = NOT_COVERED.get(page, ())
        for heading in (headings or ()) + left_out:
            if heading not in {h for h, _, _ in sections}:
                problems.append(f'{page}: no section {heading!r}, which '
                                'the prose check names (rename it in '
                                'mmlml/benchmark/reports/prose_check.py too)')
        if headings is None:
            first = sections[0][1] if sections else len(plain)
            spans = [(0, first)
                     ] + [(s, e) for h, s, e in sections if h not in left_out]
        else:
            spans = [(s, e) for h, s, e in sections if h in headings]
        for start, end in spans:
            for block_start, block in _blocks(plain, start, end):
                exempt = {
                    n.strip('(),;')
                    for names in _EXEMPT.findall(block)
                    for n in names.split()
                }
                masked = _COMMENT.sub(_blank, block)
                for number in _QUOTABLE.finditer(masked):
                    at = block_start + number.start()
                    if number.group() in exempt or any(s <= at < e
                                                       for s, e in covered):
                        continue
                    problems.append(
                        f'{page}:{_line(text, at)}: {number.group()} has no '
                        'marker (<!-- q ... --> before it, or <!-- not '
                        'from a record: ... --> in its paragraph)')
        return problems


def _reason(error: Exception) -> str:
    if isinstance(error, KeyError):
        return f'names nothing of its record (no {error})'
    return str(error)


def _field_name(token: str) -> str:
    """A field token without its decimals and its share's options."""
    return re.split(r'[:/@]', token, maxsplit=1)[0]


def _split_field(token: str) -> Tuple[str, Optional[int]]:
    """``(field, decimals)`` of a field token (``mean:1``)."""
    found = re.fullmatch(r'(.+?)(?::(\d))?', token)
    assert found is not None
    digits = found.group(2)
    return found.group(1), int(digits) if digits is not None else None


def _blank(found: 're.Match[str]') -> str:
    """What was found, as spaces (its line breaks kept)."""
    return re.sub(r'[^\n]', ' ', found.group())


def _line(text: str, at: int) -> int:
    return text.count('\n', 0, at) + 1


def _blank_fences(text: str) -> str:
    """``text`` with its fenced code blocks blanked (the same length and
    lines: what is in a code block is no prose)."""
    lines = text.split('\n')
    fenced = False
    for i, line in enumerate(lines):
        fence = bool(_FENCE_LINE.match(line))
        if fenced or fence:
            lines[i] = ' ' * len(line)
        if fence:
            fenced = not fenced
    return '\n'.join(lines)


def _sections(text: str, plain: str) -> List[Tuple[str, int, int]]:
    """``(heading, start, end)`` of each section of a page (from a
    heading to the next of any level; ``plain``: the page without its
    code, which has no headings)."""
    found = []
    offset = 0
    for line in plain.split('\n'):
        if _HEADING.match(line):
            found.append((text[offset:offset + len(line)].rstrip(), offset))
        offset += len(line) + 1
    ends = [start for _, start in found[1:]] + [len(plain)]
    return [(h, s, e) for (h, s), e in zip(found, ends)]


def _blocks(plain: str, start: int, end: int) -> List[Tuple[int, str]]:
    """``(offset, text)`` of the paragraphs, list items and tables
    between ``start`` and ``end`` (headings left out); a comment line
    right after one (no blank line between) belongs to it."""
    blocks: List[Tuple[int, str]] = []
    current: List[str] = []
    current_start = start
    offset = start
    for line in plain[start:end].split('\n'):
        heading = _HEADING.match(line)
        if (not line.strip() or heading or _ITEM.match(line)) and current:
            blocks.append((current_start, '\n'.join(current)))
            current = []
        if line.strip() and not heading:
            if not current:
                current_start = offset
            current.append(line)
        offset += len(line) + 1
    if current:
        blocks.append((current_start, '\n'.join(current)))
    return blocks


def _pattern(expected: str) -> str:
    """A regular expression of ``expected`` that lets a line break or
    several spaces stand for a space."""
    return r'\s+'.join(re.escape(part) for part in expected.split(' '))


def _longer_names(name: str) -> List[str]:
    return [
        other for names in NAMES.values() for other in names
        if other != name and other.startswith(name + ' ')
    ]


def _match(
        plain: str, quote: _Quote
) -> Tuple[Optional[Tuple[int, str]], List[Tuple[int, int]]]:
    """Whether the text after a marker quotes what it expects: the first
    problem (where it is and what it says; None without one) and the
    spans of the quoted texts (a text that differs stands where it was
    expected, so that the fields after it are still read)."""
    at = quote.end
    spans: List[Tuple[int, int]] = []
    problem = None
    for index, texts in enumerate(quote.expected):
        glue = (_FIRST_GLUE if index == 0 else _GLUE).match(plain, at)
        assert glue is not None
        at = glue.end()
        matched, longer = None, None
        for text in texts:
            found = re.compile(_pattern(text) +
                               r'(?![\w.]*\d)(?![A-Za-z-])').match(plain, at)
            if found is None:
                continue
            longer = next(
                (m for m in (re.compile(_pattern(name)).match(plain, at)
                             for name in _longer_names(text)) if m), None)
            if longer is None:
                matched = found
                break
        if matched is None:
            found_text = ' '.join(longer.group().split()) if longer \
                else _found(plain, at, texts[0])
            if problem is None:
                alternatives = ' or '.join(repr(t) for t in texts)
                problem = (at, f'expects {alternatives}, found '
                           f'{found_text!r}')
            spans.append((at, at + len(found_text)))
        else:
            spans.append((matched.start(), matched.end()))
        at = spans[-1][1]
    return problem, spans


def _found(plain: str, at: int, expected: str) -> str:
    """What stands at ``at`` in place of ``expected``: as many words, and
    no trailing punctuation."""
    words = len(expected.split(' '))
    found = re.match(r'\S+(?:\s+\S+){0,%d}' % (words - 1), plain[at:])
    if found is None:
        return ''
    return found.group().rstrip('),;:.*')


def check_prose(root: str, pages: Sequence[str] = PROSE_FILES) -> List[str]:
    """The quotes of ``pages`` (:data:`PROSE_FILES`) under ``root`` that
    their records do not make, the ordered lists out of order, and the
    unmarked numbers of the covered sections (see the module docstring):
    one line per problem, ``page:line: what was expected, what was
    found``; empty when all is well."""
    checker = _Checker(root)
    problems: List[str] = []
    for page in pages:
        problems += checker.check_page(page)
    return problems
