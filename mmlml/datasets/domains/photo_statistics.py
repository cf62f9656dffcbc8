"""What a real-photo benchmark record states about its domain
(:class:`~mmlml.datasets.PhotoCanvases`): the density and the long tail of
the labels, the share of the positives that each partial-label setting
hides, the share of positives among the labels that AN assumes negative,
and how much of the validation and test material the training canvases
show. Computed from the canvases' layout (no pixels, seconds).
"""
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

import numpy as np

from ..partial.protocol import PartialLabelProtocol
from .photo_canvases import PhotoCanvases

__all__ = [
    'SETTINGS', 'AN_SETTINGS', 'domain_statistics', 'config_statistics',
    'hidden_positive_share', 'assumed_negatives_positive_share',
    'single_positives_per_class'
]

#: The partial-label settings of the benchmark, by their record names:
#: ``(mode, ratio)`` of :class:`~mmlml.datasets.PartialLabelProtocol`.
SETTINGS: Dict[str, Tuple[str, Optional[float]]] = {
    'single_positive': ('single_positive', None),
    'r0.5': ('ratio', 0.5),
    'r0.8': ('ratio', 0.8),
}
#: The settings of ``assumed_negatives_positive_share``: those of
#: :data:`SETTINGS` and all labels (``full``, r = 0: nothing AN assumes
#: negative is a positive).
AN_SETTINGS: Dict[str, Tuple[str, Optional[float]]] = dict(
    SETTINGS, full=('full', None))


def _observed(full: np.ndarray, mode: str, ratio: Optional[float],
              seed: int) -> np.ndarray:
    """The observed positives (1, else 0) of the partial labels of
    ``(mode, ratio, seed)`` drawn over all rows of ``full``, as
    :class:`~mmlml.datasets.PartialLabelDataset` draws them; ``'full'``
    observes every positive."""
    if mode == 'full':
        return (full == 1).astype(np.uint8)
    observed = PartialLabelProtocol(mode, ratio, seed).generate(full)
    return (observed == 1).astype(np.uint8)


def hidden_positive_share(full: np.ndarray, rows: np.ndarray, mode: str,
                          ratio: Optional[float], seed: int) -> float:
    """The share of the positives of ``rows`` of the full labels ``full``
    that the partial labels of ``(mode, ratio, seed)`` hide, the labels
    drawn over all rows as :class:`~mmlml.datasets.PartialLabelDataset`
    draws them (then the rows taken)."""
    observed = _observed(full, mode, ratio, seed)
    positives = int(full[rows].sum())
    return 1 - int(observed[rows].sum()) / positives if positives else 0.


def assumed_negatives_positive_share(full: np.ndarray, rows: np.ndarray,
                                     mode: str, ratio: Optional[float],
                                     seed: int) -> float:
    """The share of positives (in the full labels ``full``) among the
    labels of ``rows`` that AN assumes negative, every label not observed
    positive in the partial labels of ``(mode, ratio, seed)`` (drawn as in
    :func:`hidden_positive_share`): the label noise AN trains on. In single
    positive it is ``(k - 1) / (C - 1)`` for ``k`` positives per image and
    ``C`` classes; 0 with all labels (``mode='full'``)."""
    observed = _observed(full, mode, ratio, seed)[rows]
    assumed = observed == 0
    count = int(assumed.sum())
    return int((full[rows] == 1)[assumed].sum()) / count if count else 0.


def single_positives_per_class(full: np.ndarray, rows: np.ndarray,
                               seed: int) -> np.ndarray:
    """The number of single positive labels of each class among ``rows``
    (the labels of ``seed`` drawn over all rows of ``full``)."""
    return _observed(full, 'single_positive', None, seed)[rows].sum(0)


def _seen_share(items: List[Set], seen: Set) -> float:
    """The share of the elements of ``items`` (one set per canvas, counted
    with repetition over canvases) that are in ``seen``."""
    total = sum(len(group) for group in items)
    return sum(len(group & seen) for group in items) / total if total else 0.


