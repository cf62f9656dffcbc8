"""OpenImages V6 with its human-verified image-level labels: a genuinely
partially labelled multi-label dataset.

The module holds the dataset class and the readers and writers it shares
with ``tools/dataset_converters/openimages.py``: the class-subset file, the
class descriptions, the official label CSV (streamed once) and the compact
``.npz`` file the converter writes.
"""
import contextlib
import csv
import io
import logging
import os.path as osp
import re
from array import array
from typing import Dict, Iterator, List, NamedTuple, Optional, Tuple, Union

import numpy as np
from mmengine.fileio import join_path
from mmengine.logging import print_log
from mmengine.utils import ProgressBar, is_abs

from mmlml.registry import DATASETS
from .custom_multi_label_dataset import CustomMultiLabelDataset
from .file_utils import check_file, quote

__all__ = [
    'OpenImagesMultiLabel', 'OpenImagesLabels', 'HUMAN_LABEL_FILES',
    'CLASS_DESCRIPTIONS_FILE', 'read_class_subset', 'read_class_descriptions',
    'class_display_names', 'read_human_labels', 'save_labels', 'load_labels'
]

#: The official human-verified image-level label file of each split.
HUMAN_LABEL_FILES = {
    'train': 'oidv6-train-annotations-human-imagelabels.csv',
    'validation': 'validation-annotations-human-imagelabels.csv',
    'test': 'test-annotations-human-imagelabels.csv',
}
#: The official class descriptions (``LabelName,DisplayName``).
CLASS_DESCRIPTIONS_FILE = 'oidv6-class-descriptions.csv'
#: The ``format`` entry of a converted ``.npz`` file.
NPZ_FORMAT = 'mmlml-openimages-labels-v1'

# A MID: "/m/011k07", "/g/11bc5tnk4m".
_MID = re.compile(r'/[a-z]/[0-9A-Za-z_]+')
# The arrays of a converted file.
_NPZ_KEYS = ('format', 'split', 'source', 'class_mids', 'class_names',
             'image_ids', 'pos_indptr', 'pos_indices', 'neg_indptr',
             'neg_indices', 'counts')
# The counts of reading a label CSV, in the order of ``counts`` in a file.
_COUNT_KEYS = ('num_rows', 'num_rows_outside_subset', 'num_duplicate_labels',
               'num_conflicting_labels')


class OpenImagesLabels(NamedTuple):
    """The human-verified labels of one split, restricted to a class subset.

    Rows are the images with at least one verified label (positive or
    negative) of the subset, sorted by ``ImageID``. The positives of row
    ``i`` are ``pos_indices[pos_indptr[i]:pos_indptr[i + 1]]`` (class
    indices, ascending), its verified negatives likewise with ``neg_*``
    (compressed sparse rows); every other class is unknown.

    Attributes:
        split (str): The split (``''`` if unknown).
        source (str): The file name of the official CSV the labels come from.
        class_mids (tuple[str]): The MIDs of the classes, in class order.
        class_names (tuple[str]): The class names, in class order.
        image_ids (np.ndarray): ``(N,)`` sorted ASCII ``ImageID`` (bytes).
        pos_indptr (np.ndarray): ``(N + 1,)`` ``int64``.
        pos_indices (np.ndarray): The positive class indices (integers).
        neg_indptr (np.ndarray): ``(N + 1,)`` ``int64``.
        neg_indices (np.ndarray): The negative class indices (integers).
        counts (dict): ``num_rows`` (data rows of the CSV),
            ``num_rows_outside_subset`` (rows of classes outside the subset,
            ignored), ``num_duplicate_labels`` (rows that repeat an image and
            class of an earlier row) and ``num_conflicting_labels`` (image
            and class pairs listed both as positive and as negative; the
            positive wins).
    """
    split: str
    source: str
    class_mids: Tuple[str, ...]
    class_names: Tuple[str, ...]
    image_ids: np.ndarray
    pos_indptr: np.ndarray
    pos_indices: np.ndarray
    neg_indptr: np.ndarray
    neg_indices: np.ndarray
    counts: Dict[str, int]


