"""Install the photographs of the real-photo benchmark domain (PhotoCanvases)
without root: Debian's ``tuxpaint-stamps-default`` package (GPL-2), fetched
with ``apt-get download`` and unpacked with ``dpkg-deb -x`` into ``--out``
(default ``data/tuxpaint-stamps``, where PhotoCanvases looks after
``/usr/share/tuxpaint/stamps``). Nothing is copied into the repository.

    python tools/dataset_converters/tuxpaint_stamps.py

If the stamps are already where PhotoCanvases looks (``apt-get install
tuxpaint-stamps-default``, ``$MMLML_TUXPAINT_STAMPS`` or an earlier run),
it only checks them. It prints the number of photographs of every class.
"""
import glob
import os
import os.path as osp
import shutil
import subprocess
import sys
import tempfile

from mmlml.cli import tool_parser
from mmlml.datasets.domains.photo_canvases import (DRAWN_CATEGORIES,
                                                   PHOTO_CATEGORIES,
                                                   UNPACKED_PACKAGE,
                                                   find_stamps_root,
                                                   load_category_photos)

PACKAGE = 'tuxpaint-stamps-default'


def parse_args(argv=None):
    parser = tool_parser(__doc__)
    parser.add_argument(
        '--out',
        default=osp.relpath(UNPACKED_PACKAGE),
        help='folder to unpack the package into (default: %(default)s)')
    parser.add_argument(
        '--force',
        action='store_true',
        help='unpack again even if the stamps are found')
    return parser.parse_args(argv)


def unpack(out: str) -> str:
    """Download the package with apt-get and unpack it into ``out``;
    returns the stamp tree."""
    for tool in ('apt-get', 'dpkg-deb'):
        if shutil.which(tool) is None:
            raise SystemExit(
                f'[tuxpaint_stamps] {tool} not found: on a system without '
                f"Debian's tools, unpack the package {PACKAGE} by hand and "
                'set MMLML_TUXPAINT_STAMPS to its usr/share/tuxpaint/stamps')
    with tempfile.TemporaryDirectory() as tmp:
        _run(['apt-get', 'download', PACKAGE], tmp,
             'run `apt-get update` first (as root), or check the network')
        debs = glob.glob(osp.join(tmp, f'{PACKAGE}_*.deb'))
        if len(debs) != 1:
            raise SystemExit(f'[tuxpaint_stamps] apt-get download gave '
                             f'{len(debs)} packages in {tmp}')
        try:
            os.makedirs(out, exist_ok=True)
        except OSError as error:
            raise SystemExit(f'[tuxpaint_stamps] cannot make --out {out} '
                             f'({error.strerror})') from None
        _run(['dpkg-deb', '-x', debs[0], out], tmp,
             f'check that {out} is writable and has room')
    return osp.join(out, 'usr', 'share', 'tuxpaint', 'stamps')


def _run(command: list, cwd: str, hint: str) -> None:
    """Run a Debian tool; its failure is one line with its last words and
    ``hint``."""
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    if result.returncode:
        said = (result.stderr or result.stdout).strip().splitlines()
        raise SystemExit(
            f'[tuxpaint_stamps] `{" ".join(command)}` failed (exit '
            f'{result.returncode}: {said[-1] if said else "no message"}); '
            f'{hint}')


def main(argv=None) -> None:
    args = parse_args(argv)
    try:
        root = None if args.force else find_stamps_root()
    except FileNotFoundError:
        root = None
    if root is None:
        root = unpack(args.out)
    categories = {**PHOTO_CATEGORIES, **DRAWN_CATEGORIES}
    photos = load_category_photos(root, tuple(categories.items()), 64)
    print(f'[tuxpaint_stamps] {root}')
    for name, images in zip(categories, photos):
        kind = 'drawings' if name in DRAWN_CATEGORIES else 'photographs'
        print(f'  {name:18s} {len(images):3d} {kind}')


if __name__ == '__main__':
    sys.exit(main())
