"""The official files of OpenImages V6 that ``OpenImagesMultiLabel`` and
``tools/dataset_converters/openimages.py`` read: the class-subset file, the
class descriptions and the human-verified image-level label CSV of a split
(streamed once), read into :class:`OpenImagesLabels`.
"""
import contextlib
import csv
import io
import os.path as osp
import re
from array import array
from typing import Dict, Iterator, List, NamedTuple, Optional, Tuple

import numpy as np

from mmlml.utils.progress_line import ProgressLine
from ..file_utils import check_file, quote

__all__ = [
    'OpenImagesLabels', 'HUMAN_LABEL_FILES', 'CLASS_DESCRIPTIONS_FILE',
    'read_class_subset', 'read_class_descriptions', 'class_display_names',
    'read_human_labels'
]

#: The official human-verified image-level label file of each split.
HUMAN_LABEL_FILES = {
    'train': 'oidv6-train-annotations-human-imagelabels.csv',
    'validation': 'validation-annotations-human-imagelabels.csv',
    'test': 'test-annotations-human-imagelabels.csv',
}
#: The official class descriptions (``LabelName,DisplayName``).
CLASS_DESCRIPTIONS_FILE = 'oidv6-class-descriptions.csv'

# A MID: "/m/011k07", "/g/11bc5tnk4m".
_MID = re.compile(r'/[a-z]/[0-9A-Za-z_]+')


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
    bytes (:class:`~mmlml.utils.progress_line.ProgressLine`, in MiB) if
    ``progress``."""
    if not progress:
        with open(path, newline='', encoding='utf-8-sig') as f:
            yield f
        return
    total = max(1, osp.getsize(path) >> 20)
    bar = ProgressLine(f'reading {osp.basename(path)}', total, 'MiB')
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
        bar.close()


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
