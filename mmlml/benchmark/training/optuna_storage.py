"""Open an Optuna storage from one string: the storage of a benchmark
sweep (:class:`~.sweep.Sweep`) and of the hook that prunes its trials
(:class:`~.optuna_pruning_hook.OptunaPruningHook`). Optuna's storages are
imported when one is opened.

- ``*.journal`` or ``*.log``: a journal file (Optuna's file storage for
  several machines on a shared file system, e.g. NFS on a Slurm cluster);
- a URL with ``://`` (``sqlite:///``, ``postgresql://``, ``mysql://``):
  that database;
- any other path: an SQLite file (the default for one machine).
"""
import contextlib
import json
import os
import os.path as osp
import time

__all__ = [
    'JOURNAL_SUFFIXES', 'StorageError', 'check_storage_file', 'open_storage',
    'storage_path'
]

JOURNAL_SUFFIXES = ('.journal', '.log')


class StorageError(ValueError):
    """A storage that cannot be opened or is not an Optuna storage."""


def storage_path(spec: str):
    """The local file behind ``spec`` (SQLite or journal), or None for a
    database server."""
    if '://' not in spec:
        return osp.abspath(spec)
    if spec.startswith('sqlite:///'):
        return osp.abspath(spec[len('sqlite:///'):])
    return None


def check_storage_file(spec: str, path: str) -> None:
    """Refuse an existing local file that is not an Optuna storage, before
    anything is written to it: an empty file, another application's SQLite
    database (Optuna would add its tables beside the others), a text file
    named like a journal.

    Raises:
        StorageError: one line naming the file and what it holds.
    """

    def refuse(what: str) -> None:
        raise StorageError(f'{spec}: {what}, not an Optuna storage: nothing '
                           'is written to it; name a new file or an '
                           'existing sweep storage')

    if not osp.isfile(path):
        refuse('not a file')
    journal = spec.endswith(JOURNAL_SUFFIXES) and '://' not in spec
    if osp.getsize(path) == 0:
        # Optuna makes a new journal empty, until its first study: one that
        # open_storage made (its creation lock beside it) is that.
        if journal and osp.exists(path + CREATION_LOCK):
            return
        refuse('an empty file')
    if journal:
        with open(path, 'rb') as f:
            first = f.readline()
        try:
            entry = json.loads(first)
        except ValueError:
            entry = None
        if not isinstance(entry, dict) or 'op_code' not in entry:
            refuse('a file that is not an Optuna journal (its first line is '
                   'no journal entry)')
        return
    import sqlite3
    try:
        with contextlib.closing(
                sqlite3.connect(f'file:{path}?mode=ro', uri=True)) as db:
            tables = {
                row[0]
                for row in db.execute(
                    "SELECT name FROM sqlite_master WHERE type='table'")
            }
    except sqlite3.DatabaseError as error:
        refuse(f'not an SQLite database ({error})')
    if not {'studies', 'trials', 'version_info'} <= tables:
        refuse('another application\'s SQLite database (tables: '
               f'{", ".join(sorted(tables)) or "none"})')


#: The suffix of the lock file beside a local storage while it is made.
CREATION_LOCK = '.create-lock'

#: Times a storage is opened while another process creates its tables.
SCHEMA_ATTEMPTS = 4


def open_storage(spec: str, must_exist: bool = False):
    """The Optuna storage that ``spec`` names (see the module docstring).

    Args:
        spec: A path or a database URL.
        must_exist: Refuse a local file that does not exist yet.

    Raises:
        StorageError: the file is missing (with ``must_exist``), or it is
            not an Optuna storage (:func:`check_storage_file`), or the
            database is in memory (one line naming it).
    """
    if spec.rstrip('/') in ('sqlite:', 'sqlite:///:memory:') or \
            spec == 'sqlite:///':
        raise StorageError(
            f'{spec}: an in-memory database: nothing would outlast this '
            'process, and workers could not share it; name a file '
            '(e.g. work_dirs/sweeps/NAME.db) or a database server')
    path = storage_path(spec)
    if must_exist and path is not None and not osp.isfile(path):
        raise StorageError(f'{spec}: no such sweep storage (a sweep creates '
                           'it; check the path)')
    if path is None:
        return _open(spec, path)
    if osp.isfile(path) and osp.getsize(path) and \
            not osp.exists(path + CREATION_LOCK):
        return _open(spec, path)
    # A new local storage (or one being created this moment): made by one
    # process at a time, so that another command creating it at once
    # finds it whole, never half made (an empty file, tables without
    # their version row). A storage that open_storage made keeps its lock
    # file, so a file that already has bytes is still opened under the
    # lock: its maker may be writing its tables at this moment.
    if not osp.exists(path):
        try:
            os.makedirs(osp.dirname(path), exist_ok=True)
        except OSError as error:
            raise StorageError(f'{spec}: cannot make its folder '
                               f'({error.strerror or error})') from None
    with _creation_lock(path):
        return _open(spec, path)


@contextlib.contextmanager
def _creation_lock(path: str):
    """An exclusive lock on ``PATH`` + :data:`CREATION_LOCK` while a
    local storage is made (the file stays: removing it would let a third
    process lock another file of the same name)."""
    import fcntl
    try:
        f = open(path + CREATION_LOCK, 'a')
    except OSError:
        if not osp.exists(path + CREATION_LOCK):
            raise
        f = open(path + CREATION_LOCK)  # a read-only folder: flock reads
    with f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _creation_race(error: Exception) -> bool:
    """Whether ``error`` is another process creating the same tables (a
    server database, or a file made outside :func:`open_storage`)."""
    text = str(error)
    return 'already exists' in text or 'UNIQUE constraint failed' in text


def _open(spec: str, path):
    """Open the storage (:func:`open_storage` without its creation
    lock)."""
    from optuna.storages import JournalStorage, RDBStorage
    from optuna.storages.journal import JournalFileBackend
    if path is not None and osp.exists(path):
        check_storage_file(spec, path)
    try:
        if '://' not in spec and spec.endswith(JOURNAL_SUFFIXES):
            return JournalStorage(JournalFileBackend(path))
        url = spec if '://' in spec else f'sqlite:///{path}'
        kwargs = {'connect_args': {'timeout': 120}} \
            if url.startswith('sqlite') else {}
        for attempt in range(SCHEMA_ATTEMPTS):
            try:
                return RDBStorage(url, engine_kwargs=kwargs)
            except Exception as error:
                # Another process is creating this new storage's tables at
                # this moment (a tool and a --join, or a reader): they
                # exist once it is done.
                if not _creation_race(error) or \
                        attempt == SCHEMA_ATTEMPTS - 1:
                    raise
                time.sleep(0.5)
    except Exception as error:  # any failure: one line that names it
        first = str(error).strip().splitlines()[0] if str(error) else ''
        raise StorageError(
            f'{spec}: not an Optuna storage that this version can open '
            f'({type(error).__name__}: {first})') from None
