"""Cut-out photographs of real objects pasted on real photographic
backgrounds, a multi-label dataset for the real-photo benchmark domain.

The objects are the photographs of Debian's ``tuxpaint-stamps-default``
package (GPL-2: several hundred PNG cut-outs with an alpha channel, in a
category tree), read from where the package puts them; the backgrounds are
the colour and grey photographs that scikit-image and scikit-learn bundle,
and with ``backgrounds='wallpapers'`` packaged wallpapers held out between
the splits (``photo_backgrounds.py``). Nothing is copied into the
repository: ``tools/dataset_converters/tuxpaint_stamps.py`` (and
``wallpapers.py``) install the packages' files without root.

It is an embedded stand-in that ranks methods on real photographs with an
ImageNet backbone; it is not PASCAL VOC and its numbers are not VOC numbers.
"""
import functools
import glob
import hashlib
import json
import os
import os.path as osp
from typing import Any, Dict, List, Optional, Sequence, Tuple

import cv2
import numpy as np

from mmlml.registry import DATASETS
from mmlml.utils.hyperparameters import (Choice, Flag, Integer, Real,
                                         RealTuple, Rule, check_settings)
from ..partial.protocol import SEED, VAL_FRAC
from .canvases import CanvasPools, free_box
from .feature_maps import (cached_feature_maps, check_feature_pipeline,
                           check_features, feature_cache_path, file_digest,
                           map_shape)
from .generated_multi_label_dataset import (IMAGE_SEED, SPLIT, SPLIT_STREAMS,
                                            GeneratedMultiLabelDataset)
from .image_files import read_image
from .photo_backgrounds import (WALLPAPER_MAX_SIDE, WALLPAPERS,
                                background_pools, bundled_background_paths,
                                find_wallpapers, load_background_files)

#: How many splits' feature infos a process keeps (the training,
#: validation and test canvases of one domain).
FEATURE_DATA_LISTS_KEPT = 3

#: The feature infos of the canvases built last in this process and the
#: state of the cache file they were read from, by the canvases' and the
#: features' description (:meth:`PhotoCanvases.load_data_list`), the most
#: recent last.
_FEATURE_DATA_LISTS: Dict[str, Tuple[List[dict], Optional[tuple]]] = {}


def _file_state(path: Optional[str]) -> Optional[tuple]:
    """A file's size, modification time and inode (None: no such file): a
    cache file written again or replaced has another."""
    try:
        stat = os.stat(path) if path is not None else None
    except OSError:
        return None
    return None if stat is None else (stat.st_size, stat.st_mtime_ns,
                                      stat.st_ino)


__all__ = [
    'PhotoCanvases', 'PHOTO_CATEGORIES', 'FINE_PHOTO_CATEGORIES', 'TAXONOMIES',
    'DRAWN_CATEGORIES', 'STAMP_FOLDERS', 'find_stamps_root', 'category_files',
    'load_category_photos', 'load_backgrounds', 'write_stand_in_stamps',
    'photo_pools'
]

#: The classes and the folders of the package's stamp tree
#: (``/usr/share/tuxpaint/stamps``) whose PNG files are photographs of
#: them (the ``cartoon`` sub-folders and the drawn categories are left out).
PHOTO_CATEGORIES: Dict[str, Tuple[str, ...]] = {
    'bird': ('animals/birds', ),
    'fish': ('animals/fish', ),
    'insect': ('animals/insects', ),
    'bovid': ('animals/mammals/bovines', ),
    'horse_or_deer': ('animals/mammals/equines', 'animals/mammals/deer'),
    'rodent': ('animals/mammals/rodents', ),
    'other_mammal':
    ('animals/mammals', 'animals/mammals/apes', 'animals/mammals/cats',
     'animals/mammals/dogs', 'animals/mammals/aquatic', 'animals/marsupials'),
    'fruit': ('food/fruit', ),
    'vegetable': ('food/vegetables', ),
    'flower': ('plants/flowers', ),
    'tree_or_plant': ('plants/trees', 'plants'),
    'tool': ('household/tools', 'household/arttools'),
    'household_object': ('household', 'household/dishes'),
    'instrument': ('hobbies/music/string', 'hobbies/music/percussion'),
    'coin': ('symbols/money/us/coins', 'symbols/money/euro/coins',
             'symbols/money/canadian/coins', 'symbols/money/japanese'),
    'planet_or_moon': ('space/planets', 'space/moon'),
    'sports_ball': ('sports', ),
    'vehicle': ('vehicles/auto', 'vehicles/emergency', 'military/vehicles'),
}

