"""The checks shared by the dataset classes, with errors that name the
dataset and the argument: indices, the annotation files of a wrapped
dataset (before anything reads them) and its pipeline. (Numeric arguments
are checked with :func:`mmlml.utils.hyperparameters.check_hparam`.)"""
import numbers
from typing import Any, Iterator, List, Tuple

from .file_utils import file_format, refuse_pickle

__all__ = [
    'check_index', 'check_annotation_files', 'check_config_annotation_files',
    'check_packed_pipeline'
]

#: Extensions that ``mmengine.load`` reads with its YAML loader, which can
#: build any Python object (mmlml's own datasets read YAML safely).
UNSAFE_YAML_EXTENSIONS = ('.yaml', '.yml')


def check_index(idx: Any, length: int, owner: str) -> int:
    """Return ``idx`` as a non-negative Python int if it indexes a dataset
    of ``length`` samples.

    Integers (Python and numpy, not ``bool``) in ``[-length, length)`` are
    accepted; a negative one counts from the end, as in MMEngine's
    ``BaseDataset`` and Python sequences.

    Args:
        idx: The index.
        length (int): The number of samples.
        owner (str): The dataset, as the errors name it.

    Returns:
        int: The index in ``[0, length)``.

    Raises:
        TypeError: ``idx`` is not an integer (a float, a string, a slice...).
        IndexError: ``idx`` is out of range.
    """
    if isinstance(idx, bool) or not isinstance(idx, numbers.Integral):
        raise TypeError(f'{owner} indices must be integers, got {idx!r} of '
                        f'type {type(idx).__name__}.')
    idx = int(idx)
    if not -length <= idx < length:
        raise IndexError(f'Index {idx} out of range for a {owner} of '
                         f'length {length}.')
    return idx + length if idx < 0 else idx


def _get(dataset: Any, key: str) -> Any:
    """``key`` of a dataset config (a dict) or attribute of a dataset."""
    if isinstance(dataset, dict):
        return dataset.get(key)
    return getattr(dataset, key, None)


def _datasets(dataset: Any, where: str) -> Iterator[Tuple[Any, str]]:
    """``dataset`` and every dataset it wraps (the ``dataset`` of
    ``RepeatDataset``, ``ClassBalancedDataset`` and ``PartialLabelDataset``,
    the ``datasets`` of ``ConcatDataset``), with where each sits."""
    yield dataset, where
    inner = _get(dataset, 'dataset')
    if inner is not None:
        yield from _datasets(inner, f'{where}.dataset')
    parts = _get(dataset, 'datasets')
    if isinstance(parts, (list, tuple)):
        for i, part in enumerate(parts):
            yield from _datasets(part, f'{where}.datasets[{i}]')


def _is_mmlml_dataset(dataset: Any) -> bool:
    """Whether ``dataset`` (a config or a dataset) is one of mmlml's
    datasets, which read their annotation files with safe parsers."""
    kind = _get(dataset, 'type') if isinstance(dataset, dict) \
        else type(dataset)
    if isinstance(kind, str):
        from mmlml.registry import DATASETS
        kind = DATASETS.get(kind)
    return str(getattr(kind, '__module__', '')).startswith('mmlml.')


def check_annotation_files(dataset: Any, where: str = 'dataset') -> None:
    """Refuse annotation files that loading would execute, before any is
    read: in ``dataset`` (a config dict or a dataset) and every dataset it
    wraps (:func:`_datasets`).

    MMEngine's ``BaseDataset`` (and so MMPretrain's ``MultiLabelDataset``)
    reads ``ann_file`` with ``mmengine.load``, which unpickles a ``.pkl``
    (any code the file names runs) and parses YAML with a loader that
    builds any Python object. A pickle ``ann_file`` is refused in every
    dataset; a YAML one in datasets other than mmlml's (which parse YAML
    with ``yaml.safe_load``).

    Args:
        dataset: The dataset config or dataset.
        where (str): How the errors name ``dataset``.

    Raises:
        ValueError: An ``ann_file`` in one of these formats, naming the
            file, the dataset and the format to convert it to.
    """
    for part, name in _datasets(dataset, where):
        ann_file = _get(part, 'ann_file')
        if not ann_file:
            continue
        refuse_pickle(ann_file, f'The annotation file ({name}.ann_file)')
        extension = file_format(ann_file)
        if (extension in UNSAFE_YAML_EXTENSIONS
                and not _is_mmlml_dataset(part)):
            raise ValueError(
                f'The annotation file ({name}.ann_file) {str(ann_file)!r} '
                'is YAML, which this dataset reads with MMEngine\'s YAML '
                'loader (it can build any Python object and run code): '
                'convert the file to JSON (.json).')


def _transform_names(pipeline: Any) -> List[str]:
    """The class names of the transforms of a ``Compose``."""
    return [type(t).__name__ for t in getattr(pipeline, 'transforms', ())]


def check_config_annotation_files(cfg) -> None:
    """:func:`check_annotation_files` on the dataset of every dataloader of
    a config (``train_dataloader``, ``val_dataloader``,
    ``test_dataloader``): what mmlml's tools run before the Runner builds
    any dataset, so that a stock dataset's pickle ``ann_file`` is refused
    too, not only one inside mmlml's wrapper."""
    for loader in ('train_dataloader', 'val_dataloader', 'test_dataloader'):
        dataset = (cfg.get(loader) or {}).get('dataset')
        if dataset is not None:
            check_annotation_files(dataset, f'{loader}.dataset')


def check_packed_pipeline(dataset: Any, owner: str) -> None:
    """Refuse a wrapped dataset whose pipeline does not end its samples in
    a packing transform (MMPretrain's ``PackInputs`` or another
    ``Pack*``): the wrapper's samples need it to become ``inputs`` and
    ``data_samples`` that keep ``sample_idx`` and ``gt_score``. An empty
    pipeline (a dataset built to read its labels only) is accepted, and so
    is a pipeline that is not a ``Compose`` of transforms.

    Args:
        dataset: The wrapped dataset, or MMEngine's ``ConcatDataset`` of
            such datasets (each part is checked).
        owner (str): The wrapper, as the error names it.

    Raises:
        ValueError: A pipeline with transforms and none of them a
            ``Pack*``, naming its transforms.
    """
    for part, name in _datasets(dataset, 'dataset'):
        pipeline = getattr(part, 'pipeline', None)
        names = _transform_names(pipeline)
        if not names or any(n.startswith('Pack') for n in names):
            continue
        raise ValueError(
            f'{owner}: the pipeline of the wrapped dataset ({name}.pipeline: '
            f'{names}) has no PackInputs: its samples would not carry '
            'sample_idx and the labels into the model. End the pipeline with '
            "dict(type='PackInputs').")
