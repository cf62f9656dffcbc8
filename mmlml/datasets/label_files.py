"""Files of observed labels that ``PartialLabelDataset`` reads in its
``'file'`` mode: ``.npy`` matrices (Cole et al.'s ``labels_obs`` files, the
pseudo-label files of ``tools/pseudo_label.py``) and the text files of
Zhang et al. (``coco_train_0.75left.txt``, ...)."""
import os
import os.path as osp
from typing import Callable, Dict, Optional, Sequence, Union

import numpy as np
from mmengine.logging import print_log

__all__ = ['load_label_file', 'load_npy_label_file', 'load_text_label_file']

# Rows converted and checked at a time when reading a label file (about
# 16 M labels, so a float64 file is never copied whole).
_LABELS_PER_CHUNK = 1 << 24


def _check_exists(path: Union[str, os.PathLike], name: str) -> None:
    if not osp.isfile(path):
        raise FileNotFoundError(
            f'{name} does not exist (relative paths are relative to the '
            f'working directory {os.getcwd()!r}).')


def _first_bad(mask: np.ndarray, block: np.ndarray, start: int) -> str:
    """Describe the first entry of ``block`` where ``mask`` is True."""
    row, col = np.argwhere(mask)[0]
    return f'row {start + row}, class {col}: {block[row, col]!r}'


