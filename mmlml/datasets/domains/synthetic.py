"""A procedurally generated multi-label image dataset for demos and tests.

Nothing is downloaded and nothing is read from disk: every image and label is
drawn from a seeded generator when the dataset is built, so a first training
run works on any machine within minutes.
"""
import math
from typing import List, Optional, Tuple

import numpy as np

from mmlml.registry import DATASETS
from mmlml.utils.hyperparameters import Integer, Real, Rule, check_settings
from .generated_multi_label_dataset import (IMAGE_SEED, SPLIT, SPLIT_STREAMS,
                                            GeneratedMultiLabelDataset)

__all__ = ['SyntheticShapes']

# Sprite shapes and colours (RGB). A class is one (shape, colour) pair, so
# neither colour nor shape alone identifies it.
SHAPES = ('square', 'disk', 'triangle', 'plus', 'ring', 'diamond', 'cross',
          'frame')
COLOURS = (
    ('red', (215, 40, 40)),
    ('green', (40, 175, 60)),
    ('blue', (55, 85, 235)),
    ('yellow', (235, 215, 45)),
    ('magenta', (200, 55, 205)),
    ('cyan', (45, 205, 215)),
    ('white', (235, 235, 235)),
    ('orange', (245, 140, 30)),
)
MAX_CLASSES = len(SHAPES) * len(COLOURS)

# Fixed, seed-independent permutation of the (shape, colour) pairs, so that
# class names and appearances are the same for every seed and split.
_DESIGN_SEED = 20240


def _shape_mask(shape: str, size: int) -> np.ndarray:
    """Rasterise one shape into a boolean ``(size, size)`` mask."""
    centres = (np.arange(size) + 0.5) / size * 2 - 1
    v, u = np.meshgrid(centres, centres, indexing='ij')
    au, av = np.abs(u), np.abs(v)
    if shape == 'square':
        mask = (au <= 0.8) & (av <= 0.8)
    elif shape == 'disk':
        mask = u**2 + v**2 <= 0.9**2
    elif shape == 'triangle':
        mask = (v <= 0.85) & (au <= (v + 0.95) * 0.5)
    elif shape == 'plus':
        mask = ((au <= 0.3) & (av <= 0.95)) | ((av <= 0.3) & (au <= 0.95))
    elif shape == 'ring':
        radius = np.sqrt(u**2 + v**2)
        mask = (radius <= 0.95) & (radius >= 0.5)
    elif shape == 'diamond':
        mask = au + av <= 1.0
    elif shape == 'cross':
        mask = (np.abs(au - av) <= 0.35) & (np.maximum(au, av) <= 0.95)
    elif shape == 'frame':
        mask = (np.maximum(au, av) <= 0.95) & (np.maximum(au, av) >= 0.55)
    else:
        raise ValueError(f'unknown shape {shape!r}')
    return mask


def _pair_order(num_shapes: int, num_colours: int) -> List[Tuple[int, int]]:
    """(shape, colour) pairs in growing squares: the first ``k*k`` pairs use
    ``k`` shapes and ``k`` colours, the first ``k*(k+1)`` use ``k+1`` shapes
    and ``k`` colours, and so on."""
    pairs = []
    for k in range(max(num_shapes, num_colours)):
        pairs += [(k, j) for j in range(min(k, num_colours)) if k < num_shapes]
        pairs += [(i, k) for i in range(min(k + 1, num_shapes))
                  if k < num_colours]
    return pairs


