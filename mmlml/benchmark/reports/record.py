"""A sweep's record as a JSON file, and the run ledgers of the earlier
benchmark tool read into a sweep.

:func:`export` writes what the docs are made of: the sweep's definition
and the command that reproduces it, each (mode, setting, config)'s row
(the chosen point, its search, its seeds' runs and their mean ± std),
every finished trial, the training minutes and what pruning saved (and
whether it changed a choice, :mod:`.unpruned_replay`). The
tables, claims and figures (:mod:`.report`) are written from that JSON
alone; the storage is not needed to read it.

:func:`import_ledger` turns a ledger (the ``--out`` JSON of the earlier
``tools/benchmark.py``: every run under ``runs``, or a fixed recipe's
rows under ``results``) into completed trials, so that nothing measured
is trained again.
"""
import json
import math
import numbers
import os.path as osp
import shlex
from typing import Dict, List, NoReturn, Optional

from mmlml.benchmark.reports.results import (COLUMNS, aggregate,
                                             summarise_tuning)
from mmlml.benchmark.sweep.search import SearchRules
from mmlml.benchmark.sweep.settings import LABEL_SEED, domain_file, label_seed
from mmlml.benchmark.sweep.sweep import Group, Sweep, SweepError, repo_path
from mmlml.benchmark.sweep.unpruned_replay import compare_choices
from mmlml.benchmark.training.config_keys import EPOCHS_KEY, LR_KEY
from mmlml.benchmark.training.pruning import UNPRUNED_SETTINGS, pruning_options
from mmlml.benchmark.training.trial_record import (EPOCHS_TRAINED, PER_EPOCH,
                                                   VAL_MAP)

__all__ = [
    'LedgerError', 'read_json', 'reproducer', 'export', 'import_ledger',
    'definition_from_ledger', 'check_ledger', 'label_seeds',
    'domain_statistics'
]

#: A run's fields that describe the worker, not the run: left out.
_TRANSIENT = ('heartbeat', 'worker', 'retry of')


class LedgerError(ValueError):
    """A JSON file that is not the record this tool expects."""


def read_json(path: str, what: str, keys=()) -> dict:
    """The JSON object in ``path`` with the top-level ``keys``; one clear
    error otherwise."""
    try:
        with open(path) as f:
            data = json.load(f)
    except FileNotFoundError:
        raise LedgerError(f'{path}: no such file ({what})') from None
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise LedgerError(f'{path}: not a JSON file ({what}): '
                          f'{str(error).splitlines()[0]}') from None
    missing = [k for k in keys if not isinstance(data, dict) or k not in data]
    if missing:
        raise LedgerError(f'{path}: not {what} (no {", ".join(missing)})')
    return data


def _clean(run: dict) -> dict:
    return {k: v for k, v in run.items() if k not in _TRANSIENT}


def reproducer(definition: dict, storage: str, reports: dict) -> str:
    """The command that makes this sweep and writes these reports."""
    rules = SearchRules.from_dict(definition['rules'])
    parts = ['python', 'tools/benchmark.py'] + list(definition['configs'])
    parts += ['--settings'] + definition['settings']
    if definition['modes'] != ['finetune']:
        parts += ['--modes'] + definition['modes']
    parts += ['--seeds'] + [str(s) for s in rules.seeds]
    if not rules.tune:
        parts.append('--no-tune')
    elif rules != SearchRules(seeds=rules.seeds):
        parts += ['--lrs'] + [f'{v:g}' for v in rules.lrs]
        parts += ['--lr-bounds'] + [f'{v:g}' for v in rules.lr_bounds]
        parts += ['--max-doublings', str(rules.max_doublings)]
    if definition.get('domain'):
        parts += ['--domain', definition['domain']]
    if definition.get('cfg_options'):
        parts += ['--cfg-options'] + [
            f'{k}={v}' for k, v in definition['cfg_options'].items()
        ]
    if definition.get('label_seed_per_seed'):
        parts.append('--label-seed-per-seed')
    parts += pruning_options(definition)
    parts += ['--storage', storage, '--study', definition['name']]
    parts += ['--work-dir', definition['work_dir']]
    for key in ('out', 'markdown', 'claims', 'figure'):
        if reports.get(key):
            parts += [f'--{key}', reports[key]]
    return ' '.join(shlex.quote(p) for p in parts)


