r"""How a trained model scores the labels missing from partial annotations.

The functions take, for ``N`` samples and ``C`` classes, all as ``(N, C)``
arrays:

- ``scores``: the model's probabilities :math:`p \in [0, 1]`;
- ``observed``: the training encoding of the partial labels (1 observed
  positive, 0 unannotated, -1 observed negative), e.g.
  :attr:`~mmlml.datasets.PartialLabelDataset.observed_labels`;
- ``full``: the true labels (1 positive, 0 negative), e.g.
  :attr:`~mmlml.datasets.PartialLabelDataset.full_labels`.

They split the entries into the groups of :data:`GROUPS`
(:func:`label_groups`) and measure how well the scores tell the missing
positives from the true negatives among the unannotated entries, as the
papers' diagnostic figures do:

- :func:`group_histograms`: probability histograms of the groups, the
  distributions of Zhang et al.'s Hill/SPLC paper (Fig. 2 and 5);
- :func:`unannotated_wasserstein`: the Wasserstein-1 distance between the
  scores of unannotated positives and unannotated negatives, per class
  (Zhou et al., EM/APL, Fig. 4(a)) and pooled over classes (the GR Loss
  paper, Fig. 3(a));
- :func:`predictive_values`: PPV and NPV of a threshold rule (the LASD
  paper, Fig. 2);
- :func:`apl_rule_mask` and :func:`pseudo_label_accuracy`: the accuracy of
  APL's negative pseudo-labels (EM/APL, Table 4);
- :func:`missing_label_summary`: the numbers above in one dictionary.

Everything is plain numpy, with exact computations (no binning except in
the histograms). Bad shapes or values raise a ``ValueError`` that names
the argument. The inputs are checked, and the entries split into the
groups, by :mod:`.missing_label_groups`; its names are importable from here
too.
"""
from typing import Dict, Literal, Optional, Tuple, Union

import numpy as np

from .missing_label_groups import (GROUP_TITLES, GROUPS, ArrayLike,
                                   check_label_values, check_score_inputs,
                                   label_groups)

__all__ = [
    'GROUPS', 'GROUP_TITLES', 'check_score_inputs', 'label_groups',
    'group_histograms', 'wasserstein_1d', 'unannotated_wasserstein',
    'predictive_values', 'apl_rule_mask', 'pseudo_label_accuracy',
    'missing_label_summary'
]


def _check_bins(bins: Union[int, ArrayLike]) -> np.ndarray:
    """The bin edges of ``bins``: a number of uniform bins on [0, 1] or
    increasing edges that cover [0, 1]."""
    if isinstance(bins, (int, np.integer)) and not isinstance(bins, bool):
        if bins < 1:
            raise ValueError(f'bins must be a positive integer, got {bins}')
        return np.linspace(0., 1., int(bins) + 1)
    edges = np.asarray(bins, dtype=np.float64)
    if edges.ndim != 1 or edges.size < 2 or not (np.diff(edges) > 0).all():
        raise ValueError('bins must be an integer or increasing bin edges, '
                         f'got {bins!r}')
    if edges[0] > 0 or edges[-1] < 1:
        raise ValueError('the bin edges must cover [0, 1], got '
                         f'[{edges[0]:g}, {edges[-1]:g}]')
    return edges


def group_histograms(
    scores: ArrayLike,
    observed: ArrayLike,
    full: ArrayLike,
    bins: Union[int,
                ArrayLike] = 20) -> Tuple[np.ndarray, Dict[str, np.ndarray]]:
    """Histograms of the probabilities of each group, classes pooled.

    Args:
        scores, observed, full: See the module docstring.
        bins (int | array-like): The number of uniform bins on ``[0, 1]``,
            or increasing edges covering ``[0, 1]``. Bins are half-open,
            ``[e_k, e_{k+1})``, except the last, which includes its right
            edge (``numpy.histogram``). Defaults to 20.

    Returns:
        tuple: The ``(B + 1,)`` edges and a dict from each name of
        :data:`GROUPS` to its ``(B,)`` int64 counts, which sum to the size
        of the group.
    """
    scores, observed, full = check_score_inputs(scores, observed, full)
    edges = _check_bins(bins)
    hists = {}
    for name, mask in label_groups(observed, full).items():
        counts, _ = np.histogram(scores[mask], bins=edges)
        hists[name] = counts.astype(np.int64)
    return edges, hists