# ------------------------------------------------------------------ helpers


def _csv_rows(path: str, what: str) -> Iterator[Tuple[int, List[str]]]:
    """``(line number, fields)`` of the non-empty rows of a small CSV
    file."""
    check_file(path, what)
    with open(path, newline='', encoding='utf-8-sig') as f:
        reader = csv.reader(f)
        try:
            for row in reader:
                if row and any(field.strip() for field in row):
                    yield reader.line_num, row
        except (csv.Error, UnicodeDecodeError) as error:
            raise ValueError(f'{what} {path!r} is not a readable CSV file '
                             f'(near line {reader.line_num}): '
                             f'{error}') from None


def read_class_subset(path: str) -> List[Tuple[int, str]]:
    """Read a class-subset file.

    One class a line: its MID (``/m/011k07``), or a CSV row whose first
    column is its MID (``/m/011k07,Tortoise``: a line of the official
    ``class-descriptions-boxable.csv`` or ``oidv6-class-descriptions.csv``).
    A first line whose first field is ``LabelName`` is a header and is
    skipped; empty lines and lines starting with ``#`` are skipped. The
    order of the lines is the class order.

    Args:
        path (str): The file.

    Returns:
        list[tuple[int, str]]: ``(line number, MID)`` in file order.

    Raises:
        FileNotFoundError: The file does not exist.
        ValueError: A line is not a MID, a MID appears twice (both line
            numbers), or the file lists no class.
    """
    what = 'The class-subset file (`classes_file`)'
    subset: List[Tuple[int, str]] = []
    seen: Dict[str, int] = {}
    for line, row in _csv_rows(path, what):
        mid = row[0].strip()
        if mid.startswith('#'):
            continue
        if not subset and not seen and mid.lower() == 'labelname':
            continue  # header of a CSV class list
        if not _MID.fullmatch(mid):
            raise ValueError(
                f'Line {line} of {what.lower()[4:]} {path!r} is not an '
                f'OpenImages MID (like /m/011k07) or a CSV row whose first '
                f'column is one: {quote(",".join(row))}.')
        if mid in seen:
            raise ValueError(
                f'{what} {path!r} lists the class {mid} twice: on line '
                f'{seen[mid]} and on line {line}.')
        seen[mid] = line
        subset.append((line, mid))
    if not subset:
        raise ValueError(f'{what} {path!r} lists no class.')
    return subset


def read_class_descriptions(path: str) -> Dict[str, str]:
    """Read ``oidv6-class-descriptions.csv`` (``LabelName,DisplayName``,
    with or without the header line).

    Returns:
        dict: MID -> display name.

    Raises:
        FileNotFoundError: The file does not exist.
        ValueError: A row has not two fields, or a MID appears twice.
    """
    what = 'The class descriptions file (`class_descriptions`)'
    names: Dict[str, str] = {}
    for line, row in _csv_rows(path, what):
        if line == 1 and row[0].strip() == 'LabelName':
            continue
        if len(row) != 2 or not _MID.fullmatch(row[0].strip()):
            raise ValueError(
                f'Line {line} of the class descriptions file {path!r} must '
                f'be "LabelName,DisplayName" (a MID and its name), but is '
                f'{quote(",".join(row))}.')
        mid = row[0].strip()
        if mid in names:
            raise ValueError(f'The class descriptions file {path!r} lists '
                             f'{mid} twice (again on line {line}).')
        names[mid] = row[1].strip()
    return names