def _row(sweep: Sweep, group: Group) -> Optional[dict]:
    """A finished group's row, or None."""
    current = sweep.plan(group)
    if not current.done:
        return None
    runs = [_clean(run) for run in current.runs or ()]
    if not sweep.rules.tune:
        return aggregate(runs)
    facts = sweep.config_facts(group)
    own = {EPOCHS_KEY: facts['epochs'], LR_KEY: facts['lr']}
    if facts['hyperparameter'] is not None:
        own[facts['hyperparameter'][0]] = facts['hyperparameter'][1][0]
    tuned = dict(
        grid=[_clean(run) for run in current.grid],
        chosen=current.chosen,
        runs=runs)
    return summarise_tuning(tuned, own)


def label_seeds(definition: dict) -> List[int]:
    """The seeds of the partial labels of a sweep's training seeds, in
    order: one each where it draws them per training seed
    (``label_seed_per_seed``), else the one seed of every run."""
    if definition.get('label_seed_per_seed'):
        return [label_seed(s) for s in definition['rules']['seeds']]
    return [LABEL_SEED]


def domain_statistics(definition: dict) -> Optional[dict]:
    """The ``domain_statistics`` block of a sweep's record: what its domain
    is (:func:`~mmlml.datasets.domains.photo_statistics.config_statistics`
    with the sweep's :func:`label_seeds`) where the domain's training
    canvases are real photographs (``PhotoCanvases``); None for another
    domain, which states nothing."""
    from mmengine.config import Config
    domain = definition.get('domain')
    if not domain:
        return None
    cfg = Config.fromfile(domain_file(domain))
    train = cfg.get('train_dataloader', {}).get('dataset', {})
    if dict(train.get('dataset') or {}).get('type') != 'PhotoCanvases':
        return None
    from mmlml.datasets.domains.photo_statistics import config_statistics
    return config_statistics(cfg, label_seeds(definition))


def export(sweep: Sweep, storage: str, reports: dict) -> dict:
    """The sweep's record (see the module docstring). ``storage`` is how
    the reproducer names the storage; ``reports`` the files it writes
    (``out``, ``markdown``, ``claims``, ``figure``)."""
    from optuna.trial import TrialState
    definition = sweep.definition
    results: Dict[str, dict] = {}
    trials: List[dict] = []
    for group in sweep.groups():
        row = _row(sweep, group)
        if row is not None:
            results.setdefault(group.mode, {}).setdefault(group.setting,
                                                          {})[group.name] = row
        for trial in sweep.trials(group,
                                  (TrialState.COMPLETE, TrialState.PRUNED)):
            run = _clean(trial.user_attrs)
            run['state'] = trial.state.name.lower()
            if trial.intermediate_values:
                run[PER_EPOCH] = {
                    str(k): v
                    for k, v in sorted(trial.intermediate_values.items())
                }
            trials.append(run)
    trials.sort(key=lambda run: run['run'])
    pruned = [t for t in trials if t['state'] == 'pruned']
    # A pruned run's minutes to its end, at the pace it trained.
    to_end = sum(t['minutes'] * t['epochs'] / max(t[EPOCHS_TRAINED], 1)
                 for t in pruned)
    statistics = domain_statistics(definition)
    left_out = sweep.left_out()
    return dict(
        command=reproducer(definition, storage, reports),
        sweep={
            k: v
            for k, v in definition.items() if k != 'name'
        },
        study=definition['name'],
        reports={
            k: v
            for k, v in reports.items() if v
        },
        label_seed_per_training_seed=bool(
            definition.get('label_seed_per_seed')),
        **({
            'domain_statistics': statistics
        } if statistics is not None else {}),
        **({
            'left_out': left_out
        } if left_out else {}),
        training_minutes=sum(t.get('minutes', 0) for t in trials),
        pruning=dict(
            trials=len(pruned),
            minutes=sum(t['minutes'] for t in pruned),
            minutes_to_the_end=to_end,
            **compare_choices(sweep)),
        results=results,
        trials=trials)


def _ledger_runs(ledger: dict) -> list:
    """Every run a ledger holds: its ``runs``, its complete ``trials`` (a
    sweep's own record) and its rows' runs."""
    runs = list(ledger.get('runs', {}).values()) + [
        t for t in ledger.get('trials', [])
        if not isinstance(t, dict) or t.get('state') == 'complete'
    ]
    for by_setting in ledger['results'].values():
        for by_name in by_setting.values():
            for row in by_name.values():
                runs += row['runs']
    return runs


