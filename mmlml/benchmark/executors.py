"""Start the workers of a sweep (:mod:`.worker`): local processes, or
jobs through submitit (Slurm, or submitit's local executor), and wait for
them. Every worker works on the same storage, so a sweep grows by
starting more of them, from any machine that reaches it."""
import os
import os.path as osp
import subprocess
import sys
from typing import List, Optional

from .sweep import REPO_ROOT

__all__ = ['EXECUTORS', 'start_workers', 'wait_workers', 'stop_workers']

EXECUTORS = ('local', 'slurm', 'submitit-local')


def _worker(storage: str, study: str, cwd: str) -> dict:
    """What a submitit job runs (importable, so that it pickles)."""
    os.chdir(cwd)
    from mmlml.benchmark.worker import work
    return work(storage, study)


def start_workers(storage: str,
                  study: str,
                  count: int,
                  executor: str = 'local',
                  folder: Optional[str] = None,
                  slurm: Optional[dict] = None) -> List[object]:
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

    The workers and their runs work in this process's working directory,
    against which the configs' relative paths (``data/...``) resolve, as
    for ``tools/train.py``; they import mmlml from this checkout.
    """
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
            subprocess.Popen([
                sys.executable, '-m', 'mmlml.benchmark.worker', '--storage',
                storage, '--study', study
            ],
                             cwd=cwd,
                             env=env) for _ in range(count)
        ]
    import submitit
    if executor == 'slurm':
        pool = submitit.AutoExecutor(folder=folder, cluster='slurm')
    else:
        pool = submitit.LocalExecutor(folder=folder)
    parameters = dict(slurm or {})
    parameters.setdefault('timeout_min', 24 * 60)
    if executor == 'submitit-local':  # the Slurm-only names do not apply
        parameters = {
            k: v
            for k, v in parameters.items() if not k.startswith('slurm_')
        }
    pool.update_parameters(name=f'mmlml-sweep-{study}', **parameters)
    return [pool.submit(_worker, storage, study, cwd) for _ in range(count)]


def wait_workers(handles: List[object]) -> List[str]:
    """Wait for every worker; returns the errors they report."""
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


def stop_workers(handles: List[object]) -> None:
    """Stop the workers (each queues its trial again)."""
    for handle in handles:
        if isinstance(handle, subprocess.Popen):
            handle.terminate()
        else:
            handle.cancel()
