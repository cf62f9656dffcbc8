"""The background photographs of the real-photo domain
(:class:`~mmlml.datasets.PhotoCanvases`): the ten that scikit-image and
scikit-learn bundle, and, with ``backgrounds='wallpapers'``, the packaged
desktop wallpapers of Debian that are photographs and show none of the
classes, split once between the training, validation and test canvases.

The wallpapers are read where their packages put them (``apt-get install``
as root) or where ``tools/dataset_converters/wallpapers.py`` unpacks them
without root; nothing is copied into the repository.
"""
import functools
import os
import os.path as osp
from typing import Dict, List, Optional, Sequence, Tuple

import cv2
import numpy as np

from .image_files import read_image

__all__ = [
    'WALLPAPERS', 'WALLPAPER_PACKAGES', 'WALLPAPER_ROOTS', 'BACKGROUND_POOLS',
    'bundled_background_paths', 'find_wallpapers', 'background_pools',
    'load_background_files', 'write_stand_in_wallpapers'
]

#: The bundled photographs used as backgrounds: scikit-image's (``data``
#: folder) and scikit-learn's (``datasets/images``) that show none of the
#: classes (no cat, coin, moon, flower or vehicle).
SKIMAGE_BACKGROUNDS = ('astronaut.png', 'brick.png', 'camera.png',
                       'coffee.png', 'grass.png', 'gravel.png',
                       'hubble_deep_field.jpg', 'retina.jpg', 'rocket.jpg')
SKLEARN_BACKGROUNDS = ('china.jpg', )

_PLASMA = 'usr/share/wallpapers/{}/contents/images/1920x1080.jpg'
_MATE = 'usr/share/backgrounds/mate/nature/{}.jpg'
_LOMIRI = 'usr/share/backgrounds/{}.jpg'

#: The wallpapers that are photographs and show none of the classes, as
#: ``(package, file in the package, licence)`` (the licence of the file in
#: the package's ``/usr/share/doc/<package>/copyright``). Left out of the
#: same packages: the drawings and renders, and the photographs of a
#: class (a dragonfly, a bird, fruit, brushes, a bottle, a clock, dogs,
#: flowers, leaves, a forest, boats, cups). ``gnome-backgrounds`` (43) and
#: ``ukui-wallpapers`` hold renders only.
WALLPAPERS: Tuple[Tuple[str, str, str], ...] = tuple(
    [('lomiri-wallpapers-16.04', _LOMIRI.format(name), licence)
     for name, licence in (('Bridge_by_Sander_Klootwijk', 'CC-BY-SA-4.0'),
                           ('aitzgorri_by_Aitzol_Berasategi', 'CC-BY-4.0'),
                           ('analogpattern_by_Peter_Nerlich', 'CC-BY-SA-4.0'),
                           ('picosdeeuropa_by_Aitzol_Berasategi', 'CC-BY-4.0'),
                           ('sunset_by_Aitzol_Berasategi', 'CC-BY-4.0'))] +
    [('mate-backgrounds', _MATE.format(name), 'GPL-2+')
     for name in ('Aqua', 'Dune', 'GreenMeadow', 'Storm', 'Wood')] +
    [('plasma-workspace-wallpapers', _PLASMA.format(name), 'GPL-2+')
     for name in ('BytheWater', 'ColdRipple', 'DarkestHour', 'Grey', 'Kite',
                  'summer_1am')])
#: The packages of :data:`WALLPAPERS`, in order.
WALLPAPER_PACKAGES = tuple(dict.fromkeys(p for p, _, _ in WALLPAPERS))

#: Where the wallpapers are looked for, after the ``wallpapers_root``
#: argument and the environment variable ``MMLML_WALLPAPERS``: the root of
#: the file system (the packages installed), then the folder that
#: ``tools/dataset_converters/wallpapers.py`` unpacks them into (relative
#: to the working directory, like MMPretrain's ``data/``).
UNPACKED_WALLPAPERS = osp.join('data', 'wallpapers')
WALLPAPER_ROOTS = ('/', UNPACKED_WALLPAPERS)

#: The background pools of ``backgrounds='wallpapers'``: every background
#: photograph belongs to one, split once with a fixed seed.
BACKGROUND_POOLS = (('train', 0.5), ('val', 0.2), ('test', 0.3))
_BACKGROUND_SEED = 20262
#: The longest side a wallpaper is shrunk to when read (the crops are
#: resized to the canvas side; the bundled photographs are smaller).
WALLPAPER_MAX_SIDE = 1280


@functools.lru_cache(maxsize=1)
def bundled_background_paths() -> Tuple[str, ...]:
    """The files of the background photographs that scikit-image and
    scikit-learn bundle (:data:`SKIMAGE_BACKGROUNDS`,
    :data:`SKLEARN_BACKGROUNDS`)."""
    import importlib.util
    folders: List[str] = []
    for package, sub, names in (('skimage', 'data', SKIMAGE_BACKGROUNDS),
                                ('sklearn', osp.join('datasets', 'images'),
                                 SKLEARN_BACKGROUNDS)):
        spec = importlib.util.find_spec(package)
        if spec is None or spec.origin is None:
            raise ImportError(
                'PhotoCanvases draws its backgrounds from the photographs '
                'that ship with scikit-image and scikit-learn: pip install '
                'scikit-image scikit-learn')
        folders += [osp.join(osp.dirname(spec.origin), sub, n) for n in names]
    return tuple(folders)