def class_display_names(subset: List[Tuple[int, str]],
                        classes_file: str,
                        descriptions: Optional[Dict[str, str]],
                        descriptions_file: str = '') -> Tuple[str, ...]:
    """The class names of a class subset.

    Without descriptions the names are the MIDs. With them, a name is the
    MID's ``DisplayName``; display names that repeat within the subset (the
    official list has homonyms) are made unique by appending the MID:
    ``'Bat (/m/01h44)'``.

    Args:
        subset (list): :func:`read_class_subset` of ``classes_file``.
        classes_file (str): The class-subset file, for error messages.
        descriptions (dict, optional): :func:`read_class_descriptions`.
        descriptions_file (str): Its path, for error messages.

    Raises:
        ValueError: A MID of the subset is not in the descriptions (the
            line of the class-subset file is named).
    """
    if descriptions is None:
        return tuple(mid for _, mid in subset)
    names = []
    for line, mid in subset:
        if mid not in descriptions:
            raise ValueError(
                f'Line {line} of the class-subset file {classes_file!r} '
                f'names {mid}, which is not a class of the class '
                f'descriptions file {descriptions_file!r}.')
        names.append(descriptions[mid] or mid)
    repeated = {name for name in names if names.count(name) > 1}
    return tuple(f'{name} ({mid})' if name in repeated else name
                 for name, (_, mid) in zip(names, subset))


class _CountingRaw(io.RawIOBase):
    """A binary file that reports the bytes read (for a progress bar)."""

    def __init__(self, raw, callback):
        super().__init__()
        self._raw = raw
        self._callback = callback

    def readable(self):
        return True

    def readinto(self, buffer):
        size = self._raw.readinto(buffer)
        self._callback(size or 0)
        return size


@contextlib.contextmanager
def _open_text(path: str, progress: bool):
    """Open a large text file for ``csv``, with a progress bar over its
    bytes (MMEngine's ``ProgressBar``, in MiB) if ``progress``."""
    if not progress:
        with open(path, newline='', encoding='utf-8-sig') as f:
            yield f
        return
    total = max(1, osp.getsize(path) >> 20)
    bar = ProgressBar(total)
    state = dict(read=0, shown=0)

    def update(size):
        state['read'] += size
        mib = min(total, state['read'] >> 20)
        if mib > state['shown']:
            bar.update(mib - state['shown'])
            state['shown'] = mib

    with open(path, 'rb') as raw:
        text = io.TextIOWrapper(
            io.BufferedReader(_CountingRaw(raw, update), 1 << 20),
            encoding='utf-8-sig',
            newline='')
        yield text
        if state['shown'] < total:
            bar.update(total - state['shown'])
        print()


def _fractional_error(path: str, line: int, row: List[str],
                      reason: str) -> ValueError:
    return ValueError(
        f'Line {line} of {path!r} {reason}: {quote(",".join(row))}. '
        'OpenImagesMultiLabel reads the human-verified image-level labels '
        '(Confidence 1: verified positive, 0: verified negative), '
        f'{", ".join(HUMAN_LABEL_FILES.values())}; fractional confidences '
        'and Source "machine" are the machine-generated labels '
        '(*-annotations-machine-imagelabels.csv), which are no ground '
        'truth: use the human-verified file of the split.')