def domain_statistics(train: PhotoCanvases,
                      test: PhotoCanvases,
                      label_seeds: Sequence[int] = (1200, ),
                      digits: int = 4) -> dict:
    """The ``domain_statistics`` block of a real-photo record.

    Args:
        train (PhotoCanvases): The training canvases (``split='train'``),
            whose training and validation sides follow its ``val_frac``
            and ``split_seed`` (those of the PartialLabelDataset that wraps
            it).
        test (PhotoCanvases): The test canvases (``split='test'``).
        label_seeds (Sequence[int]): The seed of the partial labels of each
            training seed, in order (one seed for all: the same draw).
            Defaults to ``(1200, )``.
        digits (int): The decimals the shares and means are rounded to.
            Defaults to 4.

    Returns:
        dict: ``classes``; ``train_images`` (the training side of the
        split); ``labels_per_image`` (their mean positives);
        ``class_prior_range`` (the least and largest share of them showing
        a class); ``hidden_positive_share`` (per setting of
        :data:`SETTINGS`, the share of their positives hidden, averaged
        over the distinct ``label_seeds``);
        ``assumed_negatives_positive_share`` (per setting of
        :data:`AN_SETTINGS`, the share of positives among the labels AN
        assumes negative, :func:`assumed_negatives_positive_share`,
        averaged likewise); ``single_positives_per_class`` (the fewest and
        the mean single positive labels of a class, averaged likewise);
        ``test_photographs_seen_in_training`` and
        ``val_photographs_seen_in_training`` (the share of the objects of
        the test or validation canvases whose photograph is on a training
        canvas); ``test_backgrounds_seen_in_training`` and
        ``val_backgrounds_seen_in_training`` (the share of those canvases
        whose background photograph is under a training canvas);
        ``label_seed_per_training_seed`` (the training seeds draw distinct
        labels).

    Raises:
        ValueError: ``train`` or ``test`` is not of its split, or
            ``label_seeds`` is empty.
    """
    if train.split != 'train' or test.split != 'test':
        raise ValueError('domain_statistics takes the training canvases '
                         "(split='train') and the test canvases "
                         f"(split='test'), got {train.split!r} and "
                         f'{test.split!r}')
    if not len(label_seeds):
        raise ValueError('label_seeds must name the seed of the labels of '
                         'at least one training seed')
    infos, test_infos = train.layout(), test.layout()
    num_classes = train.num_label_columns
    full = np.zeros((len(infos), num_classes), np.uint8)
    for row, info in enumerate(infos):
        full[row, info['gt_label']] = 1
    pools = train.canvas_pools()
    rows = np.flatnonzero(pools == 'train')
    priors = full[rows].mean(0)
    seeds = sorted(set(int(seed) for seed in label_seeds))
    hidden = {
        name:
        float(
            np.mean([
                hidden_positive_share(full, rows, mode, ratio, seed)
                for seed in seeds
            ]))
        for name, (mode, ratio) in SETTINGS.items()
    }
    assumed = {
        name:
        float(
            np.mean([
                assumed_negatives_positive_share(full, rows, mode, ratio, seed)
                for seed in seeds
            ]))
        for name, (mode, ratio) in AN_SETTINGS.items()
    }
    singles = np.array(
        [single_positives_per_class(full, rows, seed) for seed in seeds])
    trained = [infos[row] for row in rows]
    seen_photos = {tuple(p) for info in trained for p in info['photo_ids']}
    seen_backgrounds = {info['background_id'] for info in trained}
    val = [info for info, pool in zip(infos, pools) if pool == 'val']

    def photos(canvases):
        return [{tuple(p) for p in info['photo_ids']} for info in canvases]

    def backgrounds(canvases):
        return [{info['background_id']} for info in canvases]

    return dict(
        classes=num_classes,
        train_images=len(rows),
        labels_per_image=round(float(full[rows].sum(1).mean()), digits),
        class_prior_range=[
            round(float(priors.min()), digits),
            round(float(priors.max()), digits)
        ],
        hidden_positive_share={
            name: round(share, digits)
            for name, share in hidden.items()
        },
        assumed_negatives_positive_share={
            name: round(share, digits)
            for name, share in assumed.items()
        },
        single_positives_per_class=[
            round(float(singles.min(1).mean()), digits),
            round(float(singles.mean()), digits)
        ],
        test_photographs_seen_in_training=round(
            _seen_share(photos(test_infos), seen_photos), digits),
        val_photographs_seen_in_training=round(
            _seen_share(photos(val), seen_photos), digits),
        test_backgrounds_seen_in_training=round(
            _seen_share(backgrounds(test_infos), seen_backgrounds), digits),
        val_backgrounds_seen_in_training=round(
            _seen_share(backgrounds(val), seen_backgrounds), digits),
        label_seed_per_training_seed=len(label_seeds) > 1
        and len(seeds) == len(label_seeds))


#: The keys of a domain config's dataset dicts that say how the canvases
#: are given, not which are drawn.
_NOT_DRAWING = ('type', 'features', 'pipeline', 'test_mode', 'lazy_init')


def _canvases(dataset: Any) -> PhotoCanvases:
    """The canvases of a config's dataset dict (a ``PhotoCanvases``),
    without their images, features or pipeline, not drawn yet."""
    settings = {
        k: v
        for k, v in dict(dataset).items() if k not in _NOT_DRAWING
    }
    if dict(dataset).get('type', 'PhotoCanvases') != 'PhotoCanvases':
        raise ValueError('domain statistics are those of PhotoCanvases, got '
                         f'a dataset of type {dataset["type"]!r}')
    return PhotoCanvases(lazy_init=True, **settings)


def config_statistics(cfg: Any,
                      label_seeds: Sequence[int] = (1200, ),
                      digits: int = 4) -> dict:
    """:func:`domain_statistics` of a real-photo domain config (e.g.
    ``configs/_base_/domains/photo_canvases_heldout.py`` read by MMEngine's
    ``Config``): the canvases of its training loader (inside its
    PartialLabelDataset) and of its test loader."""
    return domain_statistics(
        _canvases(cfg['train_dataloader']['dataset']['dataset']),
        _canvases(cfg['test_dataloader']['dataset']),
        label_seeds=label_seeds,
        digits=digits)
