"""Label statistics of a :class:`~mmlml.datasets.PartialLabelDataset`: how
many positives the observed labels keep, how many labels they leave
unannotated, and where they contradict the full labels; and the lines the
wrapper logs about them."""
from typing import Dict, Optional, Union

import numpy as np

from .draws import row_steps

__all__ = [
    'partial_label_statistics', 'statistics_summary', 'no_positive_warning'
]

Statistics = Dict[str, Union[int, float, str, None]]


def partial_label_statistics(full: np.ndarray, observed: np.ndarray,
                             unknown: Optional[np.ndarray]) -> Statistics:
    """Count the labels of the selected samples of a partial-label dataset.

    The matrices are read in chunks of rows (:func:`row_steps`), so the
    counts need no temporary of their size.

    Args:
        full (np.ndarray): The ``(N, C)`` full labels (0/1): the positives
            of the wrapped dataset's annotation.
        observed (np.ndarray): The ``(N, C)`` observed labels: 1 observed
            positive, 0 unannotated, -1 observed negative.
        unknown (np.ndarray, optional): The ``(N, C)`` boolean labels that
            are unknown in the wrapped dataset's own annotation, or None.

    Returns:
        dict: ``num_images``, ``num_classes``, ``num_positives`` (full
        labels), ``num_observed_positives``, ``num_observed_negatives``,
        ``num_unannotated``, ``positives_per_image``,
        ``observed_positives_per_image``, ``kept_fraction`` (observed
        positives that are full-label positives / full positives),
        ``num_false_observed_positives`` (observed positives that are not
        full-label positives), ``observed_positive_precision`` (the
        fraction of observed positives that are full-label positives, None
        without observed positives), ``num_false_observed_negatives``
        (observed negatives that are full-label positives),
        ``num_images_without_positive`` (in the full labels),
        ``num_images_without_observed_positive`` and
        ``num_annotated_unknown`` (labels unknown in the wrapped dataset's
        own annotation).
    """
    num_images, num_classes = (int(n) for n in full.shape)
    num_pos = num_obs_pos = num_obs_neg = num_false_pos = 0
    num_false_neg = no_positive = no_observed = annotated_unknown = 0
    steps = row_steps(full)
    for start in steps:
        rows = slice(start, start + steps.step)
        block, obs = full[rows], observed[rows]
        num_pos += int(np.count_nonzero(block))
        positive, negative = obs == 1, obs == -1
        num_obs_pos += int(np.count_nonzero(positive))
        num_obs_neg += int(np.count_nonzero(negative))
        positive &= block == 0
        num_false_pos += int(np.count_nonzero(positive))
        negative &= block == 1
        num_false_neg += int(np.count_nonzero(negative))
        if num_classes:
            no_positive += int(np.count_nonzero(block.max(axis=1) == 0))
            no_observed += int(np.count_nonzero(obs.max(axis=1) < 1))
        if unknown is not None:
            annotated_unknown += int(np.count_nonzero(unknown[rows]))
    if not num_classes:
        no_positive = no_observed = num_images
    num_unknown = num_images * num_classes - num_obs_pos - num_obs_neg
    num_true_pos = num_obs_pos - num_false_pos
    precision = num_true_pos / num_obs_pos if num_obs_pos else None
    return dict(
        num_images=num_images,
        num_classes=num_classes,
        num_positives=num_pos,
        num_observed_positives=num_obs_pos,
        num_observed_negatives=num_obs_neg,
        num_unannotated=num_unknown,
        positives_per_image=num_pos / num_images if num_images else 0.,
        observed_positives_per_image=(num_obs_pos /
                                      num_images if num_images else 0.),
        kept_fraction=num_true_pos / num_pos if num_pos else 0.,
        num_false_observed_positives=num_false_pos,
        observed_positive_precision=precision,
        num_false_observed_negatives=num_false_neg,
        num_images_without_positive=no_positive,
        num_images_without_observed_positive=no_observed,
        num_annotated_unknown=annotated_unknown)


def statistics_summary(stats: Statistics, where: str) -> str:
    """The line that summarises the statistics, in the style of a dataset
    table.

    Args:
        stats (dict): :meth:`PartialLabelDataset.statistics` (the counts of
            :func:`partial_label_statistics` with the ``mode``, ``ratio``
            and ``label_file``).
        where (str): The labels' origin and the split, as the line names
            them (``'single_positive, split train'``, ``'file a.npy, split
            val (clean labels)'``...).

    Returns:
        str: The line. Observed labels that contradict the full labels are
        reported, and the precision of the observed positives is always
        reported for a label file.
    """
    contradictions = ''
    if (stats['label_file'] is not None
            or stats['num_false_observed_positives']
            or stats['num_false_observed_negatives']):
        precision = stats['observed_positive_precision']
        precision = 'n/a' if precision is None \
            else f'{100 * precision:.1f}%'
        contradictions = (
            ' Against the full labels: '
            f'{stats["num_false_observed_positives"]} observed positives '
            f'are not positives (precision {precision}), '
            f'{stats["num_false_observed_negatives"]} observed negatives '
            'are positives.')
    return (f'PartialLabelDataset [{where}]: '
            f'{stats["num_images"]} images, {stats["num_classes"]} classes, '
            f'positives {stats["num_positives"]} -> '
            f'{stats["num_observed_positives"]} '
            f'({stats["kept_fraction"]:.1%} kept), per image '
            f'{stats["positives_per_image"]:.2f} -> '
            f'{stats["observed_positives_per_image"]:.2f}, observed '
            f'negatives {stats["num_observed_negatives"]}, images without '
            f'positive {stats["num_images_without_positive"]}, unknown in '
            f'the annotation {stats["num_annotated_unknown"]}.'
            f'{contradictions}')


def no_positive_warning(stats: Statistics, where: str) -> str:
    """The warning about the images that carry no observed positive (see
    :func:`statistics_summary` for the arguments)."""
    return (f'PartialLabelDataset [{where}]: '
            f'{stats["num_images_without_observed_positive"]} images carry '
            'no observed positive '
            f'({stats["num_images_without_positive"]} have no positive '
            'in the annotation at all, e.g. NUS-WIDE rows without a '
            'concept or VOC images whose objects are all difficult). '
            'They stay in the set: a loss that assumes negatives trains '
            'them as all-negative images, one that ignores unknowns '
            'takes nothing from them.')