def wasserstein_1d(u: ArrayLike, v: ArrayLike) -> float:
    r"""The exact Wasserstein-1 distance between two empirical
    distributions on the real line.

    .. math::
        W_1(u, v) = \int_{-\infty}^{\infty} |F_u(x) - F_v(x)|\, dx,

    with :math:`F_u`, :math:`F_v` the empirical CDFs of the samples (equal
    weights). It is computed from the sorted union of the samples, where
    both CDFs are piecewise constant, as ``scipy.stats.wasserstein_distance``
    does. For samples of the same size it is the mean absolute difference
    of the sorted samples.

    Args:
        u (array-like): The first sample, 1-D, non-empty, finite.
        v (array-like): The second sample, 1-D, non-empty, finite.

    Returns:
        float: The distance (in the units of the samples).
    """
    arrays = []
    for name, array in (('u', u), ('v', v)):
        array = np.asarray(array, dtype=np.float64)
        if array.ndim != 1 or array.size == 0:
            raise ValueError(f'{name} must be a non-empty 1-D sample, got '
                             f'shape {array.shape}')
        if not np.isfinite(array).all():
            raise ValueError(f'{name} must be finite')
        arrays.append(np.sort(array))
    u, v = arrays
    values = np.concatenate([u, v])
    values.sort(kind='mergesort')
    deltas = np.diff(values)
    u_cdf = np.searchsorted(u, values[:-1], side='right') / u.size
    v_cdf = np.searchsorted(v, values[:-1], side='right') / v.size
    return float(np.sum(np.abs(u_cdf - v_cdf) * deltas))


def unannotated_wasserstein(
        scores: ArrayLike, observed: ArrayLike,
        full: ArrayLike) -> Dict[str, Union[float, int, np.ndarray]]:
    r"""The Wasserstein-1 distance (:func:`wasserstein_1d`) between the
    scores of the unannotated positives (missing positives) and of the
    unannotated negatives.

    A larger distance means that the scores tell the missing labels from the
    true negatives apart better: Zhou et al. (EM/APL, Fig. 4(a)) plot it per
    class for AN and EM; the GR Loss paper (Fig. 3(a)) per epoch for all
    classes and all unannotated labels. On probabilities it lies in
    ``[0, 1]``: 1 when every missing positive scores 1 and every true
    negative 0, 0 when the two distributions are the same.

    Args:
        scores, observed, full: See the module docstring.

    Returns:
        dict: ``per_class``, the ``(C,)`` float64 distances, NaN for a
        class without any unannotated positive or without any unannotated
        negative; ``undefined``, the int64 indices of those classes;
        ``mean``, the mean of the defined per-class distances (NaN if
        none); ``pooled``, the distance between the two groups with every
        class pooled (NaN if a group is empty); ``num_missing_positive``
        and ``num_unannotated_negative``, the ``(C,)`` int64 sizes of the
        groups.
    """
    scores, observed, full = check_score_inputs(scores, observed, full)
    groups = label_groups(observed, full)
    pos, neg = groups['missing_positive'], groups['unannotated_negative']
    num_classes = scores.shape[1]
    per_class = np.full(num_classes, np.nan)
    for c in range(num_classes):
        u, v = scores[pos[:, c], c], scores[neg[:, c], c]
        if u.size and v.size:
            per_class[c] = wasserstein_1d(u, v)
    u, v = scores[pos], scores[neg]
    pooled = wasserstein_1d(u, v) if u.size and v.size else float('nan')
    defined = ~np.isnan(per_class)
    return dict(
        per_class=per_class,
        undefined=np.flatnonzero(~defined).astype(np.int64),
        mean=float(per_class[defined].mean())
        if defined.any() else float('nan'),
        pooled=pooled,
        num_missing_positive=pos.sum(0).astype(np.int64),
        num_unannotated_negative=neg.sum(0).astype(np.int64))


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den`` as float64, NaN where ``den`` is 0."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.full(np.broadcast(num, den).shape, np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _nanmean(values: np.ndarray, axis: int) -> np.ndarray:
    """The mean over ``axis`` of the non-NaN values, NaN where all are."""
    defined = ~np.isnan(values)
    total = np.where(defined, values, 0.).sum(axis)
    return _ratio(total, defined.sum(axis))