def find_wallpapers(wallpapers_root: Optional[str] = None) -> Tuple[str, ...]:
    """The files of :data:`WALLPAPERS` under the first root that holds them
    all: ``wallpapers_root`` if given, else ``$MMLML_WALLPAPERS``, else
    :data:`WALLPAPER_ROOTS`.

    Raises:
        FileNotFoundError: No root holds them all; the one-line message
            names the packages and how to install them.
    """
    roots = ([wallpapers_root] if wallpapers_root else
             [os.environ.get('MMLML_WALLPAPERS')] + list(WALLPAPER_ROOTS))
    roots = [root for root in roots if root]
    for root in roots:
        paths = tuple(osp.join(root, path) for _, path, _ in WALLPAPERS)
        if all(osp.isfile(path) for path in paths):
            return paths
    missing = sorted({
        package
        for package, path, _ in WALLPAPERS
        if not any(osp.isfile(osp.join(root, path)) for root in roots)
    }) or list(WALLPAPER_PACKAGES)
    raise FileNotFoundError(
        "PhotoCanvases(backgrounds='wallpapers') reads photographs of the "
        f'Debian packages {", ".join(WALLPAPER_PACKAGES)}; not found under '
        f'{", ".join(roots)} (missing: {", ".join(missing)}): install them '
        'with `python tools/dataset_converters/wallpapers.py` (no root; or '
        f'`apt-get install {" ".join(WALLPAPER_PACKAGES)}`), or give '
        '`wallpapers_root`.')


def background_pools(count: int) -> Dict[str, np.ndarray]:
    """Split ``count`` backgrounds into the disjoint pools of
    :data:`BACKGROUND_POOLS` with a fixed seed, each holding at least one
    (``count >= 3``); returns ``{pool: sorted indices}``."""
    if count < len(BACKGROUND_POOLS):
        raise ValueError(f'{count} backgrounds cannot fill the '
                         f'{len(BACKGROUND_POOLS)} pools (train, val, test)')
    order = np.random.default_rng(_BACKGROUND_SEED).permutation(count)
    sizes = [max(1, int(round(frac * count))) for _, frac in BACKGROUND_POOLS]
    sizes[0] = count - sum(sizes[1:])
    ends = np.cumsum(sizes)
    return {
        name: np.sort(order[end - size:end])
        for (name, _), size, end in zip(BACKGROUND_POOLS, sizes, ends)
    }


def load_background_files(
        paths: Sequence[str],
        max_side: Optional[int] = None) -> Tuple[np.ndarray, ...]:
    """The photographs at ``paths`` (BGR ``uint8``, read-only), each
    shrunk so that its longest side is at most ``max_side`` (None: as
    they are). A file is decoded again only when its size or time of
    modification changed.

    Raises:
        FileNotFoundError: A file is missing or unreadable.
    """
    images = []
    for path in paths:
        try:
            stat = os.stat(path)
        except OSError:
            stat = None
        image = None if stat is None else _read_background(
            path, max_side, stat.st_size, stat.st_mtime_ns)
        if image is None:
            raise FileNotFoundError(f'{path}: a background photograph is '
                                    'missing or unreadable; reinstall its '
                                    'package')
        images.append(image)
    return tuple(images)


@functools.lru_cache(maxsize=64)
def _read_background(path: str, max_side: Optional[int], size: int,
                     mtime_ns: int) -> Optional[np.ndarray]:
    """One photograph of :func:`load_background_files` (``size`` and
    ``mtime_ns`` key the cache), or None if unreadable."""
    image = read_image(path, cv2.IMREAD_COLOR)
    if image is None:
        return None
    scale = (max_side or max(image.shape)) / max(image.shape[:2])
    if scale < 1:
        image = cv2.resize(
            image, (max(1, round(image.shape[1] * scale)),
                    max(1, round(image.shape[0] * scale))),
            interpolation=cv2.INTER_AREA)
    image.flags.writeable = False
    return image


def write_stand_in_wallpapers(root: str,
                              height: int = 48,
                              width: int = 64) -> str:
    """Write a small generated stand-in of every file of
    :data:`WALLPAPERS` under ``root`` (at its path in its package) and
    return ``root``: a ``height`` by ``width`` JPEG of a colour of its
    own with a random texture. For tests and for trying the held-out
    backgrounds where the packages are absent; it is not a benchmark."""
    rng = np.random.default_rng(0)
    for index, (_, path, _) in enumerate(WALLPAPERS):
        hue = int(180 * index / len(WALLPAPERS))
        hsv = np.empty((height, width, 3), np.uint8)
        hsv[..., 0] = hue
        hsv[..., 1] = 160
        hsv[..., 2] = rng.integers(60, 220, (height, width), dtype=np.uint8)
        target = osp.join(root, path)
        os.makedirs(osp.dirname(target), exist_ok=True)
        cv2.imwrite(target, cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR))
    return root
