"""A trial of a benchmark sweep as its storage holds it (Optuna's user
attributes of the trial): every field declared once (:class:`TrialRecord`),
written by :func:`write_trial` and read back by :func:`read_trial`, which
checks each field by its declaration on every read.

The fields' names are the keys of the sweep's JSON record too (the
committed records of ``docs/results/`` keep them), spelled once here as
the constants below; the modules that read a trial or a run use the
constants, never the strings.

What a trial holds is data: its ``point`` sets only the sweep's search keys
(the learning rate, the epochs, the config's declared ``tuning`` key) to
values of their kind, its ``seed`` is an integer, and its folder
(``run``) is the one its point and seed make inside the work directory.
Nothing else of a trial is ever joined to a path: a first stage's folder
and checkpoint are derived from the definition (:mod:`.worker`).
"""
import math
import numbers
import os
import os.path as osp
from typing import Any, Callable, Dict, Mapping, Optional, Tuple

from mmlml.benchmark.training.config_keys import EPOCHS_KEY, LR_KEY
from mmlml.utils.hyperparameters import (Hyperparameter, Integer, Real,
                                         check_hyperparameters)

__all__ = [
    'TrialError', 'TrialRecord', 'read_trial', 'write_trial', 'POINT', 'SEED',
    'RUN', 'VAL_MAP', 'BEST_EPOCH', 'EPOCHS', 'EPOCHS_TRAINED', 'MINUTES',
    'BEST_CHECKPOINT', 'PRUNED_AT', 'PER_EPOCH', 'FIRST_STAGE_RUN',
    'FIRST_STAGE_REBUILT', 'RETRY_OF', 'FAILURE', 'HEARTBEAT', 'WORKER',
    'LABEL_SEED'
]

# The fields (user attributes) of a trial.
POINT, SEED, RUN = 'point', 'seed', 'run'
#: The best validation mAP of the run (the trial's value once complete).
VAL_MAP = 'val mAP'
#: The epoch of the best validation mAP, and the epochs of the schedule.
BEST_EPOCH, EPOCHS = 'best epoch', 'epochs'
#: The epochs the run trained (fewer than ``EPOCHS`` when it was pruned).
EPOCHS_TRAINED = 'epochs trained'
#: The run's minutes.
MINUTES = 'minutes'
#: The best checkpoint as the trainer named it (shown, never opened: a
#: first stage's checkpoint is found in its derived folder).
BEST_CHECKPOINT = 'best checkpoint'
#: The epoch at which the pruning hook stopped the run.
PRUNED_AT = 'pruned at epoch'
#: A record's validation mAP of each epoch a run reported (a pruned run's
#: rungs).
PER_EPOCH = 'val mAP per epoch'
#: A second stage's first stage run (its folder, as the worker derived it).
FIRST_STAGE_RUN = 'first stage run'
#: The validation mAP of a first stage run trained again on this machine.
FIRST_STAGE_REBUILT = 'first stage rebuilt, val mAP'
#: The run a queued trial repeats (its worker was lost).
RETRY_OF = 'retry of'
#: Why the trial failed.
FAILURE = 'failure'
#: When the worker last showed it was alive, and which worker it is.
HEARTBEAT, WORKER = 'heartbeat', 'worker'
#: The seed of a run's partial labels, where drawn per training seed.
LABEL_SEED = 'label seed'


class TrialError(ValueError):
    """A stored trial that is not data of its sweep (one line)."""


def _number(value: Any, integer: bool = False) -> bool:
    kind = numbers.Integral if integer else numbers.Real
    return isinstance(value, kind) and not isinstance(
        value, bool) and (integer or math.isfinite(value))


class Point(Hyperparameter):
    """A point of the sweep's search: the learning rate (a positive
    number), the epochs (a positive integer) and the config's ``tuning``
    key (one of its declared values); nothing else (the search of the
    trial's config is given at the check, :func:`read_trial`)."""

    tuning: Optional[Tuple[str, list]] = None

    def check(self, name: str, value: Any) -> dict:
        if not isinstance(value, dict):
            raise ValueError(f'{name} must be a mapping of config keys, got '
                             f'{value!r}')
        key, values = self.tuning or (None, ())
        for item, setting in value.items():
            if item == LR_KEY:
                good = _number(setting) and setting > 0
            elif item == EPOCHS_KEY:
                good = _number(setting, integer=True) and setting >= 1
            else:
                good = item == key and any(setting == v and isinstance(
                    setting, bool) == isinstance(v, bool) for v in values)
            if not good:
                raise ValueError(
                    f'{name} sets {item}={setting!r}, outside the sweep\'s '
                    'search (the learning rate, the epochs'
                    f'{f", {key} in {values}" if key else ""})')
        return dict(value)


class Measure(Real):
    """A measured number: finite, or NaN (a run that diverged)."""

    def check(self, name: str, value: Any) -> float:
        if isinstance(value, float) and math.isnan(value):
            return value
        return super().check(name, value)


