"""The command-line options that the tools running a sweep share
(``tools/benchmark.py`` and ``tools/select_method.py``): the settings of
every run and ``--force`` (as every tool declares them, :mod:`mmlml.cli`),
the search rules, pruning, and how workers start."""
import argparse
import signal
from typing import List, Optional, Tuple

from mmengine.config import DictAction

from mmlml.cli import add_cfg_options_argument, add_force_argument
from .executors import EXECUTORS, start_workers, stop_workers, wait_workers
from .progress import SweepProgress
from .search import SearchRules
from .sweep import Sweep

__all__ = [
    'PRUNING', 'add_run_arguments', 'add_search_arguments',
    'add_worker_arguments', 'search_rules', 'pruning', 'pruning_options',
    'run_workers'
]

#: The pruning rule of the sweeps: successive halving
#: (:class:`~.same_schedule_successive_halving_pruner.
#: SameScheduleSuccessiveHalvingPruner`, through
#: :class:`~.optuna_pruning_hook.OptunaPruningHook`); each run's first rung
#: is the epoch after its method's warm-up.
PRUNING = dict(reduction_factor=3, min_trials=2)


def add_run_arguments(parser: argparse.ArgumentParser,
                      cfg_options_help: str) -> None:
    """``--cfg-options`` (settings of every run of the sweep;
    ``cfg_options_help`` says where else they apply) and ``--force``."""
    add_cfg_options_argument(parser, cfg_options_help)
    add_force_argument(parser)


def add_search_arguments(parser: argparse.ArgumentParser,
                         seeds: Optional[list] = None,
                         lrs_help: Optional[tuple] = None) -> None:
    """``--seeds``, ``--lrs``, ``--lr-bounds``, ``--max-doublings`` and
    the pruning options, with :class:`SearchRules`' defaults (``seeds``: the
    default of ``--seeds``, None to let the caller fill it in;
    ``lrs_help``: the defaults of ``--lrs`` and ``--lr-bounds`` in words,
    where the caller fills them in from the config: their values are then
    None)."""
    rules = SearchRules()
    lr_defaults: Tuple[Optional[List[float]], Optional[List[float]]]
    if lrs_help is None:
        lr_defaults = (list(rules.lrs), list(rules.lr_bounds))
        lrs_help = ('%(default)s', '%(default)s')
    else:
        lr_defaults = (None, None)
    parser.add_argument(
        '--seeds',
        nargs='+',
        type=int,
        default=seeds,
        help='training seeds; the first tunes (default: '
        f'{" ".join(map(str, rules.seeds))})')
    parser.add_argument(
        '--lrs',
        nargs='+',
        type=float,
        default=lr_defaults[0],
        help=f'the learning rates tried first (default: {lrs_help[0]})')
    parser.add_argument(
        '--lr-bounds',
        nargs=2,
        type=float,
        default=lr_defaults[1],
        metavar=('LOW', 'HIGH'),
        help='how far the rates may extend past an edge of those tried '
        f'(default: {lrs_help[1]})')
    parser.add_argument(
        '--max-doublings',
        type=int,
        default=rules.max_doublings,
        help='how many times the epochs may double while the best '
        'validation epoch is the last (default: %(default)s)')
    parser.add_argument(
        '--no-prune',
        action='store_true',
        help='run every tuning run to its end')
    parser.add_argument(
        '--prune-eta',
        type=int,
        default=PRUNING['reduction_factor'],
        help='successive halving\'s reduction factor: at each rung (the '
        'epoch after the method\'s warm-up, then that times ETA, ...) one '
        'tuning run in ETA of the same schedule goes on (default: '
        '%(default)s)')
    parser.add_argument(
        '--prune-min-trials',
        type=int,
        default=PRUNING['min_trials'],
        help='how many other runs of the schedule must have reached a rung '
        'before a run is stopped there (default: %(default)s)')


def search_rules(args, **overrides) -> SearchRules:
    """The :class:`SearchRules` of the options (``overrides`` win)."""
    values = dict(max_doublings=args.max_doublings, seeds=tuple(args.seeds))
    for key in ('lrs', 'lr_bounds'):
        if getattr(args, key) is not None:
            values[key] = tuple(getattr(args, key))
    values.update(overrides)
    return SearchRules(**values)


def pruning(args) -> Optional[dict]:
    """The sweep's ``prune`` setting of the options."""
    if args.no_prune:
        return None
    if args.prune_eta < 2 or args.prune_min_trials < 1:
        raise ValueError('--prune-eta must be >= 2 and --prune-min-trials '
                         f'>= 1; got {args.prune_eta}, '
                         f'{args.prune_min_trials}')
    return dict(
        reduction_factor=args.prune_eta, min_trials=args.prune_min_trials)


def pruning_options(definition: dict) -> List[str]:
    """The options of a sweep's definition that :func:`pruning` and
    ``--replay-unpruned`` read, for the command that reproduces it."""
    prune = definition.get('prune')
    parts = [] if prune else ['--no-prune']
    for key, option in (('reduction_factor', '--prune-eta'),
                        ('min_trials', '--prune-min-trials')):
        if prune and prune.get(key) != PRUNING[key]:
            parts += [option, str(prune.get(key))]
    if definition.get('replay_unpruned'):
        parts += ['--replay-unpruned', str(definition['replay_unpruned'])]
    return parts


def add_worker_arguments(parser: argparse.ArgumentParser,
                         workers: int = 2) -> None:
    """``--workers``, ``--threads``, ``--executor`` and ``--slurm``."""
    parser.add_argument(
        '--workers',
        type=int,
        default=workers,
        help=f'workers to start (default: {workers}; 0: start none, e.g. '
        'to write the reports of the sweep so far)')
    parser.add_argument(
        '--threads',
        type=int,
        default=1,
        help='torch threads of each run (default: 1)')
    parser.add_argument(
        '--executor',
        choices=EXECUTORS,
        default='local',
        help='local processes, Slurm jobs (submitit), or submitit\'s local '
        'executor (default: local)')
    parser.add_argument(
        '--slurm',
        nargs='+',
        action=DictAction,
        default={},
        help='submitit parameters of each worker job, e.g. '
        'slurm_partition=gpu gpus_per_node=1 cpus_per_task=8 '
        'timeout_min=1440')


def run_workers(args, storage: str, study: str, folder: str,
                trusted=()) -> list:
    """Start ``--workers`` workers of the sweep as the options say and
    wait for them (stopping them on Ctrl-C or SIGTERM: each queues its
    run again);
    returns the errors they report. ``trusted``: the configs the command
    named (:func:`~.executors.start_workers`)."""
    handles = start_workers(
        storage,
        study,
        args.workers,
        args.executor,
        folder=folder,
        slurm=args.slurm,
        trusted=trusted)
    progress = None
    if args.executor != 'local':  # their output goes to their log files
        progress = SweepProgress(
            Sweep(storage, study, trusted=trusted), 'benchmark').sweep_line

    def interrupted(signum, frame):
        raise KeyboardInterrupt(f'signal {signum}')

    previous = signal.signal(signal.SIGTERM, interrupted)
    try:
        return wait_workers(handles, progress)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the workers stop too
        stop_workers(handles)
        raise
    finally:
        signal.signal(signal.SIGTERM, previous)