def predictive_values(scores: ArrayLike,
                      observed: ArrayLike,
                      full: ArrayLike,
                      thr: Union[float, ArrayLike] = 0.5,
                      among: str = 'unannotated',
                      strict: bool = False) -> Dict[str, np.ndarray]:
    r"""PPV and NPV of the threshold rule "positive iff :math:`p \ge thr`".

    Among the selected entries (``among``), with the full labels as the
    truth:

    .. math::
        \mathrm{TP} = |\{p \ge thr, y = 1\}|,\
        \mathrm{FP} = |\{p \ge thr, y = 0\}|,\
        \mathrm{TN} = |\{p < thr, y = 0\}|,\
        \mathrm{FN} = |\{p < thr, y = 1\}|,

    :math:`\mathrm{PPV} = \mathrm{TP} / (\mathrm{TP} + \mathrm{FP})` (the
    precision of the entries called positive) and :math:`\mathrm{NPV} =
    \mathrm{TN} / (\mathrm{TN} + \mathrm{FN})` (the precision of those
    called negative), NaN when the denominator is 0. On the unannotated
    entries they say how far a method that relabels by a threshold (SPLC's
    pseudo-positives, LASD's disambiguation) can trust its rule: the LASD
    paper (Fig. 2) plots the PPV and NPV of :math:`p > \tau`, averaged over
    labels, per epoch.

    Args:
        scores, observed, full: See the module docstring.
        thr (float | array-like): One threshold or a 1-D grid, in
            ``[0, 1]``. Defaults to 0.5.
        among (str): ``'unannotated'`` (``observed == 0``, default) or
            ``'all'`` entries (the LASD paper's test-set view).
        strict (bool): Use :math:`p > thr` instead of :math:`p \ge thr`
            (the convention of SPLC and of the LASD paper; MMPretrain's
            metrics and the missing-label diagnostics hook use ``>=``).
            Defaults to False.

    Returns:
        dict: ``thr``, the ``(T,)`` thresholds; ``tp``, ``fp``, ``tn``,
        ``fn``, ``(T,)`` int64 counts over all classes; ``ppv``, ``npv``,
        ``(T,)`` pooled over classes (micro); ``ppv_per_class``,
        ``npv_per_class``, ``(T, C)``; ``ppv_macro``, ``npv_macro``, ``(T,)``
        means of the per-class values over the classes where they are
        defined (the LASD paper's average over labels). A scalar ``thr``
        still gives arrays with ``T = 1``.
    """
    scores, observed, full = check_score_inputs(scores, observed, full)
    thrs = np.atleast_1d(np.asarray(thr, dtype=np.float64))
    if thrs.ndim != 1 or thrs.size == 0 or not np.isfinite(thrs).all() or (
            thrs.min() < 0 or thrs.max() > 1):
        raise ValueError('thr must be a threshold or a 1-D grid of '
                         f'thresholds in [0, 1], got {thr!r}')
    if among not in ('unannotated', 'all'):
        raise ValueError("among must be 'unannotated' or 'all', got "
                         f'{among!r}')
    selected = observed == 0 if among == 'unannotated' else np.ones_like(
        observed, dtype=bool)
    side: Literal['left', 'right'] = 'right' if strict else 'left'
    num_classes = scores.shape[1]
    shape = (thrs.size, num_classes)
    tp, fp, tn, fn = (np.zeros(shape, dtype=np.int64) for _ in range(4))
    for c in range(num_classes):
        column, truth = scores[selected[:, c], c], full[selected[:, c], c]
        pos, neg = np.sort(column[truth == 1]), np.sort(column[truth == 0])
        pos_below = np.searchsorted(pos, thrs, side=side)
        neg_below = np.searchsorted(neg, thrs, side=side)
        tp[:, c], fn[:, c] = pos.size - pos_below, pos_below
        fp[:, c], tn[:, c] = neg.size - neg_below, neg_below
    ppv_per_class, npv_per_class = _ratio(tp, tp + fp), _ratio(tn, tn + fn)
    totals = [x.sum(1) for x in (tp, fp, tn, fn)]
    return dict(
        thr=thrs,
        tp=totals[0],
        fp=totals[1],
        tn=totals[2],
        fn=totals[3],
        ppv=_ratio(totals[0], totals[0] + totals[1]),
        npv=_ratio(totals[2], totals[2] + totals[3]),
        ppv_per_class=ppv_per_class,
        npv_per_class=npv_per_class,
        ppv_macro=_nanmean(ppv_per_class, 1),
        npv_macro=_nanmean(npv_per_class, 1))