#: The finer classes of ``taxonomy='fine'`` (50 classes, 310 photographs,
#: none a drawing): the photograph folders of the stamp tree, a folder
#: that mixes kinds split by file name. An entry is a folder (all its PNG
#: files) or a file pattern (``*.png`` names, relative to the tree); no
#: file belongs to two classes. Ordered from the class with the most
#: photographs to the one with the fewest, so that with ``class_skew``
#: the frequent classes also have the most varied photographs (as in
#: COCO, where the frequent classes have the most instances).
FINE_PHOTO_CATEGORIES: Dict[str, Tuple[str, ...]] = {
    'flower': ('plants/flowers', ),
    'waterbird': ('animals/birds/*duck*.png', 'animals/birds/drake*.png',
                  'animals/birds/gander*.png', 'animals/birds/heron*.png',
                  'animals/birds/pelican*.png', 'animals/birds/*gull*.png',
                  'animals/birds/*flamingo*.png', 'animals/birds/*crane*.png',
                  'animals/birds/*penguin*.png'),
    'planet_or_moon': ('space/planets', 'space/moon'),
    'dollar_coin': ('symbols/money/us/coins', 'symbols/money/canadian/coins'),
    'fruit_vegetable':
    ('food/vegetables/*pepper*.png', 'food/vegetables/corn*.png',
     'food/vegetables/eggplant*.png', 'food/vegetables/*squash*.png',
     'food/vegetables/pumpkin*.png', 'food/vegetables/tomato*.png',
     'plants/eggplant*.png'),
    'reef_fish': ('animals/fish/*fish*.png', 'animals/fish/*groper*.png',
                  'animals/fish/*trout*.png', 'animals/fish/*wrasse*.png',
                  'animals/fish/seahorse*.png'),
    'insect': ('animals/insects', ),
    'rodent': ('animals/mammals/rodents', ),
    'poultry': ('animals/birds/*chicken*.png', 'animals/birds/hen*.png',
                'animals/birds/rooster*.png', 'animals/birds/turkey*.png',
                'animals/birds/*guineafowl*.png', 'animals/birds/*pea*.png'),
    'euro_coin': ('symbols/money/euro/coins', ),
    'household_object': ('household/*ightbulb*.png', 'household/cylinder*.png',
                         'household/key*.png', 'household/rubberduck*.png',
                         'household/toilet*.png', 'household/*bin*.png',
                         'household/garbagecan*.png'),
    'kitchenware':
    ('household/dishes', 'household/dishes/utensils', 'household/kettle*.png'),
    'car': ('vehicles/auto', 'vehicles/emergency'),
    'other_fruit': ('food/fruit/banana*.png', 'food/fruit/pineapple*.png',
                    'food/fruit/kiwi*.png', 'food/fruit/cherimoya*.png',
                    'food/fruit/pomegranate*.png', 'food/fruit/pear*.png',
                    'plants/trees/rambutan*.png'),
    'songbird': ('animals/birds/blackbird*.png', 'animals/birds/crow.png',
                 'animals/birds/cuckoo*.png', 'animals/birds/lark*.png',
                 'animals/birds/magpie*.png', 'animals/birds/pigeon*.png'),
    'cattle':
    ('animals/mammals/bovines/bi*.png', 'animals/mammals/bovines/bull*.png',
     'animals/mammals/bovines/cow*.png', 'animals/mammals/bovines/yak*.png',
     'animals/mammals/bovines/zebu*.png'),
    'citrus': ('food/fruit/lemon*.png', 'food/fruit/mandarine*.png',
               'food/fruit/orange*.png', 'food/fruit/sliced_*.png'),
    'root_vegetable':
    ('food/vegetables/carrot*.png', 'food/vegetables/garlic*.png',
     'food/vegetables/onion*.png', 'food/vegetables/potato*.png',
     'food/vegetables/yam*.png'),
    'string_instrument': ('hobbies/music/string', ),
    'yen_coin': ('symbols/money/japanese', ),
    'ball': ('sports/*ball*.png', 'sports/*football*.png',
             'sports/soccer*.png'),
    'large_mammal':
    ('animals/mammals/elephant*.png', 'animals/mammals/giraffe*.png',
     'animals/mammals/hippo*.png', 'animals/mammals/rhino*.png',
     'animals/mammals/camel'),
    'tree': ('plants/trees/birch*.png', 'plants/trees/holm_oak*.png',
             'plants/trees/*palm*.png', 'plants/trees/tree*.png',
             'plants/trees/holly*.png', 'plants/trees/pinecone*.png'),
    'goat_or_sheep': ('animals/mammals/bovines/*goat*.png',
                      'animals/mammals/bovines/ram*.png',
                      'animals/mammals/bovines/sheep*.png'),
    'apple': ('food/fruit/apple*.png', ),
    'stone_fruit': ('food/fruit/*pricot*.png', 'food/fruit/Cherry*.png',
                    'food/fruit/mango*.png', 'food/fruit/avocado*.png'),
    'hand_tool': ('household/tools/hammer*.png', 'household/tools/mallet*.png',
                  'household/tools/saw*.png', 'household/tools/spade*.png',
                  'household/tools/paintbrush*.png'),
    'deer_or_antelope': ('animals/mammals/deer',
                         'animals/mammals/bovines/*blackbuck*.png'),
    'military_vehicle': ('military/vehicles', ),
    'sea_mammal': ('animals/mammals/aquatic', ),
    'other_instrument': ('hobbies/music/percussion', 'hobbies/music/brass',
                         'hobbies/music/wind'),
    'small_mammal':
    ('animals/mammals/badger*.png', 'animals/mammals/echidna*.png',
     'animals/mammals/ferret*.png', 'animals/mammals/hedgehog*.png',
     'animals/mammals/rabbit*.png'),
    'medical_item': ('medical/bandage*.png', 'medical/*thermometer*.png',
                     'medical/stethoscope*.png', 'medical/syringe*.png'),
    'wrench_or_pliers': ('household/tools/wrench*.png',
                         'household/tools/pl*ers*.png'),
    'measuring_or_kit': ('household/tools/measuring*.png',
                         'household/tools/toolbox*.png',
                         'household/tools/cementmixer*.png'),
    'stationery': ('household/arttools', ),
    'wildebeest': ('animals/mammals/bovines/gnu*.png', ),
    'horse': ('animals/mammals/equines', ),
    'pig': ('animals/mammals/pig*.png', 'animals/mammals/wildboar*.png'),
    'cat': ('animals/mammals/cats', ),
    'parrot_or_toucan':
    ('animals/birds/*rosella*.png', 'animals/birds/*lorikeet*.png',
     'animals/birds/quetzal*.png', 'animals/birds/tucan*.png'),
    'large_bird': ('animals/birds/ostrich*.png', 'animals/birds/nandou*.png',
                   'animals/birds/owl*.png', 'animals/birds/vulture*.png'),
    'crustacean_or_shell': ('animals/fish/lobster*.png',
                            'animals/fish/shrimp*.png', 'animals/shellfish'),
    'berry': ('food/fruit/*trawberry*.png', 'food/fruit/raspberry*.png',
              'food/fruit/grapes*.png'),
    'leafy_vegetable': ('food/vegetables/broccoli*.png',
                        'food/vegetables/*lettuce*.png',
                        'plants/lettuce*.png'),
    'mushroom': ('plants/mushrooms', 'food/vegetables/mushroom*.png'),
    'nut': ('food/nuts', ),
    'ape': ('animals/mammals/apes', ),
    'dog': ('animals/mammals/dogs', ),
    'marsupial': ('animals/marsupials', ),
}