class TrialRecord(dict):
    """A trial's fields (its user attributes), each checked by its
    declaration (:func:`read_trial`): ``point``, ``seed`` and ``run``
    always, the summary's numbers once the run finished; the other fields
    (the test metrics, the run's setting, mode and config, a failure) are
    only shown, never joined to a path or passed to a command."""

    hyperparameters: Dict[str, Hyperparameter] = {
        POINT: Point(),
        SEED: Integer(low=0, high=2**31 - 1),
        RUN: Hyperparameter(),  # derived and compared: read_trial
        VAL_MAP: Measure(None, optional=True),
        BEST_EPOCH: Integer(None, optional=True),
        EPOCHS: Integer(None, optional=True),
        EPOCHS_TRAINED: Integer(None, optional=True),
        MINUTES: Measure(None, optional=True),
        PRUNED_AT: Integer(None, optional=True),
        HEARTBEAT: Real(None, optional=True),
        LABEL_SEED: Integer(None, optional=True),
    }


def read_trial(attrs: Mapping[str, Any],
               make_run: Callable[[dict, int], str],
               work_dir: str,
               tuning: Optional[Tuple[str, list]] = None) -> TrialRecord:
    """A stored trial, checked: its point and seed by their declarations,
    its folder the one they make (``make_run``) inside ``work_dir``, the
    other declared fields of their kinds.

    Args:
        attrs: The trial's user attributes.
        make_run: The folder a point and seed make
            (:func:`.sweep.run_id` of the trial's group).
        work_dir: The sweep's work directory (absolute).
        tuning: The config's ``(key, values)`` of ``tuning``.

    Raises:
        TrialError: one line naming the field.
    """
    if not isinstance(attrs, Mapping):
        raise TrialError('its fields are not a mapping')
    declared = dict(TrialRecord.hyperparameters)
    declared[POINT] = Point(tuning=tuning)
    present = {k: v for k, v in attrs.items() if k in declared and k != RUN}
    try:
        checked = check_hyperparameters(
            {k: declared[k]
             for k in present} | {k: declared[k]
                                  for k in (POINT, SEED)}, present,
            'the trial')
    except (TypeError, ValueError) as error:
        raise TrialError(f'its {error}') from None
    run = make_run(checked[POINT], checked[SEED])
    stored = attrs.get(RUN)
    if stored != run or osp.isabs(run) or not _inside(
            osp.join(work_dir, run), work_dir):
        raise TrialError(f'its folder {stored!r} is not the one its point '
                         f'and seed make ({run!r}) inside the work directory')
    record = TrialRecord(attrs)
    record.update((k, v) for k, v in checked.items() if v is not None)
    return record


def write_trial(point: Mapping[str, Any],
                seed: int,
                run: str,
                summary: Optional[Mapping[str, Any]] = None) -> dict:
    """The user attributes of a trial: ``summary`` (fields of
    :class:`TrialRecord`; an imported run's own point, seed and folder are
    replaced) with its point, seed and folder, as JSON data."""
    import json
    attrs = dict(summary or {})
    attrs.update({POINT: dict(point), SEED: seed, RUN: run})
    return json.loads(json.dumps(attrs))


def _inside(path: str, folder: str) -> bool:
    path, folder = osp.realpath(path), osp.realpath(folder)
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


#: The reported numbers, in table order. CF1 is given twice: MMPretrain's
#: ``MultiLabelMetric`` averages per-class F1 scores ("CF1 (mean F1)"), while
#: the multi-label papers define ``CF1 = 2 CP CR / (CP + CR)`` ("CF1
#: (paper)"), which ``MultiLabelF1Metric`` reports.
COLUMNS = ('mAP', 'CP', 'CR', 'CF1 (mean F1)', 'CF1 (paper)', 'OP', 'OR',
           'OF1')

_METRIC_KEYS = {
    'mAP': 'mAP',
    'CP': 'precision',
    'CR': 'recall',
    'CF1 (mean F1)': 'f1-score',
    'CF1 (paper)': 'CF1',
    'OP': 'precision_micro',
    'OR': 'recall_micro',
    'OF1': 'f1-score_micro',
}


def summarise(metrics: dict, prefix: str = 'multi-label') -> dict:
    """Pick :data:`COLUMNS` out of the metrics of an evaluator list made of
    ``AveragePrecision``, ``MultiLabelMetric`` (macro and micro) and
    ``MultiLabelF1Metric`` (the demo configs' ``test_evaluator``)."""
    missing = [
        f'{prefix}/{key}' for key in _METRIC_KEYS.values()
        if f'{prefix}/{key}' not in metrics
    ]
    if missing:
        raise KeyError(
            f'The test metrics lack {missing}: the evaluator must list '
            "AveragePrecision, MultiLabelMetric (average='macro' and "
            "'micro') and MultiLabelF1Metric; got {sorted(metrics)}.")
    return {
        name: float(metrics[f'{prefix}/{key}'])
        for name, key in _METRIC_KEYS.items()
    }
