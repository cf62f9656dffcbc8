"""The arguments of :class:`~mmlml.datasets.PartialLabelDataset`: their
choices, the checks made when it is built (with errors that explain the
usual config mistakes) and the default of ``val_unknown``."""
import os
from typing import Optional, Sequence, Tuple, Union

from .label_states import EVAL_UNKNOWN
from .partial_labels import check_mode_ratio, check_seed, split_train_val

__all__ = [
    'MODES', 'SPLITS', 'VAL_LABELS', 'refuse_unexpected', 'check_arguments',
    'resolve_val_unknown'
]

#: The modes of the observed labels.
MODES = ('single_positive', 'ratio', 'full', 'file', 'annotated')
#: The splits of the wrapped dataset's samples.
SPLITS = ('train', 'val')
#: The labels that the validation split carries.
VAL_LABELS = ('clean', 'observed')

#: Arguments of the wrapped dataset that end up in the wrapper's config
#: when a config overrides a base config's dataset without ``_delete_``.
_INNER_DATASET_KEYS = ('ann_file', 'data_root', 'data_prefix', 'pipeline',
                       'metainfo', 'test_mode', 'filter_cfg', 'indices',
                       'serialize_data', 'max_refetch', 'num_samples',
                       'num_classes', 'img_size', 'image_list', 'label_dir',
                       'ann_format', 'difficult', 'unlisted', 'classes_file',
                       'image_set_path')


def refuse_unexpected(kwargs: dict) -> None:
    """Raise the ``TypeError`` of arguments that ``PartialLabelDataset``
    does not take, explaining the usual cause: a config that replaces a base
    config's dataset by a ``PartialLabelDataset`` without ``_delete_=True``,
    so that MMEngine merges the base dataset's arguments into the
    wrapper's."""
    names = ', '.join(sorted(map(repr, kwargs)))
    message = f'PartialLabelDataset got unexpected argument(s) {names}.'
    inner = sorted(set(kwargs) & set(_INNER_DATASET_KEYS))
    if inner:
        message += (
            f' {", ".join(map(repr, inner))} belong to the wrapped dataset. '
            'If a config replaces the `dataset` of a base config by a '
            'PartialLabelDataset, MMEngine merges the base dataset\'s '
            'arguments into the wrapper: write dataset=dict(_delete_=True, '
            "type='PartialLabelDataset', dataset=dict(...), ...) to "
            'replace it instead, and give these arguments to the inner '
            '`dataset`.')
    raise TypeError(message)


def check_arguments(
        mode: str,
        ratio: Optional[float],
        seed: int,
        split: Optional[str],
        val_frac: float,
        split_seed: int,
        val_labels: str,
        label_file: Optional[Union[str, os.PathLike]],
        val_unknown: Optional[str],
        modes: Sequence[str] = MODES,
        splits: Sequence[str] = SPLITS,
        val_label_choices: Sequence[str] = VAL_LABELS) -> Tuple[int, int]:
    """Check the arguments of ``PartialLabelDataset`` (the same names) that
    do not need the wrapped dataset, and fail at construction rather than
    at the first access.

    Args:
        modes, splits, val_label_choices (Sequence[str]): The valid
            ``mode``, ``split`` (besides None) and ``val_labels``.

    Returns:
        tuple[int, int]: ``seed`` and ``split_seed`` as ints.

    Raises:
        ValueError: A value outside its choices or range, a ``label_file``
            missing in the ``'file'`` mode or given in another.
        TypeError: ``label_file`` is not a path.
    """
    check_mode_ratio(mode, ratio, modes=modes)
    if mode == 'file' and label_file is None:
        raise ValueError("`label_file` is required in the 'file' mode: "
                         'the .npy file of the observed labels.')
    if mode != 'file' and label_file is not None:
        raise ValueError(
            f'`label_file` is read only in the \'file\' mode, but got '
            f'label_file={label_file!r} with mode={mode!r}: set '
            "mode='file' to train on the file's labels.")
    if label_file is not None and not isinstance(label_file,
                                                 (str, os.PathLike)):
        raise TypeError('`label_file` must be a path, but got '
                        f'{label_file!r} of type '
                        f'{type(label_file).__name__}.')
    seed = check_seed(seed)
    split_seed = check_seed(split_seed, 'split_seed')
    if split is not None and split not in splits:
        raise ValueError(f'`split` must be one of {splits} or None, '
                         f'but got {split!r}.')
    if val_labels not in val_label_choices:
        raise ValueError(f'`val_labels` must be one of {val_label_choices}, '
                         f'but got {val_labels!r}.')
    if val_unknown is not None and val_unknown not in EVAL_UNKNOWN:
        raise ValueError(f'`val_unknown` must be one of {EVAL_UNKNOWN} '
                         f'or None, but got {val_unknown!r}.')
    if split is not None:
        split_train_val(0, val_frac, split_seed)
    return seed, split_seed


def resolve_val_unknown(val_unknown: Optional[str], has_negative: bool) -> str:
    """How the evaluation targets of an observed validation split
    (``val_labels='observed'``) treat unknown labels.

    Args:
        val_unknown (str, optional): The argument: ``'ignore'``,
            ``'negative'`` or None, which chooses ``'ignore'`` when the
            split's observed labels have a negative and ``'negative'``
            otherwise.
        has_negative (bool): Whether the split's observed labels have an
            observed negative.

    Raises:
        ValueError: ``'ignore'`` without any observed negative (every
            predictor would score 100).
    """
    if val_unknown is None:
        return 'ignore' if has_negative else 'negative'
    if val_unknown == 'ignore' and not has_negative:
        raise ValueError(
            "val_unknown='ignore' evaluates on known labels only, but "
            'the observed labels of the validation split have no '
            'negative: every known label is a positive, so any predictor '
            "would score 100. Use val_unknown='negative' (unknown labels "
            "count as negatives, Cole et al.'s observed validation set), "
            "val_labels='clean', or labels with observed negatives.")
    return val_unknown
