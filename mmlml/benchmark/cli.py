"""The command-line options that the tools running a sweep share
(``tools/benchmark.py`` and ``tools/select_method.py``): the settings of
every run and ``--force`` (as every tool declares them, :mod:`mmlml.cli`),
the search rules, pruning, and how workers start."""
import argparse
import signal
from typing import List, Optional, Tuple

from mmengine.config import DictAction

from mmlml.benchmark.sweep.executors import (EXECUTORS, start_workers,
                                             stop_workers, wait_workers)
from mmlml.benchmark.sweep.progress import SweepProgress
from mmlml.benchmark.sweep.search import SearchRules
from mmlml.benchmark.sweep.sweep import Sweep
from mmlml.benchmark.training.pruning import (add_pruning_arguments,
                                              spec_of_options)
from mmlml.cli import add_cfg_options_argument, add_force_argument

__all__ = [
    'add_run_arguments', 'add_search_arguments', 'add_worker_arguments',
    'search_rules', 'pruning', 'run_workers', 'interrupted', 'stopped'
]


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
    add_pruning_arguments(parser)


def search_rules(args, **overrides) -> SearchRules:
    """The :class:`SearchRules` of the options (``overrides`` win)."""
    values = dict(max_doublings=args.max_doublings, seeds=tuple(args.seeds))
    for key in ('lrs', 'lr_bounds'):
        if getattr(args, key) is not None:
            values[key] = tuple(getattr(args, key))
    values.update(overrides)
    return SearchRules(**values)


def pruning(args) -> Optional[dict]:
    """The sweep's ``prune`` spec of the options
    (:func:`~.pruning.spec_of_options`; a ``ValueError`` names an option
    outside its bound)."""
    return spec_of_options(args)


def add_worker_arguments(parser: argparse.ArgumentParser,
                         workers: int = 2) -> None:
    """``--workers``, ``--threads``, ``--executor``, ``--slurm`` and
    ``--trial-process``."""
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
    parser.add_argument(
        '--trial-process',
        choices=('warm', 'subprocess'),
        default='warm',
        help='where each trial trains: in its worker\'s process, the stack '
        'imported once (warm), or in a process of its own (subprocess: '
        'isolation; always so with --gpus-per-trial above 1); default: warm')


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
        trusted=trusted,
        trial_process=getattr(args, 'trial_process', 'warm'))
    progress = None
    if args.executor != 'local':  # their output goes to their log files
        progress = SweepProgress(
            Sweep(storage, study, trusted=trusted), 'benchmark').sweep_line

    previous = signal.signal(signal.SIGTERM, interrupted)
    try:
        return wait_workers(handles, progress)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the workers stop too
        stop_workers(handles)
        raise
    finally:
        signal.signal(signal.SIGTERM, previous)


def interrupted(signum, frame):
    """A SIGTERM handler: stop as Ctrl-C does (``KeyboardInterrupt``,
    naming the signal), so that the tool stops its workers and ends with
    :func:`stopped`'s line."""
    raise KeyboardInterrupt(f'signal {signum}')


def stopped(tool: str, stop: KeyboardInterrupt) -> SystemExit:
    """The end of a sweep tool stopped by Ctrl-C or SIGTERM
    (:func:`interrupted`): one line on stderr, and the exit status of the
    signal (128 + its number), instead of Python's traceback."""
    import sys
    signum = signal.SIGTERM if str(stop) == f'signal {signal.SIGTERM}' \
        else signal.SIGINT
    print(
        f'[{tool}] stopped by {signal.Signals(signum).name}: the runs in '
        'progress are queued again; the same command (or --join) goes on',
        file=sys.stderr,
        flush=True)
    return SystemExit(128 + signum)