def load_npy_label_file(path: Union[str, os.PathLike], num_samples: int,
                        num_classes: int, dataset_desc: str) -> np.ndarray:
    """Read a matrix of observed labels from an ``.npy`` file.

    The file holds one ``(num_samples, num_classes)`` array in mmlml's
    encoding: 1 (observed positive), 0 (unannotated) and -1 (observed
    negative). Any integer or boolean dtype is accepted, and a floating
    dtype if it holds exactly these values (Cole et al.'s label files are
    ``float64``). The file is memory-mapped and converted in chunks, so only
    the ``int8`` result is ever held in memory.

    Args:
        path (str or PathLike): The ``.npy`` file.
        num_samples (int): The expected number of rows.
        num_classes (int): The expected number of columns.
        dataset_desc (str): What the rows must align with, for error
            messages.

    Returns:
        np.ndarray: The ``(num_samples, num_classes)`` ``int8`` matrix.

    Raises:
        FileNotFoundError: The file does not exist.
        TypeError: The array's dtype is not integer, boolean or floating.
        ValueError: The file is no ``.npy`` array, has another shape, or
            holds non-finite values or values other than -1, 0 and 1.
    """
    name = f'`label_file` {os.fspath(path)!r}'
    _check_exists(path, name)
    try:
        array = np.load(path, mmap_mode='r', allow_pickle=False)
    except (ValueError, OSError) as error:
        raise ValueError(f'{name} is not a readable .npy file holding one '
                         f'numeric array: {error}') from error
    if not isinstance(array, np.ndarray):
        if hasattr(array, 'close'):
            array.close()
        raise ValueError(f'{name} must be an .npy file holding one array, '
                         f'but it is an archive ({type(array).__name__}).')
    expected = (num_samples, num_classes)
    if array.shape != expected:
        raise ValueError(
            f'{name} holds an array of shape {array.shape}, but '
            f'{dataset_desc} needs an N x C = {num_samples} x {num_classes} '
            'matrix: one row per sample of the wrapped dataset, in its '
            'order (all samples, before the train/val split), and one '
            'column per class.')
    is_float = np.issubdtype(array.dtype, np.floating)
    if not (is_float or np.issubdtype(array.dtype, np.integer)
            or np.issubdtype(array.dtype, np.bool_)):
        raise TypeError(f'{name} must hold integers -1, 0 and 1, but its '
                        f'dtype is {array.dtype}.')
    labels = np.empty(expected, dtype=np.int8)
    step = max(1, _LABELS_PER_CHUNK // max(1, num_classes))
    for start in range(0, num_samples, step):
        block = np.asarray(array[start:start + step])
        if is_float:
            bad = ~np.isfinite(block)
            if bad.any():
                raise ValueError(f'{name} holds non-finite values, e.g. at '
                                 f'{_first_bad(bad, block, start)}.')
        bad = (block != -1) & (block != 0) & (block != 1)
        if bad.any():
            raise ValueError(
                f'{name} must hold only -1 (observed negative), 0 '
                '(unannotated) and 1 (observed positive), but got e.g. at '
                f'{_first_bad(bad, block, start)}.')
        labels[start:start + step] = block
    del array
    return labels


def load_text_label_file(path: Union[str,
                                     os.PathLike], image_names: Sequence[str],
                         num_classes: int, dataset_desc: str) -> np.ndarray:
    """Read a text file of observed positives, one line per image.

    Each line is ``<file name>,<class indices separated by spaces>``, e.g.
    ``COCO_train2014_000000000009.jpg,45 49 50`` (a space after the comma is
    allowed, and an image may list no class): the format of Zhang et al.'s
    files (``coco_train_full.txt``, ``coco_train_0.75left.txt`` (missing
    ratio r = 0.5), ``coco_train_0.4left.txt`` (r = 0.8),
    ``coco_train_singlelabel.txt`` (r = 1)). A listed class is an observed
    positive, every other label unannotated (0); there are no observed
    negatives. Lines are matched to the samples of the wrapped dataset by
    file name (the last component of the sample's ``img_path``), so their
    order does not matter.

    Args:
        path (str or PathLike): The text file.
        image_names (Sequence[str]): The file name of each sample of the
            wrapped dataset, in its order.
        num_classes (int): The number of classes.
        dataset_desc (str): What the rows must align with, for error
            messages.

    Returns:
        np.ndarray: The ``(len(image_names), num_classes)`` ``int8`` matrix
        of 1 and 0.

    Raises:
        FileNotFoundError: The file does not exist.
        ValueError: A line is malformed, lists an image twice or a class
            out of range, the dataset has two samples with one file name,
            or a sample of the dataset has no line.
    """
    name = f'`label_file` {os.fspath(path)!r}'
    _check_exists(path, name)
    row_of: Dict[str, int] = {}
    for row, image in enumerate(image_names):
        if row_of.setdefault(image, row) != row:
            raise ValueError(
                f'{name} names images by file name, but samples '
                f'{row_of[image]} and {row} of {dataset_desc} are both '
                f'{image!r}.')
    labels = np.zeros((len(image_names), num_classes), dtype=np.int8)
    line_of: Dict[str, int] = {}
    num_extra = 0
    with open(path, encoding='utf-8') as file:
        for line_no, line in enumerate(file, 1):
            line = line.strip()
            if not line:
                continue
            image, sep, indices = line.partition(',')
            image = image.strip()
            where = f'{name}, line {line_no} ({line[:80]!r})'
            if not sep or not image:
                raise ValueError(f'{where}: expected "<file name>,<class '
                                 'indices separated by spaces>".')
            try:
                classes = [int(token) for token in indices.split()]
            except ValueError:
                raise ValueError(f'{where}: the class indices must be '
                                 'integers separated by spaces.') from None
            bad = [c for c in classes if not 0 <= c < num_classes]
            if bad:
                raise ValueError(f'{where}: class indices {bad} are outside '
                                 f'[0, {num_classes}).')
            if image in line_of:
                raise ValueError(f'{where}: {image!r} is already listed on '
                                 f'line {line_of[image]}.')
            line_of[image] = line_no
            sample = row_of.get(image)
            if sample is None:
                num_extra += 1
                continue
            labels[sample, classes] = 1
    missing = [image for image in image_names if image not in line_of]
    if missing:
        raise ValueError(
            f'{name} has no line for {len(missing)} of the '
            f'{len(image_names)} samples of {dataset_desc}, e.g. '
            f'{missing[:3]}: it must list every image of the wrapped dataset '
            '(by file name).')
    if num_extra:
        print_log(
            f'{name}: {num_extra} lines name images that the wrapped dataset '
            'does not have; they are ignored.',
            logger='current')
    return labels


def load_label_file(
        path: Union[str, os.PathLike],
        num_samples: int,
        num_classes: int,
        dataset_desc: str,
        image_names: Optional[Callable[[],
                                       Sequence[str]]] = None) -> np.ndarray:
    """Read observed labels from an ``.npy`` or a text file, by suffix.

    An ``.npy`` file is read by :func:`load_npy_label_file` (rows in the
    wrapped dataset's order), a ``.txt`` file by
    :func:`load_text_label_file` (lines matched by file name).

    Args:
        path (str or PathLike): The ``.npy`` or ``.txt`` file.
        num_samples (int): The number of samples of the wrapped dataset.
        num_classes (int): The number of classes.
        dataset_desc (str): What the rows must align with, for error
            messages.
        image_names (Callable, optional): Returns the file name of each
            sample of the wrapped dataset, in its order; called for text
            files only. Required for them.

    Returns:
        np.ndarray: The ``(num_samples, num_classes)`` ``int8`` matrix.

    Raises:
        ValueError: Besides a malformed file, one without any observed
            label (nothing to train on).
    """
    suffix = osp.splitext(os.fspath(path))[1].lower()
    if suffix == '.txt':
        if image_names is None:
            raise ValueError('A text `label_file` needs the file names of '
                             'the samples.')
        names = image_names()
        if len(names) != num_samples:
            raise ValueError(f'Got {len(names)} file names for '
                             f'{num_samples} samples.')
        labels = load_text_label_file(path, names, num_classes, dataset_desc)
    elif suffix == '.npy':
        labels = load_npy_label_file(path, num_samples, num_classes,
                                     dataset_desc)
    else:
        raise ValueError(f'`label_file` {os.fspath(path)!r} must be an .npy '
                         'matrix or a .txt file of "<file name>,<class '
                         f'indices>" lines, but its suffix is {suffix!r}.')
    if labels.size and not labels.any():
        raise ValueError(
            f'`label_file` {os.fspath(path)!r} holds no observed label (every '
            f'entry of its {labels.shape[0]} x {labels.shape[1]} matrix is 0, '
            'unknown): there is nothing to train on. Check that the file is '
            'the one meant for this dataset.')
    return labels