def check_ledger(path: str, ledger: dict) -> None:
    """Refuse a ledger that is not of the shape the earlier tool and
    :func:`export` write, naming what is wrong in one line: ``results``
    (mode -> setting -> name -> row with ``runs``), ``runs`` (a mapping),
    ``trials`` (a list), each run with its ``config``, ``mode``,
    ``setting``, integer ``seed``, a finite ``val mAP`` and the test
    metrics, a ``sweep`` with its ``rules``, and a ``command`` that
    parses.

    Raises:
        LedgerError: the first problem found.
    """

    def refuse(problem: str) -> NoReturn:
        raise LedgerError(f'{path}: not a ledger of tools/benchmark.py: '
                          f'{problem}')

    results = ledger.get('results')
    rows = [
        row for by_setting in (
            results.values() if isinstance(results, dict) else [None])
        for by_name in (
            by_setting.values() if isinstance(by_setting, dict) else [None])
        for row in (by_name.values() if isinstance(by_name, dict) else [None])
    ]
    if not isinstance(results, dict) or not all(
            isinstance(row, dict) and isinstance(row.get('runs'), list)
            for row in rows if row is not None) or None in rows:
        refuse('`results` must map mode -> setting -> method -> a row with '
               'its `runs` (a list)')
    if not isinstance(ledger.get('runs', {}), dict):
        refuse('`runs` must map run names to runs')
    if not isinstance(ledger.get('trials', []), list):
        refuse('`trials` must be a list')
    if 'sweep' in ledger and not (
            isinstance(ledger['sweep'], dict)
            and isinstance(ledger['sweep'].get('rules'), dict)
            and {'seeds', 'lrs', 'tune'} <= set(ledger['sweep']['rules'])):
        refuse('its `sweep` has no `rules` with seeds, lrs and tune')
    for index, run in enumerate(_ledger_runs(ledger)):
        where = f'run {index}'
        if not isinstance(run, dict):
            refuse(f'{where} is not an object')
        where = f'run {index} ({run.get("config")}, seed {run.get("seed")})'
        missing = [
            k for k in ('config', 'mode', 'setting', 'seed', VAL_MAP) + COLUMNS
            if k not in run
        ]
        if missing:
            refuse(f'{where} has no {", ".join(missing)}')
        if not isinstance(run['seed'], int) or isinstance(run['seed'], bool):
            refuse(f'{where}: `seed` must be an integer')
        value = run[VAL_MAP]
        if value is not None and (not isinstance(value, numbers.Real)
                                  or isinstance(value, bool)
                                  or not math.isfinite(value)):
            refuse(f'{where}: `val mAP` must be a finite number, got '
                   f'{value!r}')
        if not all(
                isinstance(run[k], str)
                for k in ('config', 'mode', 'setting')):
            refuse(f'{where}: config, mode and setting must be text')
        if not isinstance(run.get('point', {}), dict):
            refuse(f'{where}: `point` must be an object')
    command = ledger.get('command', '')
    try:
        words = shlex.split(command) if isinstance(command, str) else None
    except ValueError as error:
        words = None
        command = f'{command!r} ({error})'
    if words is None:
        refuse(f'its `command` does not parse: {command}')
    if '--cfg-options' in words:
        for word in words[words.index('--cfg-options') + 1:]:
            if word.startswith('--'):
                break
            if '=' not in word:
                refuse(f'its command\'s --cfg-options entry {word!r} is not '
                       'KEY=VALUE')


