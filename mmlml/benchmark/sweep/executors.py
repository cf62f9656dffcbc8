"""Start the workers of a sweep (:mod:`.worker`): local processes, or
jobs through submitit (Slurm, or submitit's local executor), and wait for
them. Every worker works on the same storage, so a sweep grows by
starting more of them, from any machine that reaches it."""
import logging
import os
import os.path as osp
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Callable, List, Optional, Union

from mmlml.benchmark.sweep.sweep import REPO_ROOT

if TYPE_CHECKING:
    import submitit

#: A worker: a local process or a submitit job.
Handle = Union[subprocess.Popen, 'submitit.Job']

__all__ = [
    'EXECUTORS', 'start_workers', 'wait_workers', 'stop_workers',
    'quiet_sacct_warnings'
]

EXECUTORS = ('local', 'slurm', 'submitit-local')


def _worker(storage: str,
            study: str,
            trusted: List[str],
            cwd: str,
            trial_process: str = 'warm') -> dict:
    """What a submitit job runs (importable, so that it pickles)."""
    os.chdir(cwd)
    from mmlml.benchmark.sweep.worker import work
    return work(storage, study, trusted=trusted, trial_process=trial_process)


class _SacctOnce(logging.Filter):
    """Let submitit's "Bypassing sacct error" through once, as one line:
    without Slurm's accounting every poll of the jobs' states repeats it
    (two lines a poll)."""

    def __init__(self):
        super().__init__()
        self.said = False

    def filter(self, record: logging.LogRecord) -> bool:
        if 'Bypassing sacct error' not in record.getMessage():
            return True
        if self.said:
            return False
        self.said = True
        record.msg = ('sacct (Slurm accounting) is not available: job '
                      'states are read without it and may be inaccurate '
                      '(said once)')
        record.args = ()
        return True


def _without_stderr(make_command: Callable) -> Callable:
    """submitit's sacct command with sacct's own stderr dropped: without
    Slurm's accounting, sacct prints "Slurm accounting storage is
    disabled" on the sweep's terminal at every poll; its failure is
    still reported, once (:class:`_SacctOnce`)."""

    def quiet():
        command = make_command()
        if command is None:
            return None
        return ['sh', '-c', 'exec "$0" "$@" 2>/dev/null', *command]

    quiet.mmlml_quiet = True  # type: ignore[attr-defined]
    return quiet


class _BelowWarning(logging.Filter):
    """On submitit's standard-output handler: the records below WARNING.
    submitit's logging sends a warning to both of its handlers, standard
    output and standard error, so a terminal showed each warning twice;
    its standard-error handler still says it."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno < logging.WARNING


def quiet_sacct_warnings() -> None:
    """Say once in this process that sacct is not available
    (:class:`_SacctOnce`), however many sweeps or workers it starts, keep
    sacct's own complaint off the terminal (:func:`_without_stderr`), and
    submitit's warnings on one stream (:class:`_BelowWarning`)."""
    log = logging.getLogger('submitit')
    if not any(isinstance(f, _SacctOnce) for f in log.filters):
        log.addFilter(_SacctOnce())
    for handler in log.handlers:
        if (getattr(handler, 'stream', None) is sys.stdout
                or handler.get_name() == 'submitit_out') and not any(
                    isinstance(f, _BelowWarning) for f in handler.filters):
            handler.addFilter(_BelowWarning())
    from submitit.slurm.slurm import SlurmJob
    watcher = SlurmJob.watcher
    if not getattr(watcher._make_command, 'mmlml_quiet', False):
        setattr(watcher, '_make_command',
                _without_stderr(watcher._make_command))


