"""Label statistics of a :class:`~mmlml.datasets.PartialLabelDataset`: how
many positives the observed labels keep, how many labels they leave
unannotated, and where they contradict the known labels of the wrapped
dataset's annotation; and the lines the wrapper logs about them.

The quality of labels against the annotation (:func:`known_label_quality`,
:func:`quality_text`) is counted on its *known* labels only: a label the
annotation leaves unknown (OpenImages' unverified labels, VOC's difficult
objects read as unknown) is neither a hit nor a miss, and is counted apart.
The training log of a label file and ``tools/pseudo_label.py`` report it
with the same two functions.
"""
from typing import Any, Dict, Optional, Union

import numpy as np

from .draws import row_steps

__all__ = [
    'partial_label_statistics', 'statistics_summary', 'no_positive_warning',
    'known_label_quality', 'quality_text'
]

#: Counts (int) and ratios (float, or None with nothing to count).
Quality = Dict[str, Union[int, float, None]]
#: The statistics: counts, ratios, the labels' origin and ``quality``.
Statistics = Dict[str, Any]

#: The counts of :func:`known_label_quality`, summed over chunks of rows.
_QUALITY_COUNTS = ('num_positives_on_known', 'num_true_positives',
                   'num_positives_on_unknown', 'num_annotated_negatives',
                   'num_negatives_left', 'num_negatives_on_positives')


def _and_not(mask: np.ndarray, other: Optional[np.ndarray]) -> None:
    """``mask &= ~other`` in place, without a temporary (``a > b`` is ``a
    and not b`` for booleans); nothing when ``other`` is None."""
    if other is not None:
        np.greater(mask, other, out=mask)


def _and(mask: np.ndarray, other: Optional[np.ndarray]) -> None:
    """``mask &= other`` in place; nothing when ``other`` is None."""
    if other is not None:
        np.logical_and(mask, other, out=mask)


def _quality_counts(labels: np.ndarray, full: np.ndarray,
                    unknown: Optional[np.ndarray],
                    entries: Optional[np.ndarray]) -> Dict[str, int]:
    """The counts of :func:`known_label_quality` on one block of rows.

    Two boolean buffers of the block's size, whatever is counted (the
    statistics of a label file are counted while the wrapper holds its
    matrices, at OpenImages' scale)."""
    annotated_positive = (
        full.view(bool) if full.dtype in (np.uint8, bool) else full == 1)
    positive = labels == 1
    _and(positive, entries)
    scratch = np.empty_like(positive)
    num_positives = int(np.count_nonzero(positive))
    num_on_unknown = 0
    if unknown is not None:
        np.logical_and(positive, unknown, out=scratch)
        num_on_unknown = int(np.count_nonzero(scratch))
    np.logical_and(positive, annotated_positive, out=scratch)
    _and_not(scratch, unknown)
    num_true_positives = int(np.count_nonzero(scratch))
    # the annotation's known negatives among the entries
    np.logical_not(annotated_positive, out=scratch)
    _and_not(scratch, unknown)
    _and(scratch, entries)
    num_annotated_negatives = int(np.count_nonzero(scratch))
    np.logical_and(scratch, positive, out=scratch)
    num_negatives_marked_positive = int(np.count_nonzero(scratch))
    # observed negatives on the annotation's known positives
    np.equal(labels, -1, out=positive)
    _and(positive, entries)
    np.logical_and(positive, annotated_positive, out=positive)
    _and_not(positive, unknown)
    return dict(
        num_positives_on_known=num_positives - num_on_unknown,
        num_true_positives=num_true_positives,
        num_positives_on_unknown=num_on_unknown,
        num_annotated_negatives=num_annotated_negatives,
        num_negatives_left=(num_annotated_negatives -
                            num_negatives_marked_positive),
        num_negatives_on_positives=int(np.count_nonzero(positive)))


def _quality_ratios(counts: Dict[str, int]) -> Quality:
    """The counts with their ``precision`` and ``negative_agreement``."""
    known, negatives = (counts['num_positives_on_known'],
                        counts['num_annotated_negatives'])
    return dict(
        counts,
        precision=counts['num_true_positives'] / known if known else None,
        negative_agreement=(counts['num_negatives_left'] /
                            negatives if negatives else None))


