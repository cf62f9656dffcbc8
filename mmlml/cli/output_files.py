"""The rule every script in ``tools/`` follows before it writes a file:
never replace a file it did not create unless ``--force`` is given, never
write its output over one of its inputs (a file it or its config reads),
even with ``--force``, and never delete a folder it did not create (the
folders of :mod:`mmlml.utils.own_folders`, which training code shares)."""
import argparse
import os.path as osp
from typing import Any, Iterable, List, Optional, Sequence

__all__ = [
    'add_force_argument', 'check_output', 'config_input_files',
    'check_config_output'
]


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


def _strings(value: Any, data_root: Optional[str]) -> Iterable[str]:
    """Every string in a config value, and each relative one also under
    the nearest ``data_root`` (where MMEngine's datasets look for
    ``ann_file`` and their other files)."""
    if isinstance(value, str):
        yield value
        if data_root and not osp.isabs(value) and '://' not in value:
            yield osp.join(data_root, value)
    elif isinstance(value, dict):
        root = value.get('data_root')
        root = root if isinstance(root, str) else data_root
        for item in value.values():
            yield from _strings(item, root)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item, data_root)


def config_input_files(cfg: Any, exclude: Sequence[str] = ()) -> List[str]:
    """The existing files that a config names anywhere (label files,
    annotation files, scores files, checkpoints...): the files a run of it
    reads, which a tool must not write over.

    Args:
        cfg: The config (a ``Config`` or a dict).
        exclude: Paths to leave out (a tool's own output slot, e.g. the
            ``scores_file`` that ``tools/vl_pseudo_label.py`` makes for the
            config).

    Returns:
        list[str]: The paths, as the config names them, in config order.
    """
    if hasattr(cfg, 'to_dict'):
        cfg = cfg.to_dict()
    files = []
    for value in _strings(cfg, None):
        if (value not in files and osp.isfile(value)
                and not any(_same_file(value, e) for e in exclude)):
            files.append(value)
    return files


def check_config_output(path: Optional[str],
                        cfg: Any,
                        exclude: Sequence[str] = (),
                        option: str = '--out') -> None:
    """Refuse to write the output file ``path`` over a file that the config
    ``cfg`` names (:func:`config_input_files`), even with ``--force``. (A
    tool checks its command line with :func:`check_output` first, before
    it reads the config.)

    Raises:
        ValueError: ``path`` is one of the config's files.
    """
    check_output(path, config_input_files(cfg, exclude), True, option)
