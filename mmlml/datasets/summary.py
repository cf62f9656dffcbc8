"""A summary of a prepared dataset: the counts a correct preparation gives
and the image files that are missing."""
from typing import Any, Dict, List

from mmengine.fileio import exists

from mmlml.utils.progress_line import ProgressLine

__all__ = ['dataset_summary', 'format_summary']


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
        num_images, num_pos = len(positives), sum(positives)
        summary = dict(
            num_images=num_images,
            num_classes=num_classes,
            num_positives=num_pos,
            num_negatives=num_images * num_classes - num_pos,
            num_unknown=0,
            positives_per_image=num_pos / num_images if num_images else 0.,
            num_images_without_positive=positives.count(0),
            num_images_without_label=0)
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