def read_human_labels(path: str,
                      class_mids: Tuple[str, ...],
                      class_names: Optional[Tuple[str, ...]] = None,
                      split: str = '',
                      progress: bool = False) -> OpenImagesLabels:
    """Read an official human-verified image-level label CSV, streaming it
    once.

    The file has the header ``ImageID,Source,LabelName,Confidence`` (the
    columns are found by name; ``Source`` may be absent) and one row per
    verified label: ``Confidence`` 1 (verified positive) or 0 (verified
    negative); ``1.0`` and ``0.0`` are read too. Rows of classes outside
    ``class_mids`` are ignored. A row that repeats the image and class of an
    earlier row with the same confidence changes nothing; an image and class
    listed both as positive and as negative is a positive (both counted in
    ``counts``). Memory: the file is read row by row; what is kept is one
    entry per image and one per label of the subset.

    Args:
        path (str): The CSV file.
        class_mids (tuple[str]): The MIDs of the class subset, in class
            order.
        class_names (tuple[str], optional): Their names; defaults to the
            MIDs.
        split (str): The split, recorded in the result.
        progress (bool): Whether to show a progress bar (over the bytes of
            the file). Defaults to False.

    Returns:
        OpenImagesLabels: The labels, rows sorted by ``ImageID``.

    Raises:
        FileNotFoundError: The file does not exist.
        ValueError: The header lacks a column, a row has another number of
            fields or an empty ``ImageID``/``LabelName``, a confidence is
            not a number, or the file holds machine-generated labels
            (fractional confidence or Source ``machine``), or no row names
            a class of the subset: the message names the file, the line and
            its text.
    """
    check_file(path, 'The OpenImages label file (`ann_file`)')
    num_classes = len(class_mids)
    class_index = {mid: i for i, mid in enumerate(class_mids)}
    image_index: Dict[str, int] = {}
    rows_img = array('i')
    rows_cls = array('i')
    rows_state = array('b')
    num_rows = outside = 0
    with _open_text(path, progress) as f:
        reader = csv.reader(f)
        try:
            header = next(reader, None)
        except (csv.Error, UnicodeDecodeError) as error:
            raise ValueError(f'{path!r} is not a readable CSV file: '
                             f'{error}') from None
        if header is None:
            raise ValueError(f'The OpenImages label file {path!r} is empty; '
                             'it needs the header line '
                             '"ImageID,Source,LabelName,Confidence".')
        header = [field.strip() for field in header]
        missing = [
            key for key in ('ImageID', 'LabelName', 'Confidence')
            if key not in header
        ]
        if missing:
            raise ValueError(
                f'Line 1 of the OpenImages label file {path!r} must be the '
                'header "ImageID,Source,LabelName,Confidence", but is '
                f'{quote(",".join(header))} (no column {missing}).')
        col_id = header.index('ImageID')
        col_label = header.index('LabelName')
        col_conf = header.index('Confidence')
        col_source = header.index('Source') if 'Source' in header else None
        num_fields = len(header)
        try:
            for row in reader:
                if len(row) != num_fields:
                    if not row:
                        continue
                    raise ValueError(f'Line {reader.line_num} of {path!r} has '
                                     f'{len(row)} fields, but the header has '
                                     f'{num_fields}: {quote(",".join(row))}.')
                num_rows += 1
                conf = row[col_conf]
                if conf == '1':
                    state = 1
                elif conf == '0':
                    state = -1
                else:
                    try:
                        value = float(conf)
                    except ValueError:
                        raise ValueError(
                            f'Line {reader.line_num} of {path!r} has the '
                            f'Confidence {conf!r}, which is not a number: '
                            f'{quote(",".join(row))}.') from None
                    if value == 1:
                        state = 1
                    elif value == 0:
                        state = -1
                    elif 0 < value < 1:
                        raise _fractional_error(
                            path, reader.line_num, row,
                            f'has the fractional Confidence {conf!r}')
                    else:
                        raise ValueError(
                            f'Line {reader.line_num} of {path!r} has the '
                            f'Confidence {conf!r}; a human-verified label '
                            f'has 1 or 0: {quote(",".join(row))}.')
                if col_source is not None and row[col_source] == 'machine':
                    raise _fractional_error(path, reader.line_num, row,
                                            'has the Source "machine"')
                cls = class_index.get(row[col_label])
                if cls is None:
                    if not row[col_label]:
                        raise ValueError(
                            f'Line {reader.line_num} of {path!r} has an '
                            f'empty LabelName: {quote(",".join(row))}.')
                    outside += 1
                    continue
                image_id = row[col_id]
                img = image_index.get(image_id)
                if img is None:
                    if not image_id or '/' in image_id:
                        raise ValueError(
                            f'Line {reader.line_num} of {path!r} has the '
                            f'ImageID {image_id!r}, which is no file name: '
                            f'{quote(",".join(row))}.')
                    img = image_index[image_id] = len(image_index)
                rows_img.append(img)
                rows_cls.append(cls)
                rows_state.append(state)
        except (csv.Error, UnicodeDecodeError) as error:
            raise ValueError(
                f'Line {reader.line_num} of {path!r} is not readable CSV '
                f'text: {error}.') from None
    if not image_index:
        raise ValueError(
            f'No row of {path!r} ({num_rows} rows) names a class of the '
            f'class subset ({num_classes} classes, e.g. '
            f'{", ".join(class_mids[:3])}): check the class-subset file.')
    try:
        image_ids = np.array(list(image_index), dtype='S')
    except UnicodeEncodeError:
        bad = next(i for i in image_index if not i.isascii())
        raise ValueError(f'{path!r} has the ImageID {bad!r}, which is not '
                         'ASCII.') from None
    del image_index
    counts = dict(num_rows=num_rows, num_rows_outside_subset=outside)
    arrays, more = _compress(image_ids, np.frombuffer(rows_img, np.int32),
                             np.frombuffer(rows_cls, np.int32),
                             np.frombuffer(rows_state, np.int8), num_classes)
    counts.update(more)
    return OpenImagesLabels(
        split=split,
        source=osp.basename(path),
        class_mids=tuple(class_mids),
        class_names=tuple(class_names or class_mids),
        counts=counts,
        **arrays)


