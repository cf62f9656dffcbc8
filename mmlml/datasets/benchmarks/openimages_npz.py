"""The compact ``.npz`` file of OpenImages labels that
``tools/dataset_converters/openimages.py`` writes (:func:`save_labels`) and
``OpenImagesMultiLabel`` loads in seconds (:func:`load_labels`): plain
arrays, no pickle."""
import os.path as osp

import numpy as np

from ..file_utils import check_file
from .openimages_files import OpenImagesLabels

__all__ = ['NPZ_FORMAT', 'save_labels', 'load_labels']

#: The ``format`` entry of a converted ``.npz`` file.
NPZ_FORMAT = 'mmlml-openimages-labels-v1'

# The arrays of a converted file.
_NPZ_KEYS = ('format', 'split', 'source', 'class_mids', 'class_names',
             'image_ids', 'pos_indptr', 'pos_indices', 'neg_indptr',
             'neg_indices', 'counts')
# The counts of reading a label CSV, in the order of ``counts`` in a file.
_COUNT_KEYS = ('num_rows', 'num_rows_outside_subset', 'num_duplicate_labels',
               'num_conflicting_labels')


def save_labels(path: str, labels: OpenImagesLabels) -> None:
    """Write :class:`OpenImagesLabels` as an uncompressed ``.npz`` file
    (plain arrays, no pickle; :func:`load_labels` reads it).

    The arrays: ``format`` (``'mmlml-openimages-labels-v1'``), ``split``,
    ``source`` (the official CSV), ``class_mids`` and ``class_names``
    (unicode), ``image_ids`` (sorted ASCII bytes), ``pos_indptr``,
    ``pos_indices``, ``neg_indptr``, ``neg_indices`` (the compressed sparse
    rows of the positive and negative class indices) and ``counts``
    (``int64``: rows read, rows outside the subset, duplicate and
    conflicting labels).
    """
    dirname = osp.dirname(osp.abspath(path))
    if not osp.isdir(dirname):
        raise FileNotFoundError(
            f'The folder {dirname!r} of the output file does not exist.')
    with open(path, 'wb') as f:
        np.savez(
            f,
            format=np.array(NPZ_FORMAT),
            split=np.array(labels.split),
            source=np.array(labels.source),
            class_mids=np.array(labels.class_mids, dtype=str),
            class_names=np.array(labels.class_names, dtype=str),
            image_ids=labels.image_ids,
            pos_indptr=labels.pos_indptr,
            pos_indices=labels.pos_indices,
            neg_indptr=labels.neg_indptr,
            neg_indices=labels.neg_indices,
            counts=np.array([labels.counts[k] for k in _COUNT_KEYS],
                            dtype=np.int64))


def _check_csr(path: str, name: str, indptr: np.ndarray, indices: np.ndarray,
               num_images: int, num_classes: int) -> None:
    bad = None
    if indptr.shape != (num_images +
                        1, ) or not np.issubdtype(indptr.dtype, np.integer):
        bad = f'`{name}_indptr` must be {num_images + 1} integers'
    elif indptr[0] != 0 or indptr[-1] != len(indices) or np.any(
            np.diff(indptr) < 0):
        bad = f'`{name}_indptr` is not a valid row pointer'
    elif indices.ndim != 1 or not np.issubdtype(indices.dtype, np.integer):
        bad = f'`{name}_indices` must be a vector of integers'
    elif len(indices) and (indices.min() < 0 or indices.max() >= num_classes):
        bad = f'`{name}_indices` has class indices outside [0, {num_classes})'
    else:
        # Ascending within each row (no repeats): a step down only where a
        # row starts.
        steps = np.diff(indices.astype(np.int64)) <= 0
        row_start = np.zeros(len(indices), dtype=bool)
        row_start[indptr[1:-1][indptr[1:-1] < len(indices)]] = True
        if np.any(steps & ~row_start[1:]):
            bad = f'`{name}_indices` are not ascending within each image'
    if bad:
        raise ValueError(f'The converted OpenImages file {path!r} is '
                         f'corrupt: {bad}.')


def load_labels(path: str) -> OpenImagesLabels:
    """Read and check a file written by :func:`save_labels`.

    Raises:
        FileNotFoundError: The file does not exist.
        ValueError: It is not such a file, or its arrays are inconsistent
            (the message names the file and the array).
    """
    check_file(path, 'The converted OpenImages label file (`ann_file`)')
    try:
        with np.load(path, allow_pickle=False) as npz:
            missing = [key for key in _NPZ_KEYS if key not in npz.files]
            if missing:
                raise ValueError(
                    f'{path!r} is no converted OpenImages label file of '
                    'tools/dataset_converters/openimages.py (it lacks '
                    f'{missing}).')
            data = {key: npz[key] for key in _NPZ_KEYS}
    except ValueError as error:
        if str(error).startswith(repr(path)):
            raise
        raise ValueError(f'{path!r} is not a readable .npz file of plain '
                         f'arrays: {error}') from None
    except (OSError, EOFError) as error:
        raise ValueError(
            f'{path!r} is not a readable .npz file: {error}') from None
    if str(data['format']) != NPZ_FORMAT:
        raise ValueError(f'{path!r} has the format {str(data["format"])!r}; '
                         f'this version reads {NPZ_FORMAT!r}.')
    image_ids = data['image_ids']
    mids, names = data['class_mids'], data['class_names']
    if image_ids.ndim != 1 or image_ids.dtype.kind != 'S' or (
            len(image_ids) > 1 and not np.all(image_ids[1:] > image_ids[:-1])):
        raise ValueError(f'The converted OpenImages file {path!r} is '
                         'corrupt: `image_ids` must be sorted, unique ASCII '
                         'strings.')
    if mids.ndim != 1 or mids.shape != names.shape or not len(mids):
        raise ValueError(f'The converted OpenImages file {path!r} is '
                         'corrupt: `class_mids` and `class_names` must be '
                         'two vectors of the same length.')
    counts = data['counts']
    if counts.shape != (len(_COUNT_KEYS), ):
        raise ValueError(f'The converted OpenImages file {path!r} is '
                         f'corrupt: `counts` must hold {len(_COUNT_KEYS)} '
                         'numbers.')
    keys = []
    for name in ('pos', 'neg'):
        indptr, indices = data[f'{name}_indptr'], data[f'{name}_indices']
        _check_csr(path, name, indptr, indices, len(image_ids), len(mids))
        rows = np.repeat(np.arange(len(image_ids)), np.diff(indptr))
        keys.append(rows * len(mids) + indices)
    both = np.intersect1d(keys[0], keys[1], assume_unique=True)
    if both.size:
        row, cls = divmod(int(both[0]), len(mids))
        raise ValueError(
            f'The converted OpenImages file {path!r} is corrupt: image '
            f'{image_ids[row].decode()} has the class {cls} both as positive '
            f'and as negative ({both.size} such labels).')
    return OpenImagesLabels(
        split=str(data['split']),
        source=str(data['source']),
        class_mids=tuple(mids.tolist()),
        class_names=tuple(names.tolist()),
        image_ids=image_ids,
        pos_indptr=data['pos_indptr'].astype(np.int64),
        pos_indices=data['pos_indices'],
        neg_indptr=data['neg_indptr'].astype(np.int64),
        neg_indices=data['neg_indices'],
        counts=dict(zip(_COUNT_KEYS, counts.tolist())))
