"""How one training of a sweep's trial runs: warm, in the worker's own
process (:class:`~.process_globals.ProcessGlobals` around it), or as a
process of its own (``python -m mmlml.apis.trial_training``,
or ``$MMLML_SWEEP_TRAINER``, the test suite's stand-in), with the
overrides of its mode, point and setting; its summary.
"""
import contextlib
import glob
import json
import os
import os.path as osp
import signal
import subprocess
import sys
import traceback
from typing import Optional

from mmlml.benchmark.sweep.process_globals import ProcessGlobals
from mmlml.benchmark.sweep.settings import (dataset_modes, format_options,
                                            label_seed, mode_options,
                                            run_domain, setting_options)
from mmlml.benchmark.sweep.stored_definition import (DOMAIN_VARIABLE,
                                                     TRAINER_VARIABLE,
                                                     trainer_path)
from mmlml.benchmark.sweep.sweep import Group, Sweep, abs_path
from mmlml.compat.stack_repairs import CONFIG_TEXT_VARIABLE

__all__ = [
    'TrialFailed', 'TRIAL_PROCESSES', 'run_command', 'run_options',
    'train_warm', 'train_run', 'best_checkpoint'
]

#: Where a trial trains: in the worker's process, or in one of its own.
TRIAL_PROCESSES = ('warm', 'subprocess')


class TrialFailed(RuntimeError):
    """A training process of a trial failed."""


def _die_with_parent() -> None:
    """In a training process: be killed when the worker dies, even by
    SIGKILL (Linux's parent-death signal), so that no orphan trains in a
    run folder that the trial, queued again, trains anew."""
    import ctypes
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: no such guard
        pass


def run_command(cmd: list,
                log: str,
                threads: int,
                domain: Optional[str] = None) -> None:
    """Run ``cmd`` with its output appended to ``log``; ``domain``: the
    demo configs' domain in its environment (never in this process's)."""
    env = dict(os.environ)
    if domain is not None:
        env[DOMAIN_VARIABLE] = domain
    for var in ('OMP_NUM_THREADS', 'MKL_NUM_THREADS'):
        env[var] = str(threads)
    # Nobody reads a run folder's config: yapf would cost a second or more
    # of a ten-second run.
    env[CONFIG_TEXT_VARIABLE] = 'unformatted'
    # In the worker's folder, where the configs' relative paths resolve.
    with open(log, 'a') as f:
        f.write('$ ' + ' '.join(cmd) + '\n')
        f.flush()
        result = subprocess.run(
            cmd,
            stdout=f,
            stderr=subprocess.STDOUT,
            env=env,
            preexec_fn=_die_with_parent)
    if result.returncode:
        program = cmd[2] if cmd[1] == '-m' else osp.basename(cmd[1])
        raise TrialFailed(f'{program} exited with '
                          f'{result.returncode}, see {log}')


def run_options(definition: dict, group: Group, point: dict,
                seed: int) -> dict:
    """The overrides of a run of ``seed``: the sweep's, the mode's, the
    point's, the setting's (with the seed of its labels where the sweep
    draws them per training seed)."""
    options = dict(definition.get('cfg_options') or {})
    options.update(mode_options(group.mode, definition.get('domain')))
    options.update(point)
    train_mode = dataset_modes(
        abs_path(group.config), group.setting, definition.get('domain'))[0]
    label = label_seed(seed) if definition.get('label_seed_per_seed') \
        else None
    options.update(setting_options(group.setting, train_mode, label))
    return options


def train_warm(config: str, work_root: str, seed: int, options: dict,
               hook: Optional[dict], domain: Optional[str], log: str,
               threads: int) -> dict:
    """One training in this process (:class:`~.process_globals.
    ProcessGlobals` around it), its output appended to ``log``; its
    summary. An error of the run is a :class:`TrialFailed` naming the
    log, where its traceback is."""
    from mmlml.apis.trial_training import failure_reason, train_trial
    with open(log, 'a') as f, ProcessGlobals():
        f.write(f'# warm trial in process {os.getpid()}: {config}, seed '
                f'{seed}, domain {domain}\n')
        f.flush()
        for var in ('OMP_NUM_THREADS', 'MKL_NUM_THREADS'):
            os.environ[var] = str(threads)
        os.environ[CONFIG_TEXT_VARIABLE] = 'unformatted'  # as in _call
        import torch
        torch.set_num_threads(threads)
        with contextlib.redirect_stdout(f), contextlib.redirect_stderr(f):
            try:
                return train_trial(
                    config,
                    work_root,
                    seed,
                    options,
                    extra_hooks=[hook] if hook is not None else [],
                    domain=domain)
            except Exception as error:
                traceback.print_exc(file=f)
                raise TrialFailed(f'{failure_reason(error)} (see {log})') \
                    from None


def train_run(sweep: Sweep,
              group: Group,
              point: dict,
              seed: int,
              run_dir: str,
              options: dict,
              hook: Optional[dict],
              trial_process: str = 'warm') -> dict:
    """One training of the trial, warm or in a ``trainer`` process
    (module docstring); its summary, also written to the run folder's
    ``demo.json``."""
    definition = sweep.definition
    out = osp.join(run_dir, 'demo.json')
    if osp.exists(out):
        os.remove(out)  # the run folder is the sweep's own
    domain = run_domain(definition.get('domain'), group.mode)
    work_root = osp.dirname(osp.dirname(run_dir))
    log = osp.join(run_dir, 'log.txt')
    threads = definition.get('threads', 1)
    gpus = int(definition.get('gpus_per_trial') or 0)
    if trial_process == 'warm' and gpus <= 1 \
            and not os.environ.get(TRAINER_VARIABLE):
        summary = train_warm(
            abs_path(group.config), work_root, seed, options, hook, domain,
            log, threads)
        with open(out, 'w') as f:
            json.dump({group.name: {'runs': [summary]}}, f, indent=2)
        return summary
    if os.environ.get(TRAINER_VARIABLE):
        cmd = [trainer_path()]
    else:
        cmd = ['-m', 'mmlml.apis.trial_training']
    if gpus > 1:
        cmd = ['-m', 'torch.distributed.run', f'--nproc_per_node={gpus}'
               ] + cmd + ['--launcher', 'pytorch']
    cmd = [sys.executable] + cmd + [
        abs_path(group.config),
        '--seeds' if os.environ.get(TRAINER_VARIABLE) else '--seed',
        str(seed), '--work-dir', work_root, '--out', out
    ]
    if domain is not None and not os.environ.get(TRAINER_VARIABLE):
        cmd += ['--domain', domain]
    if hook is not None:
        cmd += ['--extra-hook', json.dumps(hook)]
    cmd += ['--cfg-options'] + format_options(options)
    run_command(cmd, log, threads, domain)
    with open(out) as f:
        summary = json.load(f)[group.name]['runs'][0]
    return summary


def best_checkpoint(run_dir: str) -> Optional[str]:
    """The best checkpoint that the trainer saved in a run folder
    (MMEngine's ``best_*.pth``; the newest where there are several), or
    None: found in the folder, never read from the storage."""
    found = glob.glob(osp.join(glob.escape(run_dir), 'best_*.pth'))
    return max(found, key=osp.getmtime) if found else None
