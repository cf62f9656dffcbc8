"""What a :class:`~mmlml.datasets.PartialLabelDataset` keeps, as two small
frozen values checked once, when they are built, against their declarations
(:mod:`mmlml.utils.hyperparameters`):

- :class:`PartialLabelProtocol`: which labels are observed (``mode``,
  ``ratio``, ``seed``, ``label_file``), and the generator that follows it
  (:meth:`PartialLabelProtocol.generate`, :func:`make_partial_labels`):
  one observed positive per image (the single positive protocol of Cole et
  al., CVPR 2021, reproduced bit for bit) or :math:`\\lfloor n (1 - r)
  \\rfloor + 1` of the :math:`n` positives of an image (the missing-ratio
  protocol of Zhang et al., "Simple and Robust Loss Design for Multi-Label
  Learning with Missing Labels");
- :class:`SampleSplit`: which samples (``split``, ``val_frac``,
  ``split_seed``: the 80/20 split of Cole et al., :func:`split_train_val`)
  and which labels the validation samples carry (``val_labels``,
  ``val_unknown``).

Both draw from numpy's legacy :class:`numpy.random.RandomState`, whose
stream is frozen across numpy versions, so that a seed always gives the
same annotations; :mod:`~mmlml.datasets.partial.draws` makes the draws.
"""
import os
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Dict, Mapping, Optional, Tuple, Union

import numpy as np

from mmlml.utils.hyperparameters import (Choice, Integer, Real,
                                         check_hyperparameters)
from ..label_states import EVAL_UNKNOWN
from .draws import (check_binary_matrix, draw_kept_positives,
                    draw_single_positive)

__all__ = [
    'MODES', 'GENERATED_MODES', 'SPLITS', 'VAL_LABELS', 'SEED', 'VAL_FRAC',
    'PartialLabelProtocol', 'SampleSplit', 'make_partial_labels',
    'num_kept_positives', 'split_train_val'
]

#: The modes of the observed labels.
MODES = ('single_positive', 'ratio', 'full', 'file', 'annotated')
#: The modes whose labels :meth:`PartialLabelProtocol.generate` draws.
GENERATED_MODES = ('single_positive', 'ratio')
#: The splits of the wrapped dataset's samples (besides None: all).
SPLITS = ('train', 'val')
#: The labels that the validation split carries.
VAL_LABELS = ('clean', 'observed')

#: A seed of the label generation or of the split: never None, which would
#: draw other labels in every dataloader worker and every rank.
SEED = Integer(
    1200,
    high=2**32 - 1,
    hint='the partial labels must be the same in every process, so they '
    'need a fixed seed')
#: The fraction of samples in the validation split.
VAL_FRAC = Real(0.2, low=0, high=1)

_PROTOCOL = dict(
    mode=Choice('single_positive', options=MODES),
    ratio=Real(None, optional=True, low=0, high=1),
    seed=SEED)
_SPLIT = dict(
    split=Choice(None, optional=True, options=SPLITS),
    val_frac=VAL_FRAC,
    split_seed=SEED,
    val_labels=Choice('clean', options=VAL_LABELS),
    val_unknown=Choice(None, optional=True, options=EVAL_UNKNOWN))


def _checked(value: Any, declared: Mapping[str, Any]) -> Dict[str, Any]:
    """The declared fields of a frozen value, checked, to store in place of
    the given ones."""
    return check_hyperparameters(
        declared, {name: getattr(value, name)
                   for name in declared},
        type(value).__name__)


def _store(value: Any, checked: Mapping[str, Any]) -> None:
    """Store checked fields in a frozen dataclass."""
    for name, item in checked.items():
        object.__setattr__(value, name, item)


