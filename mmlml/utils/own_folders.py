"""Folders that mmlml makes and may therefore reuse or delete (e.g. the
chunk files of a scores file being made): a marker file says so, and a
folder without it, someone else's, is never written into or deleted. The
scoring of a dataset (:mod:`mmlml.pseudo_labellers.scoring`) and the tools
(:mod:`mmlml.cli.output_files`) follow this rule."""
import os
import os.path as osp
import shutil

__all__ = [
    'OWNER_MARKER', 'is_own_folder', 'make_own_folder', 'remove_own_folder',
    'foreign_folder_error'
]

#: The file that marks a folder made by mmlml: only such a folder is
#: reused or deleted.
OWNER_MARKER = '.mmlml-owned'


def is_own_folder(path: str) -> bool:
    """Whether ``path`` is free for a folder of mmlml's: it does not exist,
    or it is a folder with :data:`OWNER_MARKER`."""
    if not osp.lexists(path):
        return True
    return osp.isdir(path) and not osp.islink(path) and osp.isfile(
        osp.join(path, OWNER_MARKER))


def foreign_folder_error(path: str) -> ValueError:
    """The error for a folder that :func:`is_own_folder` refuses."""
    return ValueError(
        f'{path!r} exists and was not made by mmlml (it has no '
        f'{OWNER_MARKER} file): it is left as it is. Move it away, or choose '
        'another output file.')


def make_own_folder(path: str) -> None:
    """Create the folder ``path`` (and its parents) with
    :data:`OWNER_MARKER`, or keep the one of mmlml's already there.

    Raises:
        ValueError: ``path`` exists without the marker (a folder or file
            of someone else's, which is never written into or deleted).
    """
    if not is_own_folder(path):
        raise foreign_folder_error(path)
    os.makedirs(path, exist_ok=True)
    marker = osp.join(path, OWNER_MARKER)
    if not osp.isfile(marker):
        with open(marker, 'w') as f:
            f.write('Made by mmlml; deleted with its folder once its output '
                    'is written.\n')


def remove_own_folder(path: str) -> bool:
    """Delete the folder ``path`` if it has :data:`OWNER_MARKER` (mmlml
    made it); leave anything else. Returns whether it was deleted."""
    if not osp.isdir(path) or not is_own_folder(path):
        return False
    shutil.rmtree(path, ignore_errors=True)
    return True
