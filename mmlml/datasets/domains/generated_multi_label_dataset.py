"""The base of the datasets generated in memory from a seed
(:class:`~mmlml.datasets.SyntheticShapes`,
:class:`~mmlml.datasets.DigitCanvases`,
:class:`~mmlml.datasets.PhotoCanvases`): their labels are known for every
sample once the data is made, so they are kept as one matrix."""
from typing import List, Optional, Sequence, Tuple, Union

import numpy as np
from mmpretrain.datasets import MultiLabelDataset

from mmlml.utils.hyperparameters import Choice, Integer
from ..checks import check_index

__all__ = ['GeneratedMultiLabelDataset', 'IMAGE_SEED', 'SPLIT']

#: The ``seed`` setting of the generated datasets: never None, which would
#: draw other images in every process.
IMAGE_SEED = Integer(
    0,
    high=2**32 - 1,
    hint='every process must draw the same images, so they need a fixed '
    'seed')

#: The splits of a generated dataset, and the random stream each draws
#: from (so that train and test canvases of one seed differ).
SPLIT_STREAMS = dict(train=0, test=1)
#: The ``split`` setting of the generated datasets.
SPLIT = Choice('train', options=tuple(SPLIT_STREAMS))


def short_names(names: Sequence[str], limit: int = 4) -> str:
    """The first ``limit`` of a sequence of class names, for messages."""
    names = list(names)
    more = f' ... ({len(names)} names)' if len(names) > limit else ''
    return repr(names[:limit])[:-1] + (more + ']' if more else ']')


class GeneratedMultiLabelDataset(MultiLabelDataset):
    """A ``MultiLabelDataset`` whose ``load_data_list`` generates every
    sample with its full labels (``gt_label``), no label unknown.

    It caches the ``(N, C)`` label matrix (``C`` =
    :attr:`num_label_columns`) after ``full_init`` and after MMEngine's
    subsets, and checks indices. A subclass stores and checks its settings
    (``split`` declared as :data:`SPLIT`, ``seed`` as :data:`IMAGE_SEED`),
    then calls this ``__init__`` with the four that every generated
    dataset has and its class names; it defines
    :attr:`num_label_columns`.

    Args:
        split (str): ``'train'`` or ``'test'``.
        num_samples (int): Number of samples.
        img_size (int): Side of the square images.
        seed (int): Seed of the images.
        classes (tuple[str]): The class names.
        named (str): How the dataset names its classes, for the error a
            ``metainfo`` that renames them raises.
        metainfo (dict, optional): Extra meta information; its
            ``classes``, if given, must equal ``classes``.
        **kwargs: Other arguments of
            :class:`mmpretrain.datasets.MultiLabelDataset` (``pipeline``,
            ``test_mode``, ``indices``, ``serialize_data`` ...), except
            ``ann_file`` and ``data_root``.
    """

    def __init__(self,
                 *,
                 split: str,
                 num_samples: int,
                 img_size: int,
                 seed: int,
                 classes: Tuple[str, ...],
                 named: str,
                 metainfo: Optional[dict] = None,
                 **kwargs):
        metainfo = self._generated_metainfo(metainfo, classes, named, kwargs)
        self.split = split
        self.num_samples = num_samples
        self.img_size = img_size
        self.seed = seed
        self._label_matrix: Optional[np.ndarray] = None
        super().__init__(ann_file='', metainfo=metainfo, **kwargs)

    @property
    def num_label_columns(self) -> int:
        """The number of classes of the label matrix."""
        raise NotImplementedError

    def _generated_metainfo(self, metainfo: Optional[dict],
                            classes: Tuple[str, ...], named: str,
                            kwargs: dict) -> dict:
        """``metainfo`` with the dataset's own ``classes`` (a generated
        dataset names its classes itself: ``named`` says how). Refuses a
        ``classes`` entry that differs and the file arguments
        (``ann_file``, ``data_root``) in ``kwargs``, which it reads no
        file for."""
        for key in ('ann_file', 'data_root'):
            if key in kwargs:
                raise TypeError(f'{type(self).__name__} reads no files: '
                                f'unexpected argument {key!r}')
        metainfo = dict(metainfo or {})
        given = metainfo.pop('classes', None)
        if given is not None and tuple(given) != tuple(classes):
            raise ValueError(
                f'{type(self).__name__} names its classes {named}, so '
                "`metainfo['classes']` cannot rename them: got "
                f'{short_names(given)} for the classes '
                f'{short_names(classes)}. Leave `classes` out of '
                '`metainfo`.')
        metainfo['classes'] = tuple(classes)
        return metainfo

    def full_init(self):
        """Generate the data (once) and cache the label matrix."""
        if self._fully_initialized:
            return
        super().full_init()
        self._cache_label_matrix()

    def _cache_label_matrix(self) -> np.ndarray:
        """Cache the label matrix of the samples (after MMEngine's
        ``indices`` or a subset chose them)."""
        matrix = np.zeros((len(self), self.num_label_columns), dtype=np.uint8)
        for i in range(len(self)):
            matrix[i, self.get_data_info(i)['gt_label']] = 1
        self._label_matrix = matrix
        return matrix

    def get_subset_(self, indices: Union[int, Sequence[int]]) -> None:
        """MMEngine's ``get_subset_``, keeping the label matrix in step."""
        super().get_subset_(indices)
        self._cache_label_matrix()

    def get_subset(self, indices: Union[int, Sequence[int]]):
        """MMEngine's ``get_subset``, keeping the label matrix in step."""
        subset = super().get_subset(indices)
        subset._cache_label_matrix()
        return subset

    def _labels(self) -> np.ndarray:
        """The cached label matrix (loading the samples first)."""
        if not self._fully_initialized:
            self.full_init()
        matrix = self._label_matrix
        if matrix is None:  # a subclass's full_init that does not cache it
            matrix = self._cache_label_matrix()
        return matrix

    def get_label_matrix(self) -> np.ndarray:
        """The full labels as a ``(N, C)`` ``uint8`` matrix of 0/1."""
        return self._labels().copy()

    def get_label_matrices(self) -> Tuple[np.ndarray, None]:
        """The labels of every sample at once, as
        :class:`~mmlml.datasets.CustomMultiLabelDataset` gives them: the
        ``(N, C)`` ``uint8`` matrix of the positives (a new array,
        :meth:`get_label_matrix`) and None, as no label is unknown (every
        other label is a negative)."""
        return self.get_label_matrix(), None

    def get_data_info(self, idx: int) -> dict:
        """The data info of sample ``idx``: MMEngine's, with the index
        checked (an integer in ``[-len, len)``, negative from the end)."""
        idx = check_index(idx, len(self), type(self).__name__)
        return super().get_data_info(idx)

    def get_cat_ids(self, idx: int) -> List[int]:
        """The class indices of sample ``idx`` (without decoding it)."""
        labels = self._labels()
        idx = check_index(idx, len(self), type(self).__name__)
        return np.flatnonzero(labels[idx]).tolist()

    def extra_repr(self) -> List[str]:
        """Describe the generator in ``repr``."""
        return [
            f'Split: \t{self.split}', f'Seed: \t{self.seed}',
            f'Image size: \t{self.img_size}', f'Mean positives: \t'
            f'{self.get_label_matrix().sum(1).mean():.2f}'
            if self._fully_initialized else 'Mean positives: \t?'
        ]
