"""The rule every script in ``tools/`` follows before it writes a file:
never replace a file it did not create unless ``--force`` is given, and
never write its output over one of its inputs, even with ``--force``."""
import argparse
import os.path as osp
from typing import Iterable, Optional

__all__ = ['add_force_argument', 'check_output']


def add_force_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--force``: replace existing output files."""
    parser.add_argument(
        '--force',
        action='store_true',
        help='replace output files that exist already (an output is never '
        'written over an input file)')


def _same_file(a: str, b: str) -> bool:
    """Whether the paths ``a`` and ``b`` name the same file (the same path
    once links are resolved, or the same existing file)."""
    if osp.realpath(a) == osp.realpath(b):
        return True
    try:
        return osp.samefile(a, b)
    except OSError:  # one of them does not exist
        return False


def check_output(path: Optional[str],
                 inputs: Iterable[Optional[str]] = (),
                 force: bool = False,
                 option: str = '--out') -> None:
    """Refuse to write the output file ``path`` over an input or over an
    existing file.

    Args:
        path (str, optional): The file the script is about to write; None
            (the option was not given) is accepted.
        inputs: The files the script reads (None entries are skipped).
        force (bool): Whether an existing ``path`` may be replaced.
        option (str): How the command line names ``path``, for the error.

    Raises:
        ValueError: ``path`` is one of ``inputs`` (with or without
            ``force``).
        FileExistsError: ``path`` exists and ``force`` is False.
    """
    if path is None:
        return
    for source in inputs:
        if source is not None and _same_file(path, source):
            raise ValueError(
                f'{option} {path!r} is also an input of this command '
                f'({source!r}): writing the output there would destroy the '
                'input. Choose another output file (--force does not '
                'allow this).')
    if osp.lexists(path) and not force:
        raise FileExistsError(
            f'{option} {path!r} exists already: pass --force to replace it, '
            'or choose another output file.')
