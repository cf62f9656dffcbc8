"""A summary of a prepared dataset: the counts a correct preparation gives
and the image files that are missing."""
from typing import Any, Dict, List, Optional, Union

from mmengine.fileio import exists

from mmlml.utils.progress_line import ProgressLine

__all__ = ['annotation_counts', 'dataset_summary', 'format_summary']


def annotation_counts(num_images: int,
                      num_classes: int,
                      num_positives: int,
                      num_negatives: Optional[int],
                      no_positive: int,
                      no_label: int = 0) -> Dict[str, Union[int, float]]:
    """The counts of an annotation, as
    :meth:`~mmlml.datasets.CustomMultiLabelDataset.annotation_statistics`
    gives them and :func:`format_summary` prints them.

    Args:
        num_images (int), num_classes (int), num_positives (int): The
            sizes and the number of positive labels.
        num_negatives (int, optional): The listed negatives, the other
            labels being unknown; None for a fully labelled annotation,
            whose every label that is not a positive is a negative.
        no_positive (int): The images without a positive.
        no_label (int): The images without any known label. Defaults to 0.

    Returns:
        dict: ``num_images``, ``num_classes``, ``num_positives``,
        ``num_negatives``, ``num_unknown``, ``positives_per_image``,
        ``num_images_without_positive`` and ``num_images_without_label``.
    """
    not_positive = num_images * num_classes - num_positives
    if num_negatives is None:
        num_negatives = not_positive
    return dict(
        num_images=num_images,
        num_classes=num_classes,
        num_positives=num_positives,
        num_negatives=num_negatives,
        num_unknown=not_positive - num_negatives,
        positives_per_image=num_positives / num_images if num_images else 0.,
        num_images_without_positive=no_positive,
        num_images_without_label=no_label)


def dataset_summary(dataset: Any,
                    check_images: bool = True,
                    progress: bool = True,
                    max_missing: int = 20) -> Dict[str, Any]:
    """Count a dataset's labels and look for its image files.

    Args:
        dataset: An mmlml dataset with ``annotation_statistics()`` (e.g.
            :class:`CustomMultiLabelDataset` and the benchmark datasets), or
            any MMPretrain multi-label dataset (counted through
            ``get_cat_ids``, every other label a negative).
        check_images (bool): Whether to check that every ``img_path``
            exists. Defaults to True.
        progress (bool): Whether to show a progress bar. Defaults to True.
        max_missing (int): How many missing paths to keep. Defaults to 20.

    Returns:
        dict: The counts of ``annotation_statistics`` and, with
        ``check_images``, ``num_missing_images`` and ``missing_images`` (the
        first ``max_missing`` paths).
    """
    if hasattr(dataset, 'annotation_statistics'):
        summary = dict(dataset.annotation_statistics())
    else:
        num_classes = len(dataset.metainfo['classes'])
        positives = [len(dataset.get_cat_ids(i)) for i in range(len(dataset))]
        summary = annotation_counts(
            len(positives),
            num_classes,
            sum(positives),
            None,
            no_positive=positives.count(0))
    if check_images:
        missing: List[str] = []
        num_missing = 0
        bar = ProgressLine('checking images', len(dataset),
                           'images') if progress else None
        for i in range(len(dataset)):
            path = dataset.get_data_info(i).get('img_path')
            if path is None or not exists(path):
                num_missing += 1
                if len(missing) < max_missing:
                    missing.append(str(path))
            if bar is not None:
                bar.update()
        if bar is not None:
            bar.close()
        summary.update(num_missing_images=num_missing, missing_images=missing)
    return summary


def format_summary(summary: Dict[str, Any], name: str = 'dataset') -> str:
    """Format :func:`dataset_summary` as the lines a converter prints."""
    lines = [
        f'{name}: {summary["num_images"]} images, '
        f'{summary["num_classes"]} classes',
        f'  positives: {summary["num_positives"]} '
        f'({summary["positives_per_image"]:.2f} per image)',
        f'  negatives: {summary["num_negatives"]}, unknown labels: '
        f'{summary["num_unknown"]}',
        f'  images without positive: '
        f'{summary["num_images_without_positive"]}, without any label: '
        f'{summary["num_images_without_label"]}',
    ]
    if 'num_missing_images' in summary:
        lines.append(f'  missing image files: {summary["num_missing_images"]}')
        lines += [f'    {path}' for path in summary['missing_images']]
        if summary['num_missing_images'] > len(summary['missing_images']):
            lines.append('    ...')
    return '\n'.join(lines)
