"""The record side of the prose check (:mod:`.prose_check`, whose
docstring gives the grammar of a marker and its fields): the records and
comparisons that a marker names, and the texts that each field of a
marker quotes, computed from them and printed as the tables and claims
print them.

What is derived from a record is computed by the functions that make the
tables and claims: the ends of a setting's gap by
:func:`~.oracle.gap_ends` (the honest oracle where the record has
``full``, else its old oracle in the setting), the best method of a
setting by :func:`~.paper_claims.best_gap_share` (in ``full``, by
:func:`~.oracle.best_on_validation`: the honest oracle), a share of the
gap by :meth:`~.oracle.GapEnds.share` or :func:`~.oracle.gap_closed`,
and a row's validation mAP by :func:`~.oracle.validation_map`.
"""
import json
import math
import os.path as osp
import re
from typing import Callable, Dict, List, Optional, Tuple, TypeVar, Union

from mmlml.benchmark.reports.docs_check import RESULTS_DIR
from mmlml.benchmark.reports.oracle import validation_map
from mmlml.benchmark.reports.prose_markup import NAMES, MarkerError, Quote
from mmlml.benchmark.reports.prose_record import Record
from mmlml.benchmark.sweep.settings import FULL_SETTING
from mmlml.benchmark.training.config_keys import EPOCHS_KEY, LR_KEY
from mmlml.benchmark.training.trial_record import VAL_MAP

__all__ = ['RECORDS', 'COMPARISONS', 'SETTINGS', 'Sources']

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
SETTINGS = {
    'sp': 'single_positive',
    'single_positive': 'single_positive',
    'r0.8': 'r0.8',
    'r0.5': 'r0.5',
    FULL_SETTING: FULL_SETTING,
}

_CORRELATION = re.compile(r'Rank correlation \(Spearman\) of the (\d+) '
                          r'methods.*: (\S+) \(two-sided p = ([^)]+)\)\.')

_ROW_FIELDS = ('name', 'test', 'mean', 'std', 'val', 'val0', 'own', 'CF1',
               'OF1', 'share', 'share_head', 'gain', 'lr', 'epochs',
               'replay_pruned', 'replay_unpruned', 'replay_pruned_lr',
               'replay_unpruned_lr')
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

#: A value and how it is printed (a format, or None for a text).
_Value = Tuple[Union[float, int, str], Optional[str]]

#: A comparison's rank-correlation lines: ``(methods, rho, p)``.
_Correlations = List[Tuple[str, str, str]]

_T = TypeVar('_T')


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


def _field_name(token: str) -> str:
    """A field token without its decimals and its share's options."""
    return re.split(r'[:/@]', token, maxsplit=1)[0]


def _split_field(token: str) -> Tuple[str, Optional[int]]:
    """``(field, decimals)`` of a field token (``mean:1``)."""
    found = re.fullmatch(r'(.+?)(?::(\d))?', token)
    assert found is not None
    digits = found.group(2)
    return found.group(1), int(digits) if digits is not None else None


