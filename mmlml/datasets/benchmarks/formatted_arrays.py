"""Cole et al.'s formatted arrays (CVPR 2021): each split of a dataset as
an array of image paths and a 0/1 label matrix (``formatted_*_images.npy``,
``formatted_*_labels.npy``)."""
from typing import List, Optional, Tuple

import numpy as np

from ..file_utils import check_file

__all__ = ['load_formatted_arrays']


def _load_npy(path: str, what: str, allow_pickle: bool = False) -> np.ndarray:
    """``np.load`` with errors that name the file."""
    check_file(path, what)
    with open(path, 'rb') as f:
        magic = f.read(6)
    if magic != b'\x93NUMPY':
        raise ValueError(f'{what} {path!r} is not a readable .npy file (it '
                         'does not start with the .npy magic string).')
    try:
        return np.load(path, allow_pickle=allow_pickle)
    except ValueError as error:
        if not allow_pickle and 'allow_pickle' in str(error):
            raise ValueError(
                f'{what} {path!r} holds an object array, which numpy reads '
                'only by unpickling it. Cole et al.\'s arrays are unicode '
                'string arrays and need no pickle; if this file comes from '
                'a source you trust, pass `allow_pickle=True`.') from error
        raise ValueError(f'{what} {path!r} is not a readable .npy file: '
                         f'{error}') from error
    except Exception as error:  # pickle and format errors of corrupt files
        raise ValueError(f'{what} {path!r} is not a readable .npy file: '
                         f'{error}') from error


def load_formatted_arrays(
        images_file: str,
        labels_file: str,
        num_classes: Optional[int] = None,
        allow_pickle: bool = False) -> Tuple[List[str], np.ndarray]:
    """Read one split of Cole et al.'s formatted arrays (CVPR 2021).

    Cole et al.'s single-positive code keeps every dataset (VOC 2012, COCO
    2014, NUS-WIDE, CUB) as two arrays per split,
    ``formatted_{train,val}_images.npy`` and
    ``formatted_{train,val}_labels.npy`` (their ``val`` split is the
    official validation or test set, used as their *test* set):

    - the images: a 1-D array of ``N`` image paths relative to the image
      folder of the dataset (a unicode string array, ``<U..``, as
      ``np.save(np.array(list_of_str))`` writes it; a bytes array is decoded
      as UTF-8);
    - the labels: an ``(N, C)`` matrix of 0 and 1 (any integer, boolean or
      floating dtype; NUS-WIDE's is ``float``, CUB's ``int64``), row ``i``
      the labels of image ``i``, column ``c`` class ``c``.

    Args:
        images_file (str): The path of the images array.
        labels_file (str): The path of the labels array.
        num_classes (int, optional): The number of columns the labels must
            have. Defaults to None (any).
        allow_pickle (bool): Whether the images array may be an object array
            (read by unpickling, so only for a trusted file). The labels
            array is always read without pickle. Defaults to False.

    Returns:
        tuple[list[str], np.ndarray]: The ``N`` relative image paths and the
        ``(N, C)`` ``uint8`` label matrix, in the rows' order.

    Raises:
        FileNotFoundError: A file does not exist.
        ValueError: A file is malformed (not a 1-D array of strings, not a
            2-D matrix of 0 and 1, not ``num_classes`` columns, other
            numbers of rows); the message names the file and, for a bad
            value, its row and column.
    """
    images = _load_npy(images_file, 'The images array', allow_pickle)
    labels = _load_npy(labels_file, 'The labels array')

    if images.ndim != 1:
        raise ValueError(f'The images array {images_file!r} must be 1-D (one '
                         f'path per image), but has shape {images.shape}.')
    if images.dtype.kind == 'S':
        paths = [p.decode('utf-8') for p in images.tolist()]
    elif images.dtype.kind in 'UO':
        paths = images.tolist()
    else:
        raise ValueError(f'The images array {images_file!r} must hold image '
                         f'paths (strings), but has dtype {images.dtype}.')
    for i, path in enumerate(paths):
        if not isinstance(path, str) or not path:
            raise ValueError(f'Row {i} of the images array {images_file!r} '
                             f'is not an image path: {path!r}.')

    if labels.ndim != 2:
        raise ValueError(f'The labels array {labels_file!r} must be an (N, C) '
                         f'matrix, but has shape {labels.shape}.')
    if labels.dtype.kind not in 'biuf':
        raise ValueError(f'The labels array {labels_file!r} must hold 0 and '
                         f'1, but has dtype {labels.dtype}.')
    if num_classes is not None and labels.shape[1] != num_classes:
        raise ValueError(f'The labels array {labels_file!r} has '
                         f'{labels.shape[1]} columns, but the dataset has '
                         f'{num_classes} classes.')
    if labels.shape[0] != len(paths):
        raise ValueError(f'The labels array {labels_file!r} has '
                         f'{labels.shape[0]} rows but the images array '
                         f'{images_file!r} has {len(paths)} images.')
    bad = ~((labels == 0) | (labels == 1))
    if bad.any():
        row, col = np.argwhere(bad)[0]
        raise ValueError(f'The labels array {labels_file!r} must hold only 0 '
                         f'and 1, but row {row}, column {col} is '
                         f'{labels[row, col].item()!r}.')
    return paths, labels.astype(np.uint8)