@DATASETS.register_module()
class SyntheticShapes(GeneratedMultiLabelDataset):
    """Coloured sprites on noisy canvases, a long-tailed multi-label dataset.

    Each class is a (shape, colour) pair, for example ``'red disk'`` or
    ``'blue ring'``; the ``num_classes`` pairs use as few shapes and colours
    as possible (20 classes: 5 shapes x 4 colours), so a model must bind shape
    and colour locally: a red square and a blue disk in one image are not a
    blue square. Images are generated on the fly from a seed, fully
    labelled, and need no loading transform: each data info carries the
    image (``uint8``, ``(img_size, img_size, 3)``, BGR like
    ``LoadImageFromFile``) under ``img`` plus ``img_shape``, ``ori_shape``
    and ``gt_label`` (sorted class indices).

    Generative process, independently for every image:

    1. **Scene.** A latent scene ``z`` is drawn uniformly from 4 scenes.
       Classes ``c >= 2`` belong to scene ``c % 4``; the two most frequent
       classes belong to every scene.
    2. **Labels.** Class ``c`` (0-based, sorted by frequency) has base rate
       ``p_c = p_max * (c + 1) ** -alpha``. It is present with probability
       ``min(0.95, p_c * m)``, where ``m = cooccurrence`` for the classes of
       scene ``z``, ``m = (4 - cooccurrence) / 3`` for the other classes and
       ``m = 1`` for the two classes shared by all scenes: so the marginal
       rates stay near ``p_c`` while classes of one scene co-occur. An image
       with no class gets one, drawn proportionally to ``p_c``; an image
       with more classes than canvas cells keeps a random subset.
    3. **Clutter.** ``Poisson(distractors)`` extra sprites whose (shape,
       colour) pair is *not* a class are added; they carry no label.
    4. **Layout.** The canvas is a ``grid_size x grid_size`` grid of cells;
       every sprite (class or clutter) gets its own random cell, a random
       size between 60% and 100% of the cell and a random position inside
       it, so sprites never overlap.
    5. **Rendering.** A dark background of random colour, sprites in their
       class colour with per-sprite colour jitter (``colour_jitter``, in
       intensity levels) and brightness in ``[0.7, 1.1]``, then Gaussian
       pixel noise (``noise_std``) everywhere.

    Statistics with the defaults (20 classes, measured on 20,000 training
    images): 2.50 positives per image on average (COCO: 2.9), 1 to 9 per
    image, 24% of the images with a single positive; the most frequent
    class is in 61% of the images, the rarest in 4.1% (a power law with
    exponent 0.9: the frequency falls 15x from head to tail, see
    :meth:`class_frequencies`). The 5,000 training images of the demo
    configs have 2.49 positives per image. Call :meth:`get_label_matrix`
    for the full ``(N, C)`` label matrix.

    Generating 5,000 32x32 images takes about half a second. ``split='train'``
    and ``split='test'`` draw from different random streams of the same
    process, so the same ``seed`` gives two disjoint samples.

    Every argument is checked: integers (Python or numpy) where integers are
    expected, finite real numbers in the stated ranges for the others, and
    sample indices (an integer in ``[-len, len)``).

    Args:
        split (str): ``'train'`` or ``'test'``; selects the random stream.
            Defaults to ``'train'``.
        num_samples (int): Number of images. Defaults to 5000.
        num_classes (int): Number of classes, 2 to 64. Defaults to 20.
        img_size (int): Side of the square images in pixels.
            Defaults to 32.
        seed (int): Seed of the generator, a non-negative integer (never
            None: every process must draw the same images). Defaults to 0.
        p_max (float): Base rate of the most frequent class.
            Defaults to 0.6.
        alpha (float): Power-law exponent of the class rates.
            Defaults to 0.9.
        cooccurrence (float): Multiplier of the rates of the current scene's
            classes, in ``[1, 4)``; 1 makes classes independent.
            Defaults to 2.0.
        distractors (float): Mean number of unlabelled clutter sprites per
            image. Defaults to 0.3.
        grid_size (int): Cells per side of the layout grid; at most
            ``grid_size ** 2`` sprites per image. Defaults to 3.
        noise_std (float): Standard deviation of the pixel noise.
            Defaults to 8.
        colour_jitter (float): Standard deviation of the per-sprite colour
            jitter. Defaults to 12.
        source_for (int, optional): Make a *source task* for pretraining a
            backbone before the ``source_for``-class dataset (the analogue
            of ImageNet before COCO): the ``num_classes`` pairs are drawn as
            usual, but the pairs of the ``source_for``-class dataset are
            left unlabelled (they appear in the images, as clutter does),
            and the classes are the other ``num_classes - source_for``
            pairs, in the same order. With ``num_classes=64`` and
            ``source_for=20``, 44 classes that are not the demo's. Defaults
            to None (every pair is a class).
        metainfo (dict, optional): Extra meta information. Its ``classes``,
            if given, must equal the generated names (each class is the
            pair it draws, so it cannot be renamed). Defaults to None.
        **kwargs: Other arguments of
            :class:`~.GeneratedMultiLabelDataset`.

    Examples:
        >>> from mmlml.datasets import SyntheticShapes
        >>> dataset = SyntheticShapes(num_samples=100)
        >>> info = dataset.get_data_info(0)
        >>> info['img'].shape, info['img'].dtype
        ((32, 32, 3), dtype('uint8'))
        >>> dataset.get_label_matrix().shape
        (100, 20)
        >>> dataset.metainfo['classes'][:2]
        ('green ring', 'blue disk')
    """

    NUM_SCENES = 4
    NUM_SHARED = 2

    hyperparameters = dict(
        split=SPLIT,
        num_samples=Integer(5000, low=1),
        num_classes=Integer(20, low=2, high=MAX_CLASSES),
        # At least 4 pixels per grid cell (a rule below, with grid_size).
        img_size=Integer(32, low=4),
        seed=IMAGE_SEED,
        p_max=Real(0.6, low=0, high=1, low_open=True),
        alpha=Real(0.9, low=0),
        cooccurrence=Real(2.0, low=1, high=NUM_SCENES, high_open=True),
        distractors=Real(0.3, low=0),
        grid_size=Integer(3, low=1),
        noise_std=Real(8., low=0),
        colour_jitter=Real(12., low=0),
        source_for=Integer(None, optional=True, low=2))
    rules = (
        Rule(
            lambda img_size, grid_size: img_size >= 4 * grid_size,
            '{owner}: img_size must be an integer >= 4 * grid_size (4 '
            'pixels per grid cell), got img_size={img_size} with '
            'grid_size={grid_size}'),
        Rule(
            lambda source_for, num_classes: source_for is None or source_for <
            num_classes, '{owner}: source_for must be None or an int in [2, '
            'num_classes={num_classes}), got {source_for!r}'),
    )

    def __init__(self,
                 split: str = 'train',
                 num_samples: int = 5000,
                 num_classes: int = 20,
                 img_size: int = 32,
                 seed: int = 0,
                 p_max: float = 0.6,
                 alpha: float = 0.9,
                 cooccurrence: float = 2.0,
                 distractors: float = 0.3,
                 grid_size: int = 3,
                 noise_std: float = 8.,
                 colour_jitter: float = 12.,
                 source_for: Optional[int] = None,
                 metainfo: Optional[dict] = None,
                 **kwargs):
        self.split = split
        self.num_samples = num_samples
        self.num_classes = num_classes
        self.img_size = img_size
        self.seed = seed
        self.p_max = p_max
        self.alpha = alpha
        self.cooccurrence = cooccurrence
        self.distractors = distractors
        self.grid_size = grid_size
        self.noise_std = noise_std
        self.colour_jitter = colour_jitter
        self.source_for = source_for
        check_settings(self)
        num_classes = self.num_classes

        self.class_pairs, self.clutter_pairs = self._design(num_classes)
        self.label_columns = np.arange(num_classes)
        if self.source_for is not None:
            # The pairs are laid out in growing squares, so a smaller
            # design is always part of a larger one.
            target = self._design(self.source_for)[0]
            self.label_columns = np.asarray([
                i for i, pair in enumerate(self.class_pairs)
                if pair not in target
            ])
        classes = tuple(
            f'{COLOURS[c][0]} {SHAPES[s]}'
            for s, c in np.asarray(self.class_pairs)[self.label_columns])
        super().__init__(
            split=self.split,
            num_samples=self.num_samples,
            img_size=self.img_size,
            seed=self.seed,
            classes=classes,
            named='after the (colour, shape) pair each one draws (choose '
            'them with `num_classes` and `source_for`)',
            metainfo=metainfo,
            **kwargs)

    @staticmethod
    def _design(num_classes: int) -> Tuple[list, list]:
        """The (shape, colour) pairs of the classes, in decreasing order of
        frequency, and the pairs left for clutter."""
        side = math.ceil(math.sqrt(num_classes))
        pairs = _pair_order(side, side)[:num_classes]
        order = np.random.default_rng(_DESIGN_SEED).permutation(num_classes)
        class_pairs = [pairs[i] for i in order]
        clutter_pairs = [(s, c) for s in range(len(SHAPES))
                         for c in range(len(COLOURS))
                         if (s, c) not in class_pairs]
        return class_pairs, clutter_pairs

    def class_frequencies(self) -> np.ndarray:
        """Base rates ``p_c = p_max * (c + 1) ** -alpha`` of the classes
        (before scene modulation and the at-least-one-label rule); see
        :meth:`get_label_matrix` for the empirical ones."""
        ranks = np.arange(1, self.num_classes + 1, dtype=np.float64)
        return self.p_max * ranks**(-self.alpha)

    def _sample_labels(self, rng: np.random.Generator) -> np.ndarray:
        """Draw the ``(N, C)`` boolean label matrix (steps 1-2)."""
        n, num_classes = self.num_samples, self.num_classes
        base = self.class_frequencies()
        scenes = rng.integers(self.NUM_SCENES, size=n)
        group = np.arange(num_classes) % self.NUM_SCENES
        shared = np.arange(num_classes) < self.NUM_SHARED
        boost = self.cooccurrence
        damp = (self.NUM_SCENES - boost) / (self.NUM_SCENES - 1)
        mult = np.where(group[None] == scenes[:, None], boost, damp)
        mult[:, shared] = 1.
        prob = np.minimum(0.95, base[None] * mult)
        labels = rng.random((n, num_classes)) < prob

        empty = ~labels.any(1)
        forced = rng.choice(num_classes, size=n, p=base / base.sum())
        labels[np.flatnonzero(empty), forced[empty]] = True

        max_objects = self.grid_size**2
        crowded = np.flatnonzero(labels.sum(1) > max_objects)
        for i in crowded:  # rare: a handful of images at most
            keep = rng.choice(
                np.flatnonzero(labels[i]), max_objects, replace=False)
            labels[i] = False
            labels[i, keep] = True
        return labels

    def _render(self, rng: np.random.Generator,
                labels: np.ndarray) -> np.ndarray:
        """Lay out and draw the sprites of every image (steps 3-5)."""
        n, size, grid = self.num_samples, self.img_size, self.grid_size
        cells = grid * grid
        cell = size // grid
        margin = (size - grid * cell) // 2

        # Sprites: labelled ones first, then clutter, as flat arrays.
        img_idx, cls_idx = np.nonzero(labels)
        pair = np.asarray(self.class_pairs)[cls_idx]
        room = cells - labels.sum(1)
        num_clutter = np.minimum(rng.poisson(self.distractors, size=n), room)
        if len(self.clutter_pairs) == 0:
            num_clutter[:] = 0
        clutter_img = np.repeat(np.arange(n), num_clutter)
        clutter_pair = np.asarray(
            self.clutter_pairs, dtype=np.int64).reshape(-1, 2)[rng.integers(
                max(len(self.clutter_pairs), 1), size=len(clutter_img))]
        img_idx = np.concatenate([img_idx, clutter_img])
        pair = np.concatenate([pair, clutter_pair])
        num = len(img_idx)

        # Slot k of an image goes to the k-th cell of a random permutation.
        order = np.argsort(img_idx, kind='stable')
        img_idx, pair = img_idx[order], pair[order]
        starts = np.concatenate([[0],
                                 np.cumsum(np.bincount(img_idx,
                                                       minlength=n))[:-1]])
        slot = np.arange(num) - starts[img_idx]
        perms = np.argsort(rng.random((n, cells)), axis=1)
        cell_idx = perms[img_idx, slot]

        min_side = max(3, int(round(0.6 * cell)))
        sides = rng.integers(min_side, cell + 1, size=num)
        offset_y = (rng.random(num) * (cell - sides + 1)).astype(np.int64)
        offset_x = (rng.random(num) * (cell - sides + 1)).astype(np.int64)
        top = margin + (cell_idx // grid) * cell + offset_y
        left = margin + (cell_idx % grid) * cell + offset_x

        palette = np.asarray([rgb for _, rgb in COLOURS], dtype=np.float32)
        colour = palette[pair[:, 1]]
        colour = colour * rng.uniform(0.7, 1.1, size=(num, 1))
        colour += rng.normal(0, self.colour_jitter, size=(num, 3))
        colour = colour.astype(np.float32)

        background = rng.uniform(0, 70, size=(n, 1, 1, 3))
        canvas = np.broadcast_to(
            background.astype(np.float32), (n, size, size, 3)).copy()
        for shape in np.unique(pair[:, 0]):
            for side in np.unique(sides):
                sel = np.flatnonzero((pair[:, 0] == shape) & (sides == side))
                if len(sel) == 0:
                    continue
                dy, dx = np.nonzero(_shape_mask(SHAPES[shape], side))
                rows = top[sel, None] + dy[None]
                cols = left[sel, None] + dx[None]
                canvas[img_idx[sel, None], rows, cols] = colour[sel, None]

        noise = rng.standard_normal(canvas.shape, dtype=np.float32)
        canvas += noise * np.float32(self.noise_std)
        np.clip(canvas, 0, 255, out=canvas)
        # RGB -> BGR, the channel order of ``LoadImageFromFile``.
        return canvas[..., ::-1].round().astype(np.uint8)

    def load_data_list(self) -> List[dict]:
        """Generate the images and labels.

        Returns:
            list[dict]: One dict per image with ``img``, ``img_shape``,
            ``ori_shape`` and ``gt_label``.
        """
        stream = np.random.SeedSequence([self.seed, SPLIT_STREAMS[self.split]])
        label_rng, render_rng = (
            np.random.default_rng(s) for s in stream.spawn(2))
        labels = self._sample_labels(label_rng)
        images = self._render(render_rng, labels)
        labels = labels[:, self.label_columns]
        shape = (self.img_size, self.img_size)
        return [
            dict(
                img=images[i],
                img_shape=shape,
                ori_shape=shape,
                gt_label=np.flatnonzero(labels[i]).tolist())
            for i in range(self.num_samples)
        ]

    @property
    def num_label_columns(self) -> int:
        """The number of classes of the label matrix."""
        return len(self.label_columns)
