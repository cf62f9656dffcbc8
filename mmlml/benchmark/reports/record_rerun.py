"""``tools/benchmark.py --check-docs --rerun N``: N runs of the committed
records, chosen at random, trained again from what their record stores,
each of which must reproduce its validation and test mAP to the printed
digit (two decimals).

What a record stores of a run is enough to train it again: its config,
mode, setting, seed and point (``trials`` of the record), and the sweep's
domain, overrides and label draw (``sweep``). The run is trained warm in
this process, as a sweep's worker trains it
(:func:`~mmlml.benchmark.sweep.trial_process.run_options` and
:func:`~mmlml.benchmark.sweep.trial_process.train_warm`), in a temporary
folder. The runs that can be drawn are the finished, unpruned ones (a
pruned run stopped at an epoch a rerun would not stop at) of one-stage
methods (a second stage trains on its first stage's labels, which no
record keeps); a record whose configs changed since it was written is
still drawn from, and its run then fails to reproduce, as it should; a
record known not to reproduce any more (:data:`STALE_RECORDS`, with what
a rerun measured) is named and left out.

This is what a consistent fabrication cannot pass: a run raised in its
trial, its row and the grid, the reports regenerated, still trains to its
true numbers.
"""
import json
import math
import os.path as osp
import random
import tempfile
import time
from typing import Callable, Dict, List, NamedTuple, Optional, Sequence

from mmlml.benchmark.sweep.settings import (abs_path, dataset_modes,
                                            prepare_domain, run_domain)
from mmlml.benchmark.sweep.sweep import Group
from mmlml.benchmark.sweep.trial_process import (TrialFailed, run_options,
                                                 train_warm)
from mmlml.benchmark.training.trial_record import POINT, RUN, SEED, VAL_MAP

#: The records whose runs no longer train to their printed numbers with
#: this code (the records made before the held-out photo domain, on
#: 2026-11-29 or earlier): a run drawn from each in turn,
#: ``rerun_records([record], ROOT, 1, seed=7)``, trained to another
#: validation or test mAP. Their tables stay as what was measured then;
#: ``--rerun`` draws from the other records and names these.
STALE_RECORDS = {
    'docs/results/benchmark.json':
    'hill, single positive, seed 2: test mAP 85.86 on a rerun, 85.80',
    'docs/results/benchmark_digits.json':
    'll_r, single positive, seed 1: validation mAP 66.32 on a rerun, '
    '61.13',
    'docs/results/benchmark_photo.json':
    'boostlu_an, r = 0.8, seed 2: validation mAP 70.42 on a rerun, 69.81',
    'docs/results/benchmark_photo_finetune.json':
    'role, single positive, seed 0: validation mAP 75.72 on a rerun, '
    '75.40',
    'docs/results/benchmark_synthetic.json':
    'opml_sp, r = 0.8, seed 2: validation mAP 88.75 on a rerun, 88.92',
    'docs/results/benchmark_synthetic_observed_val.json':
    'an, single positive, seed 0: validation mAP 56.27 on a rerun, 56.58',
}

__all__ = [
    'STALE_RECORDS', 'RecordedRun', 'rerunnable_runs', 'choose_runs', 'rerun',
    'rerun_records'
]


class RecordedRun(NamedTuple):
    """A run of a committed record and the sweep definition it ran in."""
    record: str  # the record's path, relative to the repository
    definition: dict  # the record's ``sweep``
    trial: dict  # the record's entry in ``trials``

    def label(self) -> str:
        return f'{self.record}: {self.trial[RUN]}'


def rerunnable_runs(records: Sequence[str], root: str) -> List[RecordedRun]:
    """The runs of ``records`` (paths relative to ``root``) that a rerun
    can train again (see the module docstring), in record order."""
    runs = []
    for record in records:
        with open(osp.join(root, record)) as f:
            found = json.load(f)
        definition = found.get('sweep')
        if not isinstance(definition, dict):
            continue  # an imported ledger: no definition to run it in
        first_stages: Dict[str, bool] = {}
        for trial in found.get('trials') or []:
            if trial.get('state') != 'complete' or not isinstance(
                    trial.get(POINT), dict) or 'config' not in trial:
                continue
            config = trial['config']
            if config not in first_stages:
                first_stages[config] = dataset_modes(
                    abs_path(config), 'own',
                    definition.get('domain'))[2] is not None
            if not first_stages[config]:
                runs.append(RecordedRun(record, definition, trial))
    return runs


def choose_runs(runs: Sequence[RecordedRun], count: int,
                seed: int) -> List[RecordedRun]:
    """``count`` of ``runs`` drawn at random with ``seed`` (all of them
    when there are fewer)."""
    return random.Random(seed).sample(list(runs), min(count, len(runs)))


def _printed(value: Optional[float]) -> str:
    return 'nan' if value is None or math.isnan(value) else f'{value:.2f}'


def rerun(run: RecordedRun, threads: int = 1) -> List[str]:
    """Train ``run`` again; one line per number that does not reproduce
    (its validation and test mAP, as printed), none when both do."""
    trial, definition = run.trial, run.definition
    group = Group(trial['mode'], trial['setting'], trial['config'], None)
    options = run_options(definition, group, trial[POINT], trial[SEED])
    domain = run_domain(definition.get('domain'), group.mode)
    with tempfile.TemporaryDirectory(prefix='mmlml-rerun-') as work:
        try:
            summary = train_warm(
                abs_path(group.config), work, trial[SEED], options, None,
                domain, osp.join(work, 'log.txt'), threads)
        except TrialFailed as error:
            return [f'{run.label()}: the rerun failed: {error}']
    problems = []
    for key in (VAL_MAP, 'mAP'):  # the test's mAP: COLUMNS[0]
        recorded, again = _printed(trial.get(key)), _printed(summary.get(key))
        if recorded != again:
            problems.append(f'{run.label()}: {key} {again} on a rerun, '
                            f'{recorded} in the record')
    return problems


def rerun_records(records: Sequence[str],
                  root: str,
                  count: int,
                  seed: Optional[int] = None,
                  say: Callable[[str], None] = print) -> List[str]:
    """Rerun ``count`` runs drawn from ``records`` (``seed``: the draw's;
    None: from the clock, said so that a failure can be drawn again);
    the problems of all of them."""
    seed = int(time.time()) if seed is None else seed
    stale = [r for r in records if r in STALE_RECORDS]
    if stale:
        say('[check-docs] not drawn from, their runs no longer reproduce '
            'with this code: ' + '; '.join(f'{r} ({STALE_RECORDS[r]})'
                                           for r in stale))
    chosen = choose_runs(
        rerunnable_runs([r for r in records if r not in STALE_RECORDS], root),
        count, seed)
    say(f'[check-docs] rerunning {len(chosen)} recorded runs (draw '
        f'--rerun-seed {seed})')
    for domain in dict.fromkeys(
            run_domain(run.definition.get('domain'), run.trial['mode'])
            for run in chosen):
        prepare_domain(domain, say=lambda line: say(f'[check-docs] {line}'))
    problems = []
    for run in chosen:
        start = time.time()
        found = rerun(run)
        verdict = 'reproduces' if not found else 'does NOT reproduce'
        say(f'[check-docs] {run.label()} {verdict} '
            f'({time.time() - start:.0f} s)')
        problems += found
    return problems
