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
import os.path as osp
import sys

from mmlml.cli.debian_packages import parse_unpack_args, unpack_debian_packages
from mmlml.datasets.domains.photo_canvases import (DRAWN_CATEGORIES,
                                                   PHOTO_CATEGORIES,
                                                   UNPACKED_PACKAGE,
                                                   find_stamps_root,
                                                   load_category_photos)

PACKAGE = 'tuxpaint-stamps-default'


def parse_args(argv=None):
    return parse_unpack_args(__doc__, UNPACKED_PACKAGE, 'stamps', argv)


def unpack(out: str) -> str:
    """Download the package with apt-get and unpack it into ``out``;
    returns the stamp tree."""
    unpack_debian_packages(
        [PACKAGE], out, 'tuxpaint_stamps',
        "on a system without Debian's tools, unpack the package "
        f'{PACKAGE} by hand and set MMLML_TUXPAINT_STAMPS to its '
        'usr/share/tuxpaint/stamps')
    return osp.join(out, 'usr', 'share', 'tuxpaint', 'stamps')


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