def _compress(image_ids: np.ndarray, img: np.ndarray, cls: np.ndarray,
              state: np.ndarray, num_classes: int):
    """Sort the labels by ``ImageID``, resolve repeats and conflicts, and
    pack them as compressed sparse rows."""
    num_images = len(image_ids)
    order = np.argsort(image_ids, kind='stable')
    rank = np.empty(num_images, dtype=np.int64)
    rank[order] = np.arange(num_images)
    key = rank[img] * num_classes + cls
    # By image and class, the positive (1) before the negative (-1).
    by_key = np.lexsort((-state.astype(np.int64), key))
    key, state = key[by_key], state[by_key]
    first = np.ones(len(key), dtype=bool)
    first[1:] = key[1:] != key[:-1]
    starts = np.flatnonzero(first)
    chosen = state[starts]  # the positive wins
    conflicts = int(
        np.count_nonzero(np.minimum.reduceat(state, starts) != chosen))
    key = key[starts]
    rows, classes = np.divmod(key, num_classes)
    dtype = np.int16 if num_classes <= np.iinfo(np.int16).max else np.int32
    arrays = dict(image_ids=image_ids[order])
    for name, value in (('pos', 1), ('neg', -1)):
        mask = chosen == value
        indptr = np.zeros(num_images + 1, dtype=np.int64)
        np.cumsum(
            np.bincount(rows[mask], minlength=num_images), out=indptr[1:])
        arrays[f'{name}_indptr'] = indptr
        arrays[f'{name}_indices'] = classes[mask].astype(dtype)
    more = dict(
        num_duplicate_labels=int(len(first) - len(starts)),
        num_conflicting_labels=conflicts)
    return arrays, more


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
    both = np.intersect1d(*keys, assume_unique=True)
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


