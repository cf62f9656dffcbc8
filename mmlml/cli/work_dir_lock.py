"""One training at a time in a work directory.

Two ``tools/train.py`` runs on one ``--work-dir`` both write
``epoch_N.pth``, ``last_checkpoint`` and the best checkpoint there: the
second replaces the first's files and both exit 0. A training holds an
exclusive lock on ``<work_dir>/.train.lock`` (``fcntl.flock``) while it
runs and writes its pid there; a second training on the folder is refused
in one line naming that pid (:class:`WorkDirInUse`). The operating system
drops the lock when its process ends, however it ends, so the folder of a
finished or killed run is free at once (``--resume`` in it works) and no
stale lock is ever left to delete. ``--force-work-dir`` trains without the
lock, for a folder that is shared on purpose.

Under a distributed launcher only the first process (rank 0) takes the
lock: the processes of one run share their work directory.
"""
import contextlib
import errno
import os
import os.path as osp
import warnings
from typing import Iterator

__all__ = ['LOCK_NAME', 'WorkDirInUse', 'work_dir_lock', 'is_first_process']

#: The lock file a training holds in its work directory.
LOCK_NAME = '.train.lock'


class WorkDirInUse(RuntimeError):
    """Another training holds the lock of the work directory."""


def is_first_process() -> bool:
    """Whether this process is the first of its run: rank 0 of a
    ``torchrun`` (``RANK``) or of a Slurm job (``SLURM_PROCID``, read only
    inside a job step), or a process without either."""
    rank = os.environ.get('RANK')
    if rank is None and 'SLURM_STEP_ID' in os.environ:
        rank = os.environ.get('SLURM_PROCID')
    return rank in (None, '', '0')


def _holder(path: str) -> str:
    """The pid written in the lock file ``path``, as a message names it."""
    try:
        with open(path) as f:
            pid = f.read().strip()
    except OSError:
        pid = ''
    return f'pid {pid}' if pid else 'another process'


@contextlib.contextmanager
def work_dir_lock(work_dir: str, force: bool = False) -> Iterator[None]:
    """Hold the training lock of ``work_dir`` (created if missing) while
    the ``with`` block runs; nothing with ``force=True`` or in a process
    other than the first of a distributed run.

    Raises:
        WorkDirInUse: Another training (in this or another process) holds
            it, naming its pid and the ways through.
    """
    if force or not is_first_process():
        yield
        return
    try:
        import fcntl
    except ImportError:  # Windows: no flock
        warnings.warn(f'{work_dir}: this platform has no file locks: a '
                      'second training on the work dir is not refused')
        yield
        return
    os.makedirs(work_dir, exist_ok=True)
    path = osp.join(work_dir, LOCK_NAME)
    handle = open(path, 'a+')
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            if error.errno not in (errno.EWOULDBLOCK, errno.EAGAIN,
                                   errno.EACCES):
                # A file system without locks (some network mounts):
                # train, and say the folder is unguarded.
                warnings.warn(f'{path}: cannot lock the work dir ({error}): '
                              'a second training on it is not refused')
                yield
                return
            raise WorkDirInUse(
                f'the work dir {work_dir} is in use by another training '
                f'({_holder(path)}, lock {path}): wait for it to end, train '
                'into another --work-dir, or pass --force-work-dir to share '
                'the folder (the two runs then replace each other\'s '
                'checkpoints)') from None
        handle.seek(0)
        handle.truncate()
        handle.write(f'{os.getpid()}\n')
        handle.flush()
        yield
    finally:
        handle.close()  # drops the lock
