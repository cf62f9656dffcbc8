"""Install the background photographs of the real-photo domain's held-out
backgrounds (``PhotoCanvases(backgrounds='wallpapers')``) without root:
the Debian packages of desktop wallpapers that hold them
(``lomiri-wallpapers-16.04``, ``mate-backgrounds``,
``plasma-workspace-wallpapers``; CC-BY, CC-BY-SA and GPL-2+), fetched with
``apt-get download`` and unpacked with ``dpkg-deb -x`` into ``--out``
(default ``data/wallpapers``, where PhotoCanvases looks after the
packages' own places). Nothing is copied into the repository.

    python tools/dataset_converters/wallpapers.py

If the photographs are already where PhotoCanvases looks (``apt-get
install`` of the packages as root, ``$MMLML_WALLPAPERS`` or an earlier
run), it only checks them. It prints every photograph with its package
and licence.
"""
import sys

from mmlml.cli.debian_packages import parse_unpack_args, unpack_debian_packages
from mmlml.datasets.domains.photo_backgrounds import (UNPACKED_WALLPAPERS,
                                                      WALLPAPER_PACKAGES,
                                                      WALLPAPERS,
                                                      find_wallpapers,
                                                      load_background_files)


def parse_args(argv=None):
    return parse_unpack_args(__doc__, UNPACKED_WALLPAPERS, 'photographs', argv)


def main(argv=None) -> None:
    args = parse_args(argv)
    try:
        paths = None if args.force else find_wallpapers()
    except FileNotFoundError:
        paths = None
    if paths is None:
        unpack_debian_packages(
            WALLPAPER_PACKAGES, args.out, 'wallpapers',
            "on a system without Debian's tools, unpack the packages "
            f'{", ".join(WALLPAPER_PACKAGES)} by hand into one folder and '
            'set MMLML_WALLPAPERS to it')
        paths = find_wallpapers(args.out)
    load_background_files(paths)  # every file decodes
    print(f'[wallpapers] {len(paths)} background photographs')
    for path, (package, _, licence) in zip(paths, WALLPAPERS):
        print(f'  {path}  ({package}, {licence})')


if __name__ == '__main__':
    sys.exit(main())