class Sources:
    """The records and comparisons of one checkout (each read once) and
    the quotes their markers name."""

    def __init__(self, root: str):
        self.root = root
        self._records: Dict[str, Union[Record, MarkerError]] = {}
        self._comparisons: Dict[str, Union[_Correlations, MarkerError]] = {}

    def _read(self, cache: Dict[str, Union[_T, MarkerError]], alias: str,
              name: str, parse: Callable[[str], _T]) -> _T:
        """``parse`` of the text of ``name`` under ``docs/results``, read
        once (a file that cannot be read fails every marker of it)."""
        if alias not in cache:
            rel = osp.join(RESULTS_DIR, name)
            try:
                with open(osp.join(self.root, rel), encoding='utf-8') as f:
                    cache[alias] = parse(f.read())
            except (OSError, ValueError) as error:
                cache[alias] = MarkerError(f'{rel} unreadable ({error})')
        found = cache[alias]
        if isinstance(found, MarkerError):
            raise found
        return found

    def record(self, alias: str) -> Record:
        return self._read(self._records, alias, RECORDS[alias],
                          lambda text: Record(alias, json.loads(text)))

    def correlations(self, alias: str) -> _Correlations:
        """``(methods, rho, p)`` of each rank-correlation line of the
        comparison ``alias``, as printed."""
        return self._read(self._comparisons, alias, COMPARISONS[alias],
                          lambda text: _CORRELATION.findall(text))

    # A marker ----------------------------------------------------------

    def parse(self, spec: str, end: int) -> Quote:
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
        if rest and rest[0] in SETTINGS:
            setting, rest = SETTINGS[rest[0]], rest[1:]
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
        return Quote(end, alias, mode, setting, configs, expected, named)

    def _parse_comparison(self, alias: str, rest: List[str],
                          end: int) -> Quote:
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
        return Quote(end, alias, None, None, (), expected, False)

    def _field(self, record: Record, mode: str, setting: Optional[str],
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
            if len(configs) == 1:
                return (self._row_field(record, mode, setting, configs[0],
                                        name, digits), )
            values = [
                self._row_value(record, mode, setting, c, name)
                for c in configs
            ]
            low_text = _format(min(values, key=lambda v: v[0]), digits)
            high_text = _format(max(values, key=lambda v: v[0]), digits)
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

    def _row_field(self, record: Record, mode: str, setting: str, config: str,
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

    def _row_value(self, record: Record, mode: str, setting: str, config: str,
                   field: str) -> _Value:
        row = record.row(mode, setting, config)
        if field in ('test', 'mean'):
            return row['mAP'], '{:.2f}'
        if field == 'std':
            return row['std']['mAP'], '{:.2f}'
        if field == 'val':
            return validation_map(row), '{:.2f}'
        if field == 'val0':
            return row['runs'][0][VAL_MAP], '{:.2f}'
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
            return f'{_chosen(row, LR_KEY):g}', None
        if field == 'epochs':
            return int(_chosen(row, EPOCHS_KEY)), '{:d}'
        if field.startswith('replay_'):
            return self._replay(record, mode, setting, config, field)
        if field == 'share_head':
            return record.head_share(mode, setting, config), '{:.0%}'
        if _field_name(field) == 'share':
            return self._share(record, mode, setting, row, field), '{:.0%}'
        raise MarkerError(f'no field {field!r} of a row')

    def _share(self, record: Record, mode: str, setting: str, row: dict,
               field: str) -> float:
        """``share[/CONFIG][@RECORD]`` of ``row``."""
        found = re.fullmatch(r'share(?:/(\w+))?(?:@(\w+))?', field)
        if found is None:
            raise MarkerError(f'not a share: {field!r}')
        oracle, other = found.groups()
        ends = record
        if other is not None:
            if other not in RECORDS:
                raise MarkerError(f'no record {other!r}')
            ends = self.record(other)
        ends_mode = ends.mode(mode if mode in ends.results else None)
        return ends.share(ends_mode, setting, row, oracle)

    @staticmethod
    def _replay(record: Record, mode: str, setting: str, config: str,
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
                    return f'{choice[which][LR_KEY]:g}', None
                return choice[f'{which} val mAP'], '{:.2f}'
        raise MarkerError(f'{record.alias} replayed no {mode} {setting} '
                          f'{config}')

    @staticmethod
    def _setting_value(record: Record, mode: str, setting: str,
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
    def _record_value(record: Record, field: str) -> _Value:
        data = record.data
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
        trials = data.get('trials', [])
        pruning = data.get('pruning') or {}
        minutes = data.get('training_minutes', 0.0)
        pruned = pruning.get('minutes', 0.0)
        to_the_end = pruning.get('minutes_to_the_end', 0.0)
        unpruned = minutes - pruned + to_the_end
        values: Dict[str, _Value] = dict(
            runs=(len(trials), '{:d}'),
            pruned=(sum(t.get('state') == 'pruned' for t in trials), '{:d}'),
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