def start_workers(storage: str,
                  study: str,
                  count: int,
                  executor: str = 'local',
                  folder: Optional[str] = None,
                  slurm: Optional[dict] = None,
                  trusted=(),
                  trial_process: str = 'warm') -> List[Handle]:
    """Start ``count`` workers; returns their handles (processes or
    submitit jobs).

    Args:
        storage: The sweep's storage (a local path is made absolute).
        study: The sweep's name.
        count: How many workers.
        executor: ``'local'`` (processes of this machine), ``'slurm'``
            (a Slurm job each, through submitit) or ``'submitit-local'``
            (submitit's local executor, for trying the Slurm path).
        folder: Where submitit keeps its job files and logs.
        slurm: submitit's parameters (``timeout_min``, ``slurm_partition``,
            ``gpus_per_node``, ``cpus_per_task``, ...).
        trusted: The configs outside the checkout's ``configs/`` that the
            command named (the only such configs the workers run).
        trial_process: Where each trial trains: ``'warm'`` (in the
            worker's process) or ``'subprocess'``
            (:data:`~.worker.TRIAL_PROCESSES`).

    The workers and their runs work in this process's working directory,
    against which the configs' relative paths (``data/...``) resolve, as
    for ``tools/train.py``; they import mmlml from this checkout.
    """
    trusted = [osp.abspath(p) for p in trusted]
    if executor not in EXECUTORS:
        raise ValueError(f'executor must be one of {EXECUTORS}; got '
                         f'{executor!r}')
    if '://' not in storage:
        storage = osp.abspath(storage)
    cwd = os.getcwd()
    if executor == 'local':
        env = dict(os.environ)
        env['PYTHONPATH'] = os.pathsep.join(
            [REPO_ROOT] + [p for p in [env.get('PYTHONPATH')] if p])
        return [
            subprocess.Popen(
                [
                    sys.executable, '-m', 'mmlml.benchmark.sweep.worker',
                    '--storage', storage, '--study', study, '--trial-process',
                    trial_process
                ] + (['--trust-config'] + trusted if trusted else []),
                cwd=cwd,
                env=env) for _ in range(count)
        ]
    import submitit
    pool: Union[submitit.AutoExecutor, submitit.LocalExecutor]
    if executor == 'slurm':
        pool = submitit.AutoExecutor(
            folder=folder, cluster='slurm')  # type: ignore[arg-type]
    else:
        pool = submitit.LocalExecutor(folder=folder)  # type: ignore[arg-type]
    parameters = dict(slurm or {})
    parameters.setdefault('timeout_min', 24 * 60)
    if executor == 'submitit-local':  # the Slurm-only names do not apply
        parameters = {
            k: v
            for k, v in parameters.items() if not k.startswith('slurm_')
        }
    pool.update_parameters(name=f'mmlml-sweep-{study}', **parameters)
    if executor == 'slurm':
        quiet_sacct_warnings()
    return [
        pool.submit(_worker, storage, study, trusted, cwd, trial_process)
        for _ in range(count)
    ]


def _report_until_done(handles: List[Handle], progress: Callable[[], str],
                       interval: float) -> None:
    """While submitit jobs run (their output goes to their log files),
    print ``progress()`` on stderr every ``interval`` seconds."""
    jobs = [h for h in handles if not isinstance(h, subprocess.Popen)]
    last = time.monotonic()
    while jobs and not all(job.done() for job in jobs):
        time.sleep(min(1., interval))
        if time.monotonic() - last >= interval:
            print(progress(), file=sys.stderr, flush=True)
            last = time.monotonic()


def wait_workers(handles: List[Handle],
                 progress: Optional[Callable[[], str]] = None,
                 interval: float = 30.) -> List[str]:
    """Wait for every worker; returns the errors they report. With
    ``progress``, submitit jobs are waited for with its line every
    ``interval`` seconds (local workers print their own)."""
    if progress is not None:
        _report_until_done(handles, progress, interval)
    errors = []
    for handle in handles:
        if isinstance(handle, subprocess.Popen):
            if handle.wait():
                errors.append(f'worker {handle.pid} exited with '
                              f'{handle.returncode}')
        else:
            try:
                errors += handle.result().get('errors', [])
            except Exception as error:  # a failed job: one line
                errors.append(f'job {handle.job_id}: '
                              f'{str(error).strip().splitlines()[-1]}')
    return list(dict.fromkeys(errors))


def stop_workers(handles: List[Handle], grace: float = 60) -> None:
    """Stop the workers (each queues its trial again and ends its training
    process); local ones are waited for, ``grace`` seconds before they are
    killed."""
    for handle in handles:
        if isinstance(handle, subprocess.Popen):
            handle.terminate()
        else:
            handle.cancel()
    for handle in handles:
        if isinstance(handle, subprocess.Popen):
            try:
                handle.wait(grace)
            except subprocess.TimeoutExpired:
                handle.kill()
                handle.wait()