#: The class lists of the ``taxonomy`` argument.
TAXONOMIES: Dict[str, Dict[str, Tuple[str, ...]]] = {
    'coarse': PHOTO_CATEGORIES,
    'fine': FINE_PHOTO_CATEGORIES,
}

#: Categories whose stamps are drawings, added with ``drawings=True``.
DRAWN_CATEGORIES: Dict[str, Tuple[str, ...]] = {
    'road_sign': ('town/roadsigns', ),
    'clothing': ('clothes', ),
    'hat': ('clothes/hats', ),
    'flag': ('town/flags', ),
    'chess_piece': ('symbols/chess', ),
}

#: Where the stamps are looked for, after the ``stamps_root`` argument and
#: the environment variable ``MMLML_TUXPAINT_STAMPS``: the package's own
#: place (``apt-get install tuxpaint-stamps-default``), then the folder
#: that ``tools/dataset_converters/tuxpaint_stamps.py`` extracts to
#: (relative to the working directory, like MMPretrain's ``data/``).
UNPACKED_PACKAGE = osp.join('data', 'tuxpaint-stamps')
STAMP_FOLDERS = ('/usr/share/tuxpaint/stamps',
                 osp.join(UNPACKED_PACKAGE, 'usr', 'share', 'tuxpaint',
                          'stamps'))

#: The photo pools of the instance-disjoint variant: each class's
#: photographs, split once (fixed seed) between the splits.
POOLS = (('train', 0.5), ('val', 0.2), ('test', 0.3))
_POOL_SEED = 20261
#: Changes whenever the same arguments would draw other canvases (it keys
#: the feature cache).
GENERATOR_VERSION = 1
#: The settings added since version 1, left out of the cache key at their
#: defaults (so that the canvases of version 1 keep their key).
_SINCE_VERSION_1 = ('backgrounds', 'class_skew', 'taxonomy',
                    'disjoint_min_photos')
_PLACEMENT_TRIES = 30


def find_stamps_root(stamps_root: Optional[str] = None) -> str:
    """The stamp tree to read: ``stamps_root`` if given, else
    ``$MMLML_TUXPAINT_STAMPS``, else the first of :data:`STAMP_FOLDERS`
    that exists.

    Raises:
        FileNotFoundError: None exists; the message says how to install
            the package.
    """
    candidates = ([stamps_root] if stamps_root else
                  [os.environ.get('MMLML_TUXPAINT_STAMPS')] +
                  list(STAMP_FOLDERS))
    for folder in candidates:
        if folder and osp.isdir(folder):
            return folder
    raise FileNotFoundError(
        'PhotoCanvases reads the photographs of the Debian package '
        'tuxpaint-stamps-default, not found in '
        f'{", ".join(c for c in candidates if c)}: install it with '
        '`python tools/dataset_converters/tuxpaint_stamps.py` (no root; '
        'or `apt-get install tuxpaint-stamps-default`), or give '
        '`stamps_root`.')