def apl_rule_mask(scores: ArrayLike,
                  observed: ArrayLike,
                  theta: float = 0.9) -> np.ndarray:
    r"""The negative pseudo-labels that APL's rule picks from ``scores``.

    For every class :math:`c` with :math:`Z_c` unannotated entries
    (``observed == 0``), the :math:`\lfloor \theta Z_c \rfloor` unannotated
    entries with the lowest probability (the lower sample index first among
    equal scores), as in the asymmetric pseudo-labelling of Zhou et al.
    (ECCV 2022, Sec. 3.3), whose sample proportion :math:`\theta` is 90%.

    This applies the rule once, to one set of scores. In training,
    :class:`~mmlml.hooks.APLHook` picks a quota per epoch from the scores
    of that epoch and never revisits its choices, so its pseudo-labels
    differ; read them from the checkpoint when it holds them (the label
    store, see ``tools/analysis/missing_label_scores.py``).

    Args:
        scores (array-like): ``(N, C)`` probabilities.
        observed (array-like): ``(N, C)`` training encoding.
        theta (float): The fraction :math:`\theta` in ``[0, 1]``.
            Defaults to 0.9.

    Returns:
        np.ndarray: The ``(N, C)`` boolean mask of the pseudo-labelled
        entries (all unannotated).
    """
    scores, observed, _ = check_score_inputs(scores, observed)
    if isinstance(theta, bool) or not isinstance(
            theta, (int, float, np.floating)) or not 0 <= theta <= 1:
        raise ValueError(f'theta must be a fraction in [0, 1], got {theta!r}')
    mask = np.zeros(scores.shape, dtype=bool)
    for c in range(scores.shape[1]):
        candidates = np.flatnonzero(observed[:, c] == 0)
        quota = int(np.floor(theta * candidates.size))
        if quota:
            order = np.argsort(scores[candidates, c], kind='stable')
            mask[candidates[order[:quota]], c] = True
    return mask


def pseudo_label_accuracy(
    mask: ArrayLike,
    full: ArrayLike,
    target: str = 'negative',
    observed: Optional[ArrayLike] = None
) -> Dict[str, Union[float, int, np.ndarray]]:
    """The fraction of pseudo-labels that agree with the true labels.

    The accuracy of EM/APL's Table 4: for negative pseudo-labels (APL),
    the fraction of the pseudo-labelled entries whose full label is 0; for
    positive ones (LL-Cp's and OPML's corrections), whose full label is 1.

    Args:
        mask (array-like): ``(N, C)`` booleans, True where an entry holds a
            pseudo-label.
        full (array-like): ``(N, C)`` true labels.
        target (str): ``'negative'`` or ``'positive'``, what the
            pseudo-labels say. Defaults to ``'negative'``.
        observed (array-like, optional): ``(N, C)`` training encoding; if
            given, a pseudo-label on an annotated entry is refused.

    Returns:
        dict: ``accuracy`` (float, NaN without pseudo-labels),
        ``num_pseudo_labels``, ``num_correct`` (ints), ``per_class`` (``(C,)``
        float64, NaN for a class without pseudo-labels), ``per_class_count``
        (``(C,)`` int64).
    """
    mask = np.asarray(mask)
    full = np.asarray(full)
    if mask.ndim != 2 or mask.dtype != bool:
        raise ValueError('mask must be an (N, C) boolean array, got shape '
                         f'{mask.shape} and dtype {mask.dtype}')
    if full.shape != mask.shape:
        raise ValueError(f'full must have the shape of mask (N, C) = '
                         f'{mask.shape}, got {full.shape}')
    full = check_label_values('full', full, (0, 1))
    if target not in ('negative', 'positive'):
        raise ValueError("target must be 'negative' or 'positive', got "
                         f'{target!r}')
    if observed is not None:
        observed = np.asarray(observed)
        if observed.shape != mask.shape:
            raise ValueError(f'observed must have the shape of mask (N, C) '
                             f'= {mask.shape}, got {observed.shape}')
        observed = check_label_values('observed', observed, (-1, 0, 1))
        annotated = int((mask & (observed != 0)).sum())
        if annotated:
            raise ValueError(f'mask marks {annotated} annotated entries '
                             '(observed != 0): pseudo-labels are given to '
                             'unannotated entries only; are mask and '
                             'observed of the same samples?')
    correct = mask & (full == (1 if target == 'positive' else 0))
    count = mask.sum(0).astype(np.int64)
    num_correct = int(correct.sum())
    total = int(count.sum())
    return dict(
        accuracy=num_correct / total if total else float('nan'),
        num_pseudo_labels=total,
        num_correct=num_correct,
        per_class=_ratio(correct.sum(0), count),
        per_class_count=count)