def definition_from_ledger(path: str, ledger: dict) -> dict:
    """A sweep definition for an earlier tool's ledger: its configs,
    settings and modes (from its rows and runs), its seeds, learning
    rates, domain and ``--cfg-options``."""
    check_ledger(path, ledger)
    runs = _ledger_runs(ledger)
    rows = [(mode, setting, name, row)
            for mode, by_setting in ledger['results'].items()
            for setting, by_name in by_setting.items()
            for name, row in by_name.items()]
    configs = []
    for run in runs:
        if 'config' not in run:
            raise LedgerError(f'{path}: a run names no config')
        config = repo_path(run['config'])
        if config not in configs:
            configs.append(config)
    tuning = dict(ledger.get('tuning') or {})
    if 'sweep' in ledger:  # a sweep's own record
        rules = ledger['sweep']['rules']
        tuning.update(
            seeds=rules['seeds'],
            lrs=rules['lrs'],
            domain=ledger['sweep'].get('domain'))
    seeds = sorted({run['seed'] for run in runs})
    words = shlex.split(ledger.get('command', ''))
    options = dict((ledger.get('sweep') or {}).get('cfg_options') or {})
    if '--cfg-options' in words:
        for word in words[words.index('--cfg-options') + 1:]:
            if word.startswith('--'):
                break
            key, value = word.split('=', 1)
            options[key] = value
    return dict(
        configs=configs,
        settings=list(dict.fromkeys(setting for _, setting, _, _ in rows)),
        modes=list(dict.fromkeys(mode for mode, _, _, _ in rows)),
        seeds=tuning.get('seeds', seeds),
        lrs=tuning.get('lrs'),
        tune=ledger['sweep']['rules']['tune']
        if 'sweep' in ledger else 'runs' in ledger,
        label_seed_per_seed=bool((ledger.get('sweep')
                                  or {}).get('label_seed_per_seed')),
        domain=tuning.get('domain'),
        cfg_options=options)


def _imported_trials(ledger: dict) -> list:
    """The trials of a sweep's own record that an import keeps: the
    finished ones, and the pruned ones of a setting that may be pruned. A
    setting whose tuning is never pruned
    (:data:`~mmlml.benchmark.training.pruning.UNPRUNED_SETTINGS`) loses
    its pruned runs, which the sweep then trains to their end: a record
    made before that rule is corrected by its import."""
    return [
        t for t in ledger['trials'] if t.get('state') == 'complete' or (t.get(
            'state') == 'pruned' and t.get('setting') not in UNPRUNED_SETTINGS)
    ]


def import_ledger(sweep: Sweep, path: str, ledger: dict) -> int:
    """Record every run of the ledger as a trial of ``sweep`` (defined
    already): a finished run as completed, a pruned one of a sweep's
    record as pruned, with its validation mAP per epoch
    (:func:`_imported_trials`); returns how many. A sweep that holds
    trials already is refused: a ledger is imported once, into a new
    sweep."""
    from optuna.trial import TrialState
    check_ledger(path, ledger)
    if any(sweep.trials(group) for group in sweep.groups()):
        raise SweepError(f'{sweep.spec}: sweep {sweep.name!r} holds trials '
                         'already; import a ledger into a new --study')
    if 'trials' in ledger:  # a sweep's own record (export)
        runs = _imported_trials(ledger)
    elif 'runs' in ledger:
        runs = list(ledger['runs'].values())
    else:  # a fixed recipe: its rows' runs
        runs = [
            run for by_setting in ledger['results'].values()
            for by_name in by_setting.values() for row in by_name.values()
            for run in row['runs']
        ]
    groups = {(g.mode, g.setting, g.config): g for g in sweep.groups()}
    count = 0
    for run in runs:
        key = (run['mode'], run['setting'], repo_path(run['config']))
        if key not in groups:
            raise LedgerError(f'{path}: a run of {key} is outside the sweep')
        group = groups[key]
        point = run.get('point')
        if point is None:  # a fixed recipe: the config's own point
            facts = sweep.config_facts(group)
            point = {EPOCHS_KEY: facts['epochs'], LR_KEY: facts['lr']}
        pruned = run.get('state') == 'pruned'
        summary = {
            k: v
            for k, v in run.items()
            if k not in ('point', 'seed', 'cached', 'state', PER_EPOCH)
        }
        summary['config'] = group.config
        summary.setdefault(EPOCHS_TRAINED, summary.get('epochs'))
        summary['imported from'] = osp.basename(path)
        sweep.add_trial(
            group,
            point,
            run['seed'],
            state=TrialState.PRUNED if pruned else TrialState.COMPLETE,
            value=None if pruned else
            run[VAL_MAP] if run.get(VAL_MAP) is not None else 0.0,
            summary=summary,
            intermediate={
                int(epoch): value
                for epoch, value in (run.get(PER_EPOCH) or {}).items()
            })
        count += 1
    return count