def _read_rgba(path: str, max_side: int) -> np.ndarray:
    """The RGBA ``uint8`` image at ``path``, shrunk so that its longest
    side is at most ``max_side``."""
    image = read_image(path, cv2.IMREAD_UNCHANGED)
    if image is None:
        raise ValueError(f'{path}: not a readable image')
    if image.ndim == 2:
        image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGRA)
    elif image.shape[2] == 3:
        image = cv2.cvtColor(image, cv2.COLOR_BGR2BGRA)
    scale = max_side / max(image.shape[:2])
    if scale < 1:
        size = (max(1, round(image.shape[1] * scale)),
                max(1, round(image.shape[0] * scale)))
        image = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
    image.flags.writeable = False
    return image


def category_files(root: str, entries: Sequence[str]) -> List[str]:
    """The PNG files of one class under ``root``, sorted: every PNG file
    of each entry that is a folder, the files that match each entry that
    is a pattern (ending in ``.png``)."""
    return sorted({
        path
        for entry in entries
        for path in glob.glob(
            osp.join(
                root,
                entry if entry.endswith('.png') else osp.join(entry, '*.png')))
    })


@functools.lru_cache(maxsize=4)
def load_category_photos(root: str,
                         categories: Tuple[Tuple[str, Tuple[str, ...]], ...],
                         max_side: int) -> Tuple[Tuple[np.ndarray, ...], ...]:
    """The photographs of each category (BGRA ``uint8``, longest side at
    most ``max_side``, sorted by file name), read from the folders of
    ``categories`` (pairs of a name and its folders or file patterns, see
    :func:`category_files`) under ``root``.

    Raises:
        ValueError: A category has fewer than 3 photographs (a damaged or
            different version of the package).
    """
    photos = []
    for name, folders in categories:
        files = category_files(root, folders)
        if len(files) < 3:
            raise ValueError(
                f'{root}: the category {name!r} has {len(files)} '
                f'photographs in {", ".join(folders)} (at least 3 needed); '
                'is this the tuxpaint-stamps-default package?')
        photos.append(tuple(_read_rgba(path, max_side) for path in files))
    return tuple(photos)


def background_paths() -> List[str]:
    """The files of the background photographs that scikit-image and
    scikit-learn bundle (:func:`.photo_backgrounds.\
bundled_background_paths`)."""
    return list(bundled_background_paths())


def load_backgrounds() -> Tuple[np.ndarray, ...]:
    """The background photographs (BGR ``uint8``) of
    :func:`background_paths`; no download."""
    return load_background_files(tuple(background_paths()))