def known_label_quality(labels: np.ndarray,
                        full: np.ndarray,
                        unknown: Optional[np.ndarray],
                        entries: Optional[np.ndarray] = None) -> Quality:
    """How ``labels`` agree with the known labels of an annotation.

    The annotation is the wrapped dataset's own: ``full`` its positives and
    ``unknown`` the labels it leaves unknown (every other label a
    negative). Only its known labels judge ``labels``:

    - ``precision``: of the positives of ``labels`` on known labels, the
      share that are positives of the annotation (None without any);
    - ``negative_agreement``: of the annotation's negatives, the share that
      ``labels`` leaves non-positive (observed negative or unannotated;
      None without any);
    - ``num_positives_on_unknown``: the positives of ``labels`` on labels
      the annotation leaves unknown, counted apart (in neither ratio).

    The matrices are read in chunks of rows (:func:`row_steps`).

    Args:
        labels (np.ndarray): ``(N, C)`` labels in the training encoding (1
            positive, 0 unannotated, -1 negative): pseudo-labels, or the
            observed labels of a label file.
        full (np.ndarray): ``(N, C)`` 0/1 positives of the annotation.
        unknown (np.ndarray, optional): ``(N, C)`` boolean labels unknown
            in the annotation, or None (a fully labelled annotation).
        entries (np.ndarray, optional): ``(N, C)`` boolean entries to judge
            (e.g. those a pseudo-labeller decided on); None: all.

    Returns:
        dict: ``num_positives_on_known``, ``num_true_positives``,
        ``precision``, ``num_positives_on_unknown``,
        ``num_annotated_negatives``, ``num_negatives_left``,
        ``negative_agreement`` and ``num_negatives_on_positives`` (observed
        negatives of ``labels`` that are positives of the annotation).
    """
    totals = dict.fromkeys(_QUALITY_COUNTS, 0)
    steps = row_steps(full)
    for start in steps:
        rows = slice(start, start + steps.step)
        counts = _quality_counts(labels[rows], full[rows],
                                 None if unknown is None else unknown[rows],
                                 None if entries is None else entries[rows])
        for key, value in counts.items():
            totals[key] += value
    return _quality_ratios(totals)


def quality_text(quality: Quality, what: str) -> str:
    """The words of :func:`known_label_quality`, the same in the training
    log and in ``tools/pseudo_label.py``'s summary, e.g. ``"12 pseudo-
    positives on known labels: precision 75.0%; agreement with the 40
    annotated negatives 97.5%; 3 on labels the annotation leaves unknown,
    left out"``.

    Args:
        quality (dict): :func:`known_label_quality`'s result.
        what (str): What the positives are (``'observed positives'``,
            ``'pseudo-positives added'``).
    """

    def percent(value):
        return 'n/a' if value is None else f'{100 * value:.1f}%'

    return (f'{quality["num_positives_on_known"]} {what} on known labels: '
            f'precision {percent(quality["precision"])}; agreement with the '
            f'{quality["num_annotated_negatives"]} annotated negatives '
            f'{percent(quality["negative_agreement"])}; '
            f'{quality["num_positives_on_unknown"]} on labels the annotation '
            'leaves unknown, left out')


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
        ``num_false_observed_positives`` (observed positives on known
        negatives of the annotation), ``observed_positive_precision`` (the
        fraction of the observed positives on known labels that are
        positives, None without any), ``num_false_observed_negatives``
        (observed negatives that are known positives),
        ``num_images_without_positive`` (in the full labels),
        ``num_images_without_observed_positive``,
        ``num_annotated_unknown`` (labels unknown in the wrapped dataset's
        own annotation) and ``quality`` (:func:`known_label_quality` of the
        observed labels: observed positives on unknown labels are counted
        apart, in no ratio).
    """
    num_images, num_classes = (int(n) for n in full.shape)
    num_pos = num_obs_pos = num_obs_neg = 0
    no_positive = no_observed = annotated_unknown = 0
    counts = dict.fromkeys(_QUALITY_COUNTS, 0)
    steps = row_steps(full)
    for start in steps:
        rows = slice(start, start + steps.step)
        block, obs = full[rows], observed[rows]
        block_unknown = None if unknown is None else unknown[rows]
        num_pos += int(np.count_nonzero(block))
        num_obs_pos += int(np.count_nonzero(obs == 1))
        num_obs_neg += int(np.count_nonzero(obs == -1))
        for key, value in _quality_counts(obs, block, block_unknown,
                                          None).items():
            counts[key] += value
        if num_classes:
            no_positive += int(np.count_nonzero(block.max(axis=1) == 0))
            no_observed += int(np.count_nonzero(obs.max(axis=1) < 1))
        if block_unknown is not None:
            annotated_unknown += int(np.count_nonzero(block_unknown))
    if not num_classes:
        no_positive = no_observed = num_images
    num_unknown = num_images * num_classes - num_obs_pos - num_obs_neg
    quality = _quality_ratios(counts)
    num_true_pos = counts['num_true_positives']
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
        num_false_observed_positives=(counts['num_positives_on_known'] -
                                      num_true_pos),
        observed_positive_precision=quality['precision'],
        num_false_observed_negatives=counts['num_negatives_on_positives'],
        num_images_without_positive=no_positive,
        num_images_without_observed_positive=no_observed,
        num_annotated_unknown=annotated_unknown,
        quality=quality)


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
        str: The line. Observed labels that contradict the known labels of
        the annotation are reported with the quality of the observed
        positives (:func:`quality_text`), always for a label file.
    """
    contradictions = ''
    quality = stats['quality']
    if (stats['label_file'] is not None
            or stats['num_false_observed_positives']
            or stats['num_false_observed_negatives']
            or quality['num_positives_on_unknown']):
        contradictions = (
            ' Against the known labels of the annotation: '
            f'{stats["num_false_observed_positives"]} observed positives '
            f'are negatives there, '
            f'{stats["num_false_observed_negatives"]} observed negatives '
            'are positives; ' + quality_text(quality, 'observed positives') +
            '.')
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