# ------------------------------------------------------------------ dataset
@DATASETS.register_module()
class OpenImagesMultiLabel(CustomMultiLabelDataset):
    """`OpenImages V6 <https://storage.googleapis.com/openimages/web/
    index.html>`_ with its human-verified image-level labels, a genuinely
    partially labelled multi-label dataset.

    The labels of a split are the rows of its official human-verified
    image-level label file (``ImageID,Source,LabelName,Confidence``):
    ``Confidence`` 1 is a verified positive, 0 a verified negative, and a
    class that the file does not list for an image is **unknown**
    (``unlisted='unknown'``, set by the class; nothing is made up for
    them). Read as:

    - **Classes**: the MIDs of ``classes_file`` (one a line, or CSV rows
      whose first column is the MID), in the order of that file; labels of
      other classes are ignored. The class names are the MIDs' display
      names in ``class_descriptions`` (a display name that repeats within
      the subset gets its MID appended: ``'Bat (/m/01h44)'``), or the MIDs
      if no descriptions are read. ``metainfo['classes']`` and the
      attribute :attr:`class_mids` (the MIDs in class order) are set when
      the annotation is loaded.
    - **Rows**: by default the images with at least one verified positive
      in the subset (``drop_images_without_positive=True``); with False,
      every image with at least one verified label (positive or negative)
      in the subset. An image without any verified label of the subset is
      never a row. The number of images left out for having only
      negatives is ``annotation_statistics()['num_images_dropped']``.
    - **Row order**: ``ImageID`` sorted as strings (the IDs are lower-case
      hexadecimal, so this is also their numeric order), whatever the order
      of the file. The partial-label generators of
      :class:`PartialLabelDataset` draw in row order.
    - **Repeated rows**: an image and class listed twice with the same
      confidence count once; listed as positive and as negative, they are a
      **positive** (the pair was verified present at least once). Both are
      counted (``num_duplicate_labels``, ``num_conflicting_labels`` in
      :meth:`annotation_statistics`) and conflicts are logged.
    - **Machine labels**: a fractional confidence or the Source
      ``machine`` is an error: the ``*-machine-imagelabels.csv`` files are
      no ground truth.

    The label states (:meth:`get_label_states`, mmlml's training encoding)
    are 1 for a verified positive, -1 for a verified negative and 0 for an
    unknown label. The ``'validation'`` and ``'test'`` splits are evaluation
    splits: their samples carry MMPretrain's evaluation ``gt_score`` (1
    positive, 0 negative, -1 unknown, which ``AveragePrecision`` and
    ``MultiLabelMetric`` ignore), so mAP is computed over verified labels
    only. Each data info holds ``img_path``, ``gt_label`` and
    ``gt_label_negative`` (ascending class indices) and ``image_id``.

    ``ann_file`` is either the official CSV (read directly; fine for the
    validation and test files, a minute or more for the train file of tens
    of millions of rows) or the ``.npz`` file that
    ``tools/dataset_converters/openimages.py`` writes from it, which loads
    in seconds. Both give the same dataset. The ``.npz`` holds the class
    subset it was made with: ``classes_file`` may be omitted, and if given
    must list the same MIDs in the same order; ``class_descriptions`` is
    not read (the names are in the file).

    The dataset directory structure is as follows (the images of a split
    named ``<ImageID>.jpg``)::

        data/openimages
        ├── annotations
        │   ├── oidv6-class-descriptions.csv
        │   ├── oidv6-train-annotations-human-imagelabels.csv
        │   ├── validation-annotations-human-imagelabels.csv
        │   ├── test-annotations-human-imagelabels.csv
        │   ├── classes_567.txt            (a class-subset file)
        │   └── train_567.npz              (converted, optional)
        ├── train
        │   ├── 000002b66c9c498e.jpg
        │   └── ...
        ├── validation
        │   └── ...
        └── test
            └── ...

    Args:
        data_root (str): The root directory of the dataset (``ann_file``,
            ``classes_file``, ``class_descriptions`` and ``data_prefix`` are
            relative to it unless absolute). Defaults to ''.
        split (str): ``'train'``, ``'validation'`` or ``'test'``.
            Defaults to ``'train'``.
        ann_file (str): The official label CSV (``.csv``) or a converted
            file (``.npz``). Defaults to '', which means
            ``annotations/<official file of the split>``.
        classes_file (str, optional): The class-subset file. Required with a
            CSV ``ann_file``; optional with an ``.npz``. Defaults to None.
        class_descriptions (str, optional): The class descriptions CSV for
            the class names. '' (default) means
            ``annotations/oidv6-class-descriptions.csv`` if it exists (the
            MIDs otherwise); None means the MIDs; a path must exist.
        data_prefix (str | dict): The image folder, relative to
            ``data_root``: a string or ``dict(img_path=...)``. Defaults to
            '', which means the split name.
        drop_images_without_positive (bool): Whether to leave out the images
            whose verified labels in the subset are all negatives.
            Defaults to True.
        pipeline (Sequence): Processing pipeline. Defaults to ().
        test_mode (bool): Whether the dataset is used for testing. Defaults
            to False.
        lazy_init (bool): Whether to load the annotation only on
            ``full_init``. Defaults to False.
        **kwargs: Other keyword arguments of :class:`CustomMultiLabelDataset`
            and MMPretrain's ``BaseDataset`` (``metainfo``, ``indices``...).

    Raises:
        FileNotFoundError: A file does not exist (its path is named).
        ValueError: A file is malformed (path, line and text), the
            class-subset file repeats a MID or names one the descriptions
            lack (path and line), the label file holds machine labels, or a
            converted file was made for another split or class subset.

    Examples:
        >>> from mmlml.datasets.openimages_multi_label import \\
        ...     OpenImagesMultiLabel
        >>> val = OpenImagesMultiLabel(
        ...     data_root='data/openimages', split='validation',
        ...     classes_file='annotations/classes_567.txt')
        >>> train = dict(
        ...     type='PartialLabelDataset', mode='annotated',
        ...     dataset=dict(type='OpenImagesMultiLabel',
        ...                  data_root='data/openimages', split='train',
        ...                  ann_file='annotations/train_567.npz',
        ...                  pipeline=[...]))
    """

    #: The splits.
    SPLITS = tuple(HUMAN_LABEL_FILES)

    def __init__(self,
                 data_root: str = '',
                 split: str = 'train',
                 ann_file: str = '',
                 classes_file: Optional[str] = None,
                 class_descriptions: Optional[str] = '',
                 data_prefix: Union[str, dict] = '',
                 drop_images_without_positive: bool = True,
                 pipeline=(),
                 test_mode: bool = False,
                 lazy_init: bool = False,
                 **kwargs):
        self.check_split(split)
        self.refuse_unlisted(
            kwargs, "'unknown': a class an image does not list is unverified")
        self.split = split
        self.drop_images_without_positive = bool(drop_images_without_positive)
        if not ann_file:
            ann_file = join_path('annotations', HUMAN_LABEL_FILES[split])
        ann_lower = str(ann_file).lower()
        if not ann_lower.endswith(('.csv', '.npz')):
            raise ValueError(
                f'`ann_file` must be the official label CSV (.csv) or a file '
                'converted by tools/dataset_converters/openimages.py (.npz), '
                f'but got {ann_file!r}.')
        self._converted = ann_lower.endswith('.npz')
        if classes_file is None and not self._converted:
            raise ValueError(
                f'{type(self).__name__} needs `classes_file` (the MIDs of '
                'the class subset, one a line) to read the official label '
                f'CSV {ann_file!r}.')

        def under_root(path):
            if path and not is_abs(path) and data_root:
                return join_path(data_root, path)
            return path

        self.classes_file = under_root(classes_file)
        self._descriptions_required = bool(class_descriptions)
        if class_descriptions == '':
            class_descriptions = join_path('annotations',
                                           CLASS_DESCRIPTIONS_FILE)
        self.class_descriptions = under_root(class_descriptions)
        if not data_prefix:
            data_prefix = dict(img_path=split)
        elif isinstance(data_prefix, dict) and not data_prefix.get('img_path'):
            data_prefix = dict(data_prefix, img_path=split)
        self._counts: Dict[str, int] = {}
        self._num_dropped = 0
        #: tuple[str]: The MIDs of the classes, in class order (set when the
        #: annotation is loaded; not in ``metainfo``, which MMEngine
        #: deep-copies on every access).
        self.class_mids: Optional[Tuple[str, ...]] = None
        super().__init__(
            ann_file=ann_file,
            data_root=data_root,
            data_prefix=data_prefix,
            pipeline=pipeline,
            test_mode=test_mode,
            lazy_init=lazy_init,
            unlisted='unknown',
            **kwargs)

    # ------------------------------------------------------------ loading
    def _class_subset(self) -> Tuple[Tuple[str, ...], Tuple[str, ...]]:
        """The MIDs and names of the classes of ``classes_file``."""
        subset = read_class_subset(self.classes_file)
        descriptions = None
        path = self.class_descriptions
        if path and (self._descriptions_required or osp.isfile(path)):
            descriptions = read_class_descriptions(path)
        elif path:
            print_log(
                f'{type(self).__name__}: no class descriptions file {path!r}; '
                'the class names are the MIDs.',
                logger='current')
        names = class_display_names(subset, self.classes_file, descriptions,
                                    path or '')
        return tuple(mid for _, mid in subset), names

    def _read_labels(self) -> OpenImagesLabels:
        path = self.ann_file
        if not self._converted:
            mids, names = self._class_subset()
            return read_human_labels(path, mids, names, split=self.split)
        labels = load_labels(path)
        if labels.split and labels.split != self.split:
            raise ValueError(
                f'The converted file {path!r} holds the {labels.split!r} '
                f'split ({labels.source}), but {type(self).__name__} was '
                f'given split={self.split!r}.')
        if self.classes_file is not None:
            mids = tuple(mid
                         for _, mid in read_class_subset(self.classes_file))
            if mids != labels.class_mids:
                raise ValueError(
                    f'The class-subset file {self.classes_file!r} '
                    f'({len(mids)} classes) is not the class subset of the '
                    f'converted file {path!r} ({len(labels.class_mids)} '
                    'classes, or another order): convert again with this '
                    'file, or omit `classes_file`.')
        return labels

    def load_data_list(self) -> List[dict]:
        """Read the labels into one item per image, sorted by ``ImageID``."""
        labels = self._read_labels()
        given = self._metainfo.get('classes')
        if given is not None and tuple(given) != labels.class_names:
            raise ValueError(
                f'The classes given in `metainfo` ({len(given)}) differ from '
                f'the {len(labels.class_names)} classes of the class subset; '
                f'{type(self).__name__} takes its classes from '
                '`classes_file`.')
        self._metainfo['classes'] = labels.class_names
        self.class_mids = labels.class_mids
        self._counts = dict(labels.counts)

        pos_ptr = labels.pos_indptr.tolist()
        neg_ptr = labels.neg_indptr.tolist()
        pos = labels.pos_indices.tolist()
        neg = labels.neg_indices.tolist()
        image_ids = labels.image_ids.astype(str).tolist()
        del labels
        # The image folder with its separator: one join, not one per image.
        head = join_path(self.img_prefix, '')
        drop = self.drop_images_without_positive
        data_list = []
        append = data_list.append
        for i, image_id in enumerate(image_ids):
            start, end = pos_ptr[i], pos_ptr[i + 1]
            if start == end and drop:
                continue
            append(
                dict(
                    img_path=head + image_id + '.jpg',
                    gt_label=pos[start:end],
                    gt_label_negative=neg[neg_ptr[i]:neg_ptr[i + 1]],
                    image_id=image_id))
        self._num_dropped = len(image_ids) - len(data_list)
        return data_list

    def filter_data(self) -> List[dict]:
        """Check and count the labels (see :class:`CustomMultiLabelDataset`),
        adding the counts of the CSV's repeats and conflicts."""
        data_list = super().filter_data()
        self._statistics.update(
            num_images_dropped=self._num_dropped,
            num_duplicate_labels=self._counts['num_duplicate_labels'],
            num_conflicting_labels=self._counts['num_conflicting_labels'])
        return data_list

    def full_init(self) -> None:
        """Load the annotation and log its counts."""
        if self._fully_initialized:
            return
        super().full_init()
        counts = self._counts
        print_log(
            f'{type(self).__name__} [{self.split}]: {counts["num_rows"]} '
            f'rows in {self.ann_file} ({counts["num_rows_outside_subset"]} '
            'of classes outside the subset, ignored); '
            f'{self._num_dropped} images with only negatives in the subset ' +
            ('left out.' if self.drop_images_without_positive else '(kept).'),
            logger='current')
        if counts['num_conflicting_labels'] or counts['num_duplicate_labels']:
            print_log(
                f'{type(self).__name__} [{self.split}]: '
                f'{counts["num_duplicate_labels"]} rows repeat an image and '
                f'class; {counts["num_conflicting_labels"]} image and class '
                'pairs are listed both as positive and as negative and are '
                'taken as positive.',
                logger='current',
                level=logging.WARNING
                if counts['num_conflicting_labels'] else logging.INFO)

    def extra_repr(self) -> List[str]:
        """The extra repr information of the dataset."""
        return [
            f'Split: \t{self.split}',
            f'Annotation file: \t{self.ann_file}',
            f'Class-subset file: \t{self.classes_file}',
            f'Prefix of images: \t{self.img_prefix}',
        ]