def missing_label_summary(
        scores: ArrayLike,
        observed: ArrayLike,
        full: ArrayLike,
        thr: float = 0.5,
        theta: float = 0.9,
        pseudo_labels: Optional[ArrayLike] = None,
        pseudo_label_target: str = 'negative') -> Dict[str, object]:
    """The numbers of the diagnostic figures in one dictionary.

    Args:
        scores, observed, full: See the module docstring.
        thr (float): The threshold of PPV and NPV (:math:`p \\ge thr`).
            Defaults to 0.5.
        theta (float): The fraction of :func:`apl_rule_mask`.
            Defaults to 0.9.
        pseudo_labels (array-like, optional): ``(N, C)`` boolean mask of
            the pseudo-labels a method assigned in training (e.g. read from
            a checkpoint's label store).
        pseudo_label_target (str): What they say, ``'negative'`` or
            ``'positive'``. Defaults to ``'negative'``.

    Returns:
        dict: ``num_samples``, ``num_classes``; ``counts``, the size of
        each group of :data:`GROUPS`; ``w1_pooled``, ``w1_mean`` and
        ``w1_undefined_classes`` (:func:`unannotated_wasserstein`);
        ``thr``, ``ppv``, ``npv``, ``ppv_macro``, ``npv_macro`` at ``thr``
        on the unannotated entries (:func:`predictive_values`);
        ``apl_rule_theta``, ``apl_rule_accuracy`` and
        ``apl_rule_num_pseudo_labels``; with ``pseudo_labels``,
        ``pseudo_label_target``, ``pseudo_label_accuracy`` and
        ``num_pseudo_labels``.
    """
    scores, observed, full = check_score_inputs(scores, observed, full)
    groups = label_groups(observed, full)
    w1 = unannotated_wasserstein(scores, observed, full)
    pv = predictive_values(scores, observed, full, thr)
    rule = pseudo_label_accuracy(
        apl_rule_mask(scores, observed, theta), full, 'negative')
    summary = dict(
        num_samples=int(scores.shape[0]),
        num_classes=int(scores.shape[1]),
        counts={
            name: int(mask.sum())
            for name, mask in groups.items()
        },
        w1_pooled=w1['pooled'],
        w1_mean=w1['mean'],
        w1_undefined_classes=np.asarray(w1['undefined']).tolist(),
        thr=float(thr),
        ppv=float(pv['ppv'][0]),
        npv=float(pv['npv'][0]),
        ppv_macro=float(pv['ppv_macro'][0]),
        npv_macro=float(pv['npv_macro'][0]),
        apl_rule_theta=float(theta),
        apl_rule_accuracy=rule['accuracy'],
        apl_rule_num_pseudo_labels=rule['num_pseudo_labels'])
    if pseudo_labels is not None:
        real = pseudo_label_accuracy(
            np.asarray(pseudo_labels), full, pseudo_label_target, observed)
        summary.update(
            pseudo_label_target=pseudo_label_target,
            pseudo_label_accuracy=real['accuracy'],
            num_pseudo_labels=real['num_pseudo_labels'])
    return summary
