"""Install the files of Debian packages without root, for the tools that
fetch a domain's data (``tools/dataset_converters/tuxpaint_stamps.py``,
``tools/dataset_converters/wallpapers.py``): ``apt-get download`` into a
temporary folder, then ``dpkg-deb -x`` into the output folder. Every
failure is one line (``SystemExit``) that says what to do."""
import glob
import os
import os.path as osp
import shutil
import subprocess
import tempfile
from typing import Optional, Sequence

from .tool_parser import tool_parser

__all__ = ['unpack_debian_packages', 'parse_unpack_args']


def parse_unpack_args(doc: str,
                      default_out: str,
                      found: str,
                      argv: Optional[Sequence[str]] = None):
    """The command line of a tool that unpacks Debian packages: ``--out``
    (default ``default_out``, relative to the working directory) and
    ``--force`` (unpack again even if ``found``, the files, are found)."""
    parser = tool_parser(doc)
    parser.add_argument(
        '--out',
        default=osp.relpath(default_out),
        help='folder to unpack into (default: %(default)s)')
    parser.add_argument(
        '--force',
        action='store_true',
        help=f'unpack again even if the {found} are found')
    return parser.parse_args(argv)


def unpack_debian_packages(packages: Sequence[str], out: str, tag: str,
                           without_tools: str) -> None:
    """Download ``packages`` with ``apt-get download`` and unpack each into
    ``out`` with ``dpkg-deb -x`` (no root needed).

    Args:
        packages (Sequence[str]): The Debian package names.
        out (str): The folder to unpack into (made if missing).
        tag (str): The tool's name, which starts every message
            (``[tag] ...``).
        without_tools (str): What to do on a system without ``apt-get`` or
            ``dpkg-deb`` (the end of that message).

    Raises:
        SystemExit: A tool is missing or fails, ``apt-get`` gives other
            files than one per package, or ``out`` cannot be made.
    """
    # dpkg-deb runs in the download folder: a relative ``out`` is the
    # caller's.
    out = osp.abspath(out)
    for tool in ('apt-get', 'dpkg-deb'):
        if shutil.which(tool) is None:
            raise SystemExit(f'[{tag}] {tool} not found: {without_tools}')
    with tempfile.TemporaryDirectory() as tmp:
        _run(['apt-get', 'download', *packages], tmp, tag,
             'run `apt-get update` first (as root), or check the network')
        debs = []
        for package in packages:
            found = glob.glob(osp.join(tmp, f'{package}_*.deb'))
            if len(found) != 1:
                raise SystemExit(f'[{tag}] apt-get download gave '
                                 f'{len(found)} packages {package} in {tmp}')
            debs += found
        try:
            os.makedirs(out, exist_ok=True)
        except OSError as error:
            raise SystemExit(f'[{tag}] cannot make --out {out} '
                             f'({error.strerror})') from None
        for deb in debs:
            _run(['dpkg-deb', '-x', deb, out], tmp, tag,
                 f'check that {out} is writable and has room')


def _run(command: list, cwd: str, tag: str, hint: str) -> None:
    """Run a Debian tool; its failure is one line with its last words and
    ``hint``."""
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    if result.returncode:
        said = (result.stderr or result.stdout).strip().splitlines()
        raise SystemExit(
            f'[{tag}] `{" ".join(command)}` failed (exit '
            f'{result.returncode}: {said[-1] if said else "no message"}); '
            f'{hint}')
