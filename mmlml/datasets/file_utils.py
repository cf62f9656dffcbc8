"""Reading the annotation files of the dataset classes, with errors that
name the file."""
import os.path as osp
from typing import Any, List

__all__ = ['check_file', 'read_lines', 'quote']


def check_file(path: str, what: str) -> None:
    """Raise ``FileNotFoundError`` naming ``what`` and ``path`` if ``path``
    is not a file."""
    if not osp.isfile(path):
        raise FileNotFoundError(f'{what} {path!r} does not exist.')


def read_lines(path: str, what: str) -> List[str]:
    """The lines of a text file, without line ends (a byte order mark and
    Windows line ends are accepted) and without the empty lines at its
    end."""
    check_file(path, what)
    with open(path, encoding='utf-8-sig') as f:
        lines = f.read().splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def quote(entry: Any, limit: int = 120) -> str:
    """An entry of an annotation file as an error message quotes it."""
    text = repr(entry)
    return text if len(text) <= limit else text[:limit] + '...'