@dataclass(frozen=True)
class PartialLabelProtocol:
    """Which labels of a fully labelled dataset are observed.

    Checked when it is built: a value outside its declaration, a ``ratio``
    missing in the ``'ratio'`` mode or given in another, a ``label_file``
    missing in the ``'file'`` mode or given in another raise a
    ``ValueError`` (a ``label_file`` that is not a path a ``TypeError``).
    ``docs/partial_labels.md`` describes the modes.

    Args:
        mode (str): ``'single_positive'`` (one positive per image, as Cole
            et al.'s generator), ``'ratio'`` (Zhang et al.'s missing-ratio
            protocol), ``'full'`` (every label observed), ``'annotated'``
            (the wrapped dataset's own annotation) or ``'file'`` (read from
            ``label_file``). Defaults to ``'single_positive'``.
        ratio (float, optional): The missing ratio :math:`r` in [0, 1] of
            the ``'ratio'`` mode; None in the other modes. Stored as the
            float of its decimal text (``np.float32(0.8)`` is 0.8), which
            :meth:`num_kept` reads exactly. Defaults to None.
        seed (int): The seed of the generated modes, an integer in
            ``[0, 2**32)`` (never None: every dataloader worker and every
            rank must draw the same labels). Defaults to 1200, the seed of
            Cole et al.
        label_file (str or PathLike, optional): The ``.npy`` or ``.txt``
            file of the observed labels of every sample of the wrapped
            dataset, required in the ``'file'`` mode and forbidden in the
            others; stored as a str. Defaults to None.
    """
    mode: str = _PROTOCOL['mode'].default
    ratio: Optional[float] = _PROTOCOL['ratio'].default
    seed: int = _PROTOCOL['seed'].default
    label_file: Optional[Union[str, os.PathLike]] = None

    def __post_init__(self):
        checked = _checked(self, _PROTOCOL)
        mode, ratio = checked['mode'], checked['ratio']
        if mode != 'ratio' and ratio is not None:
            hint = (" Use mode='ratio' with ratio=1 instead."
                    if mode == 'single_positive' else '')
            raise ValueError(f'ratio must be None in the {mode!r} mode, '
                             f'but got {self.ratio!r}.{hint}')
        if mode == 'ratio' and ratio is None:
            raise ValueError("ratio is required in the 'ratio' mode, a "
                             'number in [0, 1] (0 keeps every positive, 1 '
                             'keeps one).')
        if ratio is not None:
            # The decimal text of the number, not its binary value: 1 - 0.8
            # is 0.19999999999999996 in floating point, which would keep
            # one positive out of 5 instead of two.
            checked['ratio'] = float(Fraction(str(self.ratio)))
        label_file = self.label_file
        if mode == 'file' and label_file is None:
            raise ValueError("label_file is required in the 'file' mode: "
                             'the .npy file of the observed labels.')
        if mode != 'file' and label_file is not None:
            raise ValueError(
                f'label_file is read only in the \'file\' mode, but got '
                f'label_file={label_file!r} with mode={mode!r}: set '
                "mode='file' to train on the file's labels.")
        if label_file is not None:
            if not isinstance(label_file, (str, os.PathLike)):
                raise TypeError('label_file must be a path, but got '
                                f'{label_file!r} of type '
                                f'{type(label_file).__name__}.')
            checked['label_file'] = os.fspath(label_file)
        _store(self, checked)

    def describe(self) -> str:
        """The labels' origin, as the log lines name it: the mode (and
        ratio), or the label file."""
        if self.mode == 'file':
            return f'file {self.label_file}'
        if self.ratio is not None:
            return f'{self.mode} r={self.ratio}'
        return self.mode

    def num_kept(self, num_positives: int) -> int:
        """The positives that the ``'ratio'`` mode keeps of an image's
        :math:`n` positives: :math:`\\min(n, \\lfloor n (1 - r) \\rfloor +
        1)`, 0 for :math:`n = 0`, in integer arithmetic on the decimal
        value of ``ratio`` (ratio 0.8 keeps 2 of 5, 3 of 10 and 4 of 15)."""
        if num_positives <= 0:
            return 0
        keep = 1 - Fraction(str(self.ratio))
        return min(num_positives,
                   num_positives * keep.numerator // keep.denominator + 1)

    def generate(self, full: np.ndarray) -> np.ndarray:
        """Hide positives of a fully labelled multi-label matrix, in the
        ``'single_positive'`` or ``'ratio'`` mode (see
        :func:`make_partial_labels`).

        Raises:
            ValueError: Another mode, or ``full`` is not a 2-D matrix of 0
                and 1.
        """
        if self.mode not in GENERATED_MODES:
            raise ValueError(f'Only the modes {GENERATED_MODES} generate '
                             f'labels, but got mode={self.mode!r}.')
        full = check_binary_matrix(full)
        if self.mode == 'single_positive':
            return draw_single_positive(full, self.seed)
        kept_of = [self.num_kept(n) for n in range(full.shape[1] + 1)]
        return draw_kept_positives(full, self.seed, np.array(kept_of))


@dataclass(frozen=True)
class SampleSplit:
    """Which samples of the wrapped dataset a ``PartialLabelDataset``
    selects, and the labels its validation samples carry.

    Checked when it is built (a ``ValueError`` naming the value).

    Args:
        split (str, optional): ``'train'``, ``'val'`` or None (all
            samples). Defaults to None.
        val_frac (float): The fraction of samples in the validation split,
            in [0, 1]. Defaults to 0.2.
        split_seed (int): The seed of the train/validation split, an integer
            in ``[0, 2**32)``. Defaults to 1200.
        val_labels (str): The labels of the ``'val'`` split: ``'clean'``
            (the full labels, Cole et al.'s default) or ``'observed'`` (the
            partial labels, like the training split). Defaults to
            ``'clean'``.
        val_unknown (str, optional): How the targets of the ``'val'`` split
            with ``val_labels='observed'`` treat unknown labels:
            ``'ignore'`` (known labels only), ``'negative'`` or None
            (chosen from the labels, :meth:`eval_unknown`). Defaults to
            None.
    """
    split: Optional[str] = _SPLIT['split'].default
    val_frac: float = _SPLIT['val_frac'].default
    split_seed: int = _SPLIT['split_seed'].default
    val_labels: str = _SPLIT['val_labels'].default
    val_unknown: Optional[str] = _SPLIT['val_unknown'].default

    def __post_init__(self):
        _store(self, _checked(self, _SPLIT))

    @property
    def uses_observed_labels(self) -> bool:
        """bool: Whether the samples carry the observed (partial) labels
        rather than the clean full labels."""
        return self.split != 'val' or self.val_labels == 'observed'

    @property
    def observed_validation(self) -> bool:
        """bool: Whether this is the validation split with observed labels,
        whose targets need :meth:`eval_unknown`."""
        return self.split == 'val' and self.val_labels == 'observed'

    def indices(self, num_samples: int) -> np.ndarray:
        """The sorted ``int64`` indices of the selected samples among
        ``num_samples`` (:func:`split_train_val`'s split, or all)."""
        if self.split is None:
            return np.arange(num_samples, dtype=np.int64)
        train_idx, val_idx = _split(num_samples, self.val_frac,
                                    self.split_seed)
        return train_idx if self.split == 'train' else val_idx

    def eval_unknown(self, has_negative: bool) -> str:
        """How the evaluation targets of the observed validation split treat
        unknown labels: ``val_unknown``, or if None ``'ignore'`` when the
        split's observed labels have a negative and ``'negative'``
        otherwise.

        Args:
            has_negative (bool): Whether the split's observed labels have an
                observed negative.

        Raises:
            ValueError: ``'ignore'`` without any observed negative (every
                predictor would score 100).
        """
        if self.val_unknown is None:
            return 'ignore' if has_negative else 'negative'
        if self.val_unknown == 'ignore' and not has_negative:
            raise ValueError(
                "val_unknown='ignore' evaluates on known labels only, but "
                'the observed labels of the validation split have no '
                'negative: every known label is a positive, so any '
                "predictor would score 100. Use val_unknown='negative' "
                "(unknown labels count as negatives, Cole et al.'s observed "
                "validation set), val_labels='clean', or labels with "
                'observed negatives.')
        return self.val_unknown


def make_partial_labels(full: np.ndarray,
                        mode: str,
                        ratio: Optional[float] = None,
                        seed: int = 1200) -> np.ndarray:
    """Hide positives of a fully labelled multi-label matrix.

    Two protocols are available:

    - ``mode='single_positive'`` reproduces exactly the observed positives
      of the generator of Cole et al. (CVPR 2021, ``num_pos=1``,
      ``num_neg=0``): one ``RandomState(seed)`` goes over the rows in order;
      for each row the ascending indices of its positives are shuffled and
      the first one is kept, then the indices of its negatives are shuffled
      too. Nothing of the negatives is kept, but that shuffle consumes the
      random stream, so it is reproduced as well.
    - ``mode='ratio'`` keeps :math:`k = \\lfloor n (1 - r) \\rfloor + 1`
      (at most :math:`n`) of the :math:`n` positives of each row, where
      :math:`r` is ``ratio``, as in Zhang et al. ("Simple and Robust Loss
      Design for Multi-Label Learning with Missing Labels"). ``k`` is
      computed exactly from the decimal value of ``ratio``: ratio 0.5 keeps
      :math:`\\lfloor n/2 \\rfloor + 1`, ratio 0.8 keeps 2 of 5 positives,
      ratio 1 keeps one and ratio 0 keeps all. The kept positives are a
      uniform random subset without replacement: one ``RandomState(seed)``
      goes over the rows in order and, for each row with :math:`n > 0`
      positives, draws a random permutation of them and keeps its first
      :math:`k`. Because the draws depend on :math:`n` only, the same seed
      gives nested annotations across ratios (what a larger ratio keeps, a
      smaller one keeps too). Zhang et al. released neither their seed nor
      their generator, so their files cannot be regenerated exactly.

    Rows without any positive keep nothing (they stay all zero). In the
    ``'single_positive'`` mode they still shuffle their negatives, exactly
    as Cole et al.'s code does; in the ``'ratio'`` mode they draw nothing.

    The draws are those of that per-row loop, but the positives of all rows
    are found at once (compressed sparse rows) and the negatives are never
    searched for: a shuffle draws the same numbers for any array of the
    same length, so a scratch array of the negatives' length stands for
    them. The ``'ratio'`` mode draws the permutations of a chunk of rows
    in one call (:func:`~mmlml.datasets.partial.draws.\
draw_kept_positives`). What is left per row in the ``'single_positive'``
    mode is one or two calls of
    ``RandomState.shuffle``, whose cost is the :math:`C - n - 1` draws of
    each row's negative shuffle (about 5-10 s per million rows of 567
    classes): numpy has no faster way to consume the stream exactly as
    they did, since how many 32-bit outputs a draw takes depends on the
    outputs (rejection sampling). Besides the ``uint8`` result, the memory
    used is 8 bytes per positive (16 in the ``'ratio'`` mode), a few
    numbers per row and chunks of a few MiB.

    Args:
        full (np.ndarray): The full labels, an ``(N, C)`` matrix of any
            integer, boolean or floating dtype holding only 0 and 1.
        mode (str): ``'single_positive'`` or ``'ratio'``.
        ratio (float, optional): The missing ratio :math:`r` in [0, 1],
            required in the ``'ratio'`` mode and forbidden in the
            ``'single_positive'`` mode. Defaults to None.
        seed (int): The seed of the ``RandomState``. Defaults to 1200, the
            seed of Cole et al.

    Returns:
        np.ndarray: The observed positives, an ``(N, C)`` ``uint8`` matrix
        holding 1 where a positive is kept and 0 elsewhere (unannotated).

    Examples:
        >>> import numpy as np
        >>> full = np.array([[1, 1, 0, 1], [0, 0, 0, 0], [0, 1, 1, 0]])
        >>> obs = make_partial_labels(full, 'single_positive')
        >>> obs.sum(axis=1).tolist()
        [1, 0, 1]
        >>> obs = make_partial_labels(full, 'ratio', ratio=0.5)
        >>> obs.sum(axis=1).tolist()
        [2, 0, 2]
    """
    return PartialLabelProtocol(mode, ratio, seed).generate(full)


def num_kept_positives(num_positives: int, ratio: float) -> int:
    """Number of positives kept by the missing-ratio protocol
    (:meth:`PartialLabelProtocol.num_kept`).

    Args:
        num_positives (int): The number :math:`n` of positives of an image.
        ratio (float): The missing ratio :math:`r` in [0, 1].

    Returns:
        int: The number of positives kept.
    """
    return PartialLabelProtocol('ratio', ratio).num_kept(int(num_positives))


def split_train_val(num_samples: int,
                    val_frac: float = 0.2,
                    seed: int = 1200) -> Tuple[np.ndarray, np.ndarray]:
    """Split sample indices into training and validation, as Cole et al.

    ``n_val = int(np.round(val_frac * num_samples))`` indices of a random
    permutation drawn from ``RandomState(seed)`` go to the validation set
    (the last ``n_val`` of the permutation), the others to the training set
    (the first ``num_samples - n_val``); both are sorted. With the defaults
    this is the held-out split of Cole et al., e.g. 4574/1143 of the 5717
    training images of PASCAL VOC 2012.

    Args:
        num_samples (int): The number of samples to split.
        val_frac (float): The fraction of samples in the validation set, in
            [0, 1]. Defaults to 0.2.
        seed (int): The seed of the ``RandomState``. Defaults to 1200.

    Returns:
        Tuple[np.ndarray, np.ndarray]: The sorted ``int64`` training and
        validation indices, disjoint and covering ``range(num_samples)``.

    Examples:
        >>> train_idx, val_idx = split_train_val(5717)
        >>> len(train_idx), len(val_idx)
        (4574, 1143)
        >>> val_idx[:5].tolist()
        [5, 6, 11, 15, 22]
    """
    num_samples = Integer(low=0).validate('num_samples', num_samples)
    return _split(num_samples, VAL_FRAC.validate('val_frac', val_frac),
                  SEED.validate('seed', seed))


def _split(num_samples: int, val_frac: float,
           seed: int) -> Tuple[np.ndarray, np.ndarray]:
    """:func:`split_train_val` of checked arguments."""
    n_val = int(np.round(val_frac * num_samples))
    perm = np.random.RandomState(seed).permutation(num_samples)
    train_idx = np.sort(perm[:num_samples - n_val]).astype(
        np.int64, copy=False)
    # perm[-0:] would be the whole permutation.
    val_idx = np.sort(perm[num_samples - n_val:]).astype(np.int64, copy=False)
    return train_idx, val_idx
