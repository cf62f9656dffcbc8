"""What the two canvas domains (:class:`~mmlml.datasets.DigitCanvases`,
:class:`~mmlml.datasets.PhotoCanvases`) share: the placement of an
object's box among those already on a canvas, and the pools (training,
validation, test) their canvases draw from, which follow
PartialLabelDataset's train/validation split."""
from typing import Iterable, List, Optional, Tuple

import numpy as np

from ..partial.protocol import split_train_val

__all__ = ['Box', 'free_box', 'CanvasPools']

#: ``(top, left, height, width)`` of an object on a canvas, in pixels.
Box = Tuple[int, int, int, int]


def _overlap(a: Box, b: Box) -> float:
    """The intersection of the boxes ``a`` and ``b`` as a fraction of the
    smaller one's area."""
    height = min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0])
    width = min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1])
    if height <= 0 or width <= 0:
        return 0.
    return height * width / min(a[2] * a[3], b[2] * b[3])


def free_box(candidates: Iterable[Box], boxes: List[Box],
             max_overlap: float) -> Optional[Box]:
    """The first of ``candidates`` that covers at most ``max_overlap`` of
    every box in ``boxes``, or None if none does (the object is left out).

    ``candidates`` is read lazily, so a generator that draws each position
    from a random generator draws only until one fits.
    """
    return next((box for box in candidates if all(
        _overlap(box, other) <= max_overlap for other in boxes)), None)


class CanvasPools:
    """The pools of a canvas dataset that draws its training and validation
    canvases from separate sources (scans, photographs), for
    PartialLabelDataset's train/validation split.

    The subclass sets ``split``, ``num_samples``, ``val_frac`` and
    ``split_seed``.
    """

    split: str
    num_samples: int
    val_frac: float
    split_seed: int

    def canvas_pools(self) -> np.ndarray:
        """The pool of every canvas: ``'train'``, ``'val'`` or ``'test'``
        (a ``(num_samples,)`` array of strings): the test pool for the
        test split, else the side of PartialLabelDataset's
        train/validation split."""
        if self.split == 'test':
            return np.full(self.num_samples, 'test')
        pools = np.full(self.num_samples, 'train', dtype='<U5')
        _, val_idx = split_train_val(self.num_samples, self.val_frac,
                                     self.split_seed)
        pools[val_idx] = 'val'
        return pools

    def other_split(self, num_samples: int, val_frac: float,
                    split_seed: int) -> Optional[Tuple[tuple, tuple]]:
        """``(ours, theirs)``, the ``(num_samples, val_frac, split_seed)``
        the canvases were drawn for and the given ones, where they differ;
        None where they are the same."""
        ours = (self.num_samples, self.val_frac, self.split_seed)
        theirs = (num_samples, float(val_frac), split_seed)
        return None if ours == theirs else (ours, theirs)