def write_stand_in_stamps(folder: str,
                          photos_per_category: int = 3,
                          size: int = 32,
                          drawings: bool = False,
                          taxonomy: str = 'coarse') -> str:
    """Write a small generated stand-in of the package's stamp tree into
    ``folder`` and return it: for every category of ``taxonomy``
    (:data:`TAXONOMIES`; and :data:`DRAWN_CATEGORIES` if ``drawings``),
    ``photos_per_category`` RGBA PNGs in its first folder (or named to
    match its first file pattern), a filled ellipse of the category's own
    hue and aspect (its photographs differ in shade) on a transparent
    ground. For tests and for trying the domain where the package is
    absent; it is not a benchmark."""
    if taxonomy not in TAXONOMIES:
        raise ValueError(f'write_stand_in_stamps: taxonomy must be one of '
                         f'{tuple(TAXONOMIES)}, got {taxonomy!r}')
    categories = dict(TAXONOMIES[taxonomy])
    if drawings:
        categories.update(DRAWN_CATEGORIES)
    for cls, folders in enumerate(categories.values()):
        first = folders[0]
        # A pattern's stand-ins are named by it ('*duck*.png':
        # 'stand_in_0duck.png'); a folder's are in it.
        path, name = ((osp.join(folder, osp.dirname(first)),
                       osp.basename(first)) if first.endswith('.png') else
                      (osp.join(folder, first), 'stand_in_*.png'))
        os.makedirs(path, exist_ok=True)
        hue = int(180 * cls / len(categories))
        axes = (size // 2 - 1, max(2, (size // 2 - 1) * (1 + cls % 3) // 3))
        for index in range(photos_per_category):
            image = np.zeros((size, size, 4), np.uint8)
            colour = cv2.cvtColor(
                np.array([[[hue, 200, 120 + 40 * index % 136]]], np.uint8),
                cv2.COLOR_HSV2BGR)[0, 0].tolist()
            cv2.ellipse(image, (size // 2, size // 2), axes, 0, 0, 360,
                        colour + [255], -1)
            file = name.replace('*', f'stand_in_{index}', 1).replace('*', '')
            cv2.imwrite(osp.join(path, file), image)
    return folder


def photo_pools(counts: Sequence[int],
                min_photos: int = 1) -> List[Dict[str, np.ndarray]]:
    """Split each category's photographs (``counts[c]`` of them) into the
    disjoint pools of :data:`POOLS` with a fixed seed, every pool holding
    at least ``min_photos``; returns one ``{pool: indices}`` per category.
    A category with fewer than ``3 * min_photos`` photographs is not split:
    each of its pools holds all of them (the statistics report the share
    of photographs seen in training that this leaves)."""
    rng = np.random.default_rng(_POOL_SEED)
    pools = []
    for count in counts:
        order = rng.permutation(count)
        if count < len(POOLS) * min_photos:
            pools.append({name: np.arange(count) for name, _ in POOLS})
            continue
        sizes = [
            max(min_photos, int(round(frac * count))) for _, frac in POOLS
        ]
        sizes[0] = count - sum(sizes[1:])
        ends = np.cumsum(sizes)
        pools.append({
            name: np.sort(order[end - size:end])
            for (name, _), size, end in zip(POOLS, sizes, ends)
        })
    return pools


@DATASETS.register_module()
class PhotoCanvases(CanvasPools, GeneratedMultiLabelDataset):
    """Cut-out photographs of real objects on real photographic
    backgrounds, with exact full labels.

    Every image is a canvas with 1 to ``len(object_counts)`` objects of
    distinct classes; its labels are their classes (:data:`PHOTO_CATEGORIES`,
    18 classes, or 23 with ``drawings=True``; with ``taxonomy='fine'``
    :data:`FINE_PHOTO_CATEGORIES`, 50 classes of photographs). Each data
    info carries the image (``uint8``, ``(img_size, img_size, 3)``, BGR
    like ``LoadImageFromFile``) under ``img``, ``img_shape``, ``ori_shape``,
    ``gt_label`` (sorted class indices), ``photo_ids`` (``(class, index)``
    of the photographs pasted), ``object_boxes`` (their ``(top, left,
    height, width)``) and ``background_id`` (the index of its background
    in :meth:`background_files`).

    Generative process, for every canvas from a random stream of its own
    (``seed``, the split, its index):

    1. **Background.** A square crop of a random side (35% to 100% of the
       shorter side) of one of the background photographs of the canvas's
       pool, resized to ``img_size``, mirrored with probability 1/2.
    2. **Objects.** ``k`` objects with probability ``object_counts[k-1]``,
       of ``k`` distinct classes drawn one after the other in proportion
       to their weights (uniform by default, see ``class_skew``), each a
       photograph drawn uniformly from its class's pool, mirrored with
       probability 1/2.
    3. **Layout.** Each is resized (aspect kept) so that its longer side
       is a random fraction in ``object_size`` of the canvas side, at a
       random position where its box covers at most ``max_overlap`` of any
       object already placed (later objects occlude earlier ones); one
       that finds no place in 30 tries is left out, with its label, and
       pasted through its alpha channel with a brightness factor in
       ``[0.85, 1.15]``.

    **Photo pools.** By default every split draws from all photographs
    (the canvases differ; the photographs recur, like a class's typical
    appearances in a large dataset). ``disjoint_photos=True`` is the
    instance-disjoint variant: each class's photographs are split once
    into train (50%), val (20%) and test (30%) pools, as
    :class:`~mmlml.datasets.DigitCanvases` splits its scans (with 4 to 35
    photographs per class, that variant is a few-shot problem); a class
    with too few photographs to give every pool ``disjoint_min_photos``
    is not split (its photographs serve every split, and the statistics
    report the share seen in training). The
    validation canvases are those that
    :class:`~mmlml.datasets.PartialLabelDataset` splits off, so
    ``val_frac`` and ``split_seed`` must equal the wrapper's (it checks).

    **Backgrounds.** ``backgrounds='bundled'`` (the default) draws every
    canvas on the ten photographs that scikit-image and scikit-learn
    bundle. ``backgrounds='wallpapers'`` adds the packaged wallpapers that
    are photographs (:data:`.photo_backgrounds.WALLPAPERS`, read where
    installed) and splits all of them once into train (50%), val (20%) and
    test (30%) pools (:func:`.photo_backgrounds.background_pools`): no
    validation or test canvas shows a background of a training canvas.

    Args:
        split (str): ``'train'`` or ``'test'``. Defaults to ``'train'``.
        num_samples (int): Number of canvases. Defaults to 1000.
        img_size (int): Side of the square canvases, at least 32.
            Defaults to 224 (EfficientNet-Lite0's native resolution).
        seed (int): Seed of the generator. Defaults to 0.
        object_counts (tuple[float]): The probabilities of 1, 2, ...
            objects per canvas (normalised). Defaults to ``(0.4, 0.4,
            0.2)``: 1.6 positives per canvas, about VOC's density (1.5).
        object_size (tuple[float]): Smallest and largest longer side of an
            object, as fractions of the canvas side in ``(0, 1]``.
            Defaults to ``(0.5, 0.8)``.
        max_overlap (float): Largest share, in ``[0, 1]``, of an object's
            box that another box may cover. Defaults to 0.5.
        disjoint_photos (bool): The instance-disjoint variant. Defaults to
            False.
        backgrounds (str): ``'bundled'`` or ``'wallpapers'`` (held-out
            backgrounds, see above). Defaults to ``'bundled'``.
        class_skew (float): The ratio, at least 1, of the first class's
            drawing weight to the last's (the classes in the order of
            :data:`PHOTO_CATEGORIES`, weights in geometric progression): a
            long tail of class frequencies. Defaults to 1 (uniform).
        drawings (bool): Add the drawn categories
            (:data:`DRAWN_CATEGORIES`; coarse taxonomy only). Defaults to
            False.
        taxonomy (str): The classes: ``'coarse'`` (:data:`PHOTO_CATEGORIES`)
            or ``'fine'`` (:data:`FINE_PHOTO_CATEGORIES`). Defaults to
            ``'coarse'``.
        disjoint_min_photos (int): With ``disjoint_photos``, the fewest
            photographs of a class in each split's pool; a class with fewer
            than three times as many is not split. Defaults to 1.
        stamps_root (str, optional): The stamp tree; see
            :func:`find_stamps_root`. Defaults to None.
        wallpapers_root (str, optional): The root the wallpapers' package
            paths are under, with ``backgrounds='wallpapers'``; see
            :func:`.photo_backgrounds.find_wallpapers`. Defaults to None.
        features (dict, optional): Give each canvas's frozen-backbone
            feature map instead of its image, computed once and cached (the
            protocols on cached features; keys in
            :func:`.feature_maps.check_features`). Defaults to None (the
            images).
        val_frac (float): The ``val_frac`` of the PartialLabelDataset that
            splits these canvases. Defaults to 0.2.
        split_seed (int): Its ``split_seed``. Defaults to 1200.
        metainfo (dict, optional): Extra meta information (``classes`` may
            not rename the classes). Defaults to None.
        **kwargs: Other arguments of
            :class:`mmpretrain.datasets.MultiLabelDataset`, except
            ``ann_file`` and ``data_root``.
    """

    hyperparameters = dict(
        split=SPLIT,
        num_samples=Integer(1000, low=1),
        img_size=Integer(224, low=32),
        seed=IMAGE_SEED,
        object_counts=RealTuple((0.4, 0.4, 0.2), low=0),
        object_size=RealTuple((0.5, 0.8), names=('smallest', 'largest')),
        max_overlap=Real(0.5, low=0, high=1),
        disjoint_photos=Flag(False),
        backgrounds=Choice('bundled', options=('bundled', 'wallpapers')),
        class_skew=Real(1, low=1),
        drawings=Flag(False),
        taxonomy=Choice('coarse', options=tuple(TAXONOMIES)),
        disjoint_min_photos=Integer(1, low=1),
        # The wrapper's declarations, so that the two agree.
        val_frac=VAL_FRAC,
        split_seed=SEED)
    rules = (
        Rule(
            lambda object_counts: sum(object_counts) > 0,
            '{owner}: object_counts, the probabilities of 1, 2, ... '
            'objects, must not be all zero, got {object_counts}'),
        Rule(
            lambda object_size: 0 < object_size[0] <= object_size[1] <= 1,
            '{owner}: object_size must be (smallest, largest) with 0 < '
            'smallest <= largest <= 1, got {object_size}'),
        Rule(
            lambda drawings, taxonomy: not drawings or taxonomy == 'coarse',
            "{owner}: drawings=True adds drawn classes to the coarse "
            "taxonomy only; taxonomy={taxonomy!r} is photographs alone"),
        Rule(
            lambda object_counts, drawings, taxonomy: len(object_counts) <=
            len(TAXONOMIES[taxonomy]) + (len(DRAWN_CATEGORIES)
                                         if drawings else 0),
            '{owner}: object_counts {object_counts} allows more objects of '
            'distinct classes than there are classes'),
    )

    def __init__(self,
                 *,
                 split: str = 'train',
                 num_samples: int = 1000,
                 img_size: int = 224,
                 seed: int = 0,
                 object_counts: Sequence[float] = (0.4, 0.4, 0.2),
                 object_size: Sequence[float] = (0.5, 0.8),
                 max_overlap: float = 0.5,
                 disjoint_photos: bool = False,
                 backgrounds: str = 'bundled',
                 class_skew: float = 1.,
                 drawings: bool = False,
                 taxonomy: str = 'coarse',
                 disjoint_min_photos: int = 1,
                 stamps_root: Optional[str] = None,
                 wallpapers_root: Optional[str] = None,
                 features: Optional[dict] = None,
                 val_frac: float = 0.2,
                 split_seed: int = 1200,
                 metainfo: Optional[dict] = None,
                 **kwargs):
        self.split = split
        self.num_samples = num_samples
        self.img_size = img_size
        self.seed = seed
        self.object_counts = object_counts
        self.object_size = object_size
        self.max_overlap = max_overlap
        self.disjoint_photos = disjoint_photos
        self.backgrounds = backgrounds
        self.class_skew = class_skew
        self.drawings = drawings
        self.taxonomy = taxonomy
        self.disjoint_min_photos = disjoint_min_photos
        self.val_frac = val_frac
        self.split_seed = split_seed
        check_settings(self)
        total = sum(self.object_counts)
        self.object_counts = tuple(c / total for c in self.object_counts)
        self.categories = dict(TAXONOMIES[self.taxonomy])
        if self.drawings:
            self.categories.update(DRAWN_CATEGORIES)
        self.stamps_root = find_stamps_root(stamps_root)
        self.wallpapers = (
            find_wallpapers(wallpapers_root)
            if self.backgrounds == 'wallpapers' else ())
        self.features = check_features(features)
        if self.features is not None:
            check_feature_pipeline(kwargs.get('pipeline'), type(self).__name__)
        super().__init__(
            split=self.split,
            num_samples=self.num_samples,
            img_size=self.img_size,
            seed=self.seed,
            classes=tuple(self.categories),
            named='after its photo categories',
            metainfo=metainfo,
            **kwargs)

    @property
    def num_label_columns(self) -> int:
        """The number of classes of the label matrix."""
        return len(self.categories)

    def background_files(self) -> List[str]:
        """The files of the background photographs: the bundled ones,
        then the wallpapers with ``backgrounds='wallpapers'``."""
        return background_paths() + list(self.wallpapers)

    def class_weights(self) -> Optional[np.ndarray]:
        """The probabilities of drawing each class first (``class_skew``
        in geometric progression), None when uniform."""
        if self.class_skew == 1:
            return None  # numpy's uniform draw, as in version 1
        count = len(self.categories)
        weights = self.class_skew**(-np.arange(count) / (count - 1))
        return weights / weights.sum()

    def check_train_val_split(self, num_samples: int, val_frac: float,
                              split_seed: int) -> None:
        """Raise unless PartialLabelDataset's train/validation split
        (``num_samples``, ``val_frac``, ``split_seed``) is the one the
        canvases were drawn for (only the instance-disjoint variant and
        the held-out backgrounds depend on it)."""
        other = self.other_split(num_samples, val_frac, split_seed)
        held_out = [
            setting for setting, holds in (('disjoint_photos=True',
                                            self.disjoint_photos),
                                           ("backgrounds='wallpapers'",
                                            self.backgrounds == 'wallpapers'))
            if holds
        ]
        if self.split != 'test' and held_out and other:
            ours, theirs = other
            raise ValueError(
                f'PhotoCanvases({", ".join(held_out)}) draws the validation '
                'canvases from other photographs than the training ones, '
                f'for the split num_samples={ours[0]}, val_frac={ours[1]}, '
                f'split_seed={ours[2]}; the wrapper splits with '
                f'num_samples={theirs[0]}, val_frac={theirs[1]}, '
                f'split_seed={theirs[2]}. Give PhotoCanvases the val_frac '
                'and split_seed of the PartialLabelDataset that wraps it.')

    def _canvas(self,
                rng: np.random.Generator,
                photos: Sequence[Sequence[np.ndarray]],
                pools: Sequence[np.ndarray],
                backgrounds: Sequence[np.ndarray],
                background_ids: np.ndarray,
                render: bool = True) -> dict:
        """Draw one canvas (steps 1 to 3) on one of ``backgrounds``
        (``background_ids`` of its pool) and return its data info (without
        ``img`` unless ``render``: the same draws, no pixels)."""
        size = self.img_size
        background_id = int(background_ids[int(
            rng.integers(len(background_ids)))])
        back = backgrounds[background_id]
        side = int(round(min(back.shape[:2]) * rng.uniform(0.35, 1.0)))
        top = int(rng.integers(back.shape[0] - side + 1))
        left = int(rng.integers(back.shape[1] - side + 1))
        mirror = rng.random() < 0.5
        if render:
            canvas = cv2.resize(
                back[top:top + side, left:left + side], (size, size),
                interpolation=cv2.INTER_AREA).astype(np.float32)
            if mirror:
                canvas = canvas[:, ::-1]
        count = 1 + int(
            rng.choice(len(self.object_counts), p=self.object_counts))
        classes = rng.choice(
            len(photos), size=count, replace=False, p=self.class_weights())
        boxes: List[Tuple[int, int, int, int]] = []
        photo_ids: List[Tuple[int, int]] = []
        for cls in classes:
            index = int(pools[cls][int(rng.integers(len(pools[cls])))])
            photo = photos[cls][index]
            smallest, largest = self.object_size
            longer = rng.uniform(smallest, largest) * size
            scale = longer / max(photo.shape[:2])
            height = max(2, min(size, int(round(photo.shape[0] * scale))))
            width = max(2, min(size, int(round(photo.shape[1] * scale))))
            box = free_box(
                ((int(rng.integers(size - height + 1)),
                  int(rng.integers(size - width + 1)), height, width)
                 for _ in range(_PLACEMENT_TRIES)), boxes, self.max_overlap)
            if box is None:
                continue
            mirror, brightness = rng.random() < 0.5, rng.uniform(0.85, 1.15)
            boxes.append(box)
            photo_ids.append((int(cls), index))
            if not render:
                continue
            patch = cv2.resize(
                photo, (width, height),
                interpolation=(cv2.INTER_AREA if scale < 1 else
                               cv2.INTER_LINEAR)).astype(np.float32)
            if mirror:
                patch = patch[:, ::-1]
            alpha = patch[..., 3:] / 255.
            colour = np.clip(patch[..., :3] * brightness, 0, 255)
            region = canvas[box[0]:box[0] + height, box[1]:box[1] + width]
            region[...] = region * (1 - alpha) + colour * alpha
        info: Dict[str, Any] = dict(
            img_shape=(size, size),
            ori_shape=(size, size),
            gt_label=sorted(cls for cls, _ in photo_ids),
            photo_ids=photo_ids,
            object_boxes=boxes,
            background_id=background_id)
        if render:
            info['img'] = np.ascontiguousarray(canvas.round().astype(np.uint8))
        return info

    def _draw(self, render: bool) -> List[dict]:
        """The data infos of all canvases (with images if ``render``)."""
        photos = load_category_photos(self.stamps_root,
                                      tuple(self.categories.items()),
                                      self.img_size)
        backgrounds = load_backgrounds() + load_background_files(
            self.wallpapers, WALLPAPER_MAX_SIDE)
        stream = SPLIT_STREAMS[self.split]
        if self.disjoint_photos:
            split_pools = photo_pools([len(p) for p in photos],
                                      self.disjoint_min_photos)
        every = [np.arange(len(p)) for p in photos]
        every_background = np.arange(len(backgrounds))
        if self.backgrounds == 'wallpapers':
            background_pool = background_pools(len(backgrounds))
        infos = []
        for idx, pool in enumerate(self.canvas_pools()):
            pools = ([p[pool]
                      for p in split_pools] if self.disjoint_photos else every)
            background_ids = (
                background_pool[pool]
                if self.backgrounds == 'wallpapers' else every_background)
            infos.append(
                self._canvas(
                    np.random.default_rng([self.seed, stream, idx]), photos,
                    pools, backgrounds, background_ids, render))
        return infos

    def layout(self) -> List[dict]:
        """The data infos of all canvases without their pixels (the
        classes, photographs, boxes and backgrounds that
        :meth:`load_data_list` draws, in a fraction of its time): what
        the domain's statistics read."""
        return self._draw(render=False)

    def description(self) -> dict:
        """What determines the canvases (the key of the feature cache):
        the generator's arguments and version, and the content of the
        photographs and backgrounds (a digest of each file: photographs
        replaced by others of the same size make another key)."""
        files = sorted((osp.relpath(path, self.stamps_root), file_digest(path))
                       for folders in self.categories.values()
                       for path in category_files(self.stamps_root, folders))
        # The declared settings (``drawings`` through the categories).
        settings = {
            name: getattr(self, name)
            for name in self.hyperparameters if name != 'drawings' and not (
                name in _SINCE_VERSION_1
                and getattr(self, name) == self.hyperparameters[name].default)
        }
        return dict(
            settings,
            generator=f'{type(self).__name__}/{GENERATOR_VERSION}',
            categories=self.categories,
            photographs=hashlib.sha256(repr(files).encode()).hexdigest(),
            backgrounds=[(osp.basename(path), file_digest(path))
                         for path in background_paths()] +
            [(name, file_digest(path))
             for (_, name, _), path in zip(WALLPAPERS, self.wallpapers)])

    def load_data_list(self) -> List[dict]:
        """Generate the canvases and their labels (one data info each, see
        the class docstring); with ``features``, the cached feature map of
        each canvas replaces its image.

        With ``features``, the infos are kept in this process for the next
        dataset of the same canvases (:data:`_FEATURE_DATA_LISTS`), as long
        as their cache file is the one they were read from: a sweep's
        worker builds the same three splits for each of its trials, and
        drawing the layouts and reading the maps was most of building
        them. Each dataset gets its own info dicts; the maps are shared,
        read only by the feature pipeline
        (:data:`~.feature_maps.FEATURE_TRANSFORMS`)."""
        if self.features is None:
            return self._draw(render=True)
        description = self.description()
        key = json.dumps(
            dict(canvases=description, features=self.features),
            sort_keys=True,
            default=str)
        path = feature_cache_path(description, self.features)
        kept = _FEATURE_DATA_LISTS.pop(key, None)
        if kept is not None and not self._kept_is_current(kept, path):
            kept = None
        if kept is None:
            infos = self._draw(render=False)
            maps = cached_feature_maps(
                description,
                lambda: np.stack([info['img'] for info in self._draw(True)]),
                self.features,
                count=len(infos),
                image_size=(self.img_size, self.img_size))
            for info, feature_map in zip(infos, maps):
                info['img'] = feature_map
                info['img_shape'] = feature_map.shape[:2]
            kept = (infos, _file_state(path))
        if path is not None:  # without a cache, nothing is kept either
            _FEATURE_DATA_LISTS[key] = kept  # the most recent last
            while len(_FEATURE_DATA_LISTS) > FEATURE_DATA_LISTS_KEPT:
                _FEATURE_DATA_LISTS.pop(next(iter(_FEATURE_DATA_LISTS)))
        return [dict(info) for info in kept[0]]

    def _kept_is_current(self, kept: tuple, path: Optional[str]) -> bool:
        """Whether kept infos still stand for their cache file: the same
        file, and maps of the backbone's shape, checked as a cache read
        checks them (:func:`~.feature_maps.read_cache`). Building that
        backbone draws from torch's random generator, so the training that
        follows is the same whether the infos were kept or read."""
        infos, state = kept
        if self.features is None or state != _file_state(path):
            return False
        shape = map_shape(self.features, (self.img_size, self.img_size))
        return not infos or infos[0]['img'].shape == shape

    def extra_repr(self) -> List[str]:
        """Describe the generator in ``repr``."""
        return super().extra_repr() + [
            f'Photographs: \t{self.stamps_root}',
            f'Disjoint photographs: \t{self.disjoint_photos}',
            f'Backgrounds: \t{self.backgrounds}'
        ]
