"""The class names of a trained model: what its checkpoint saved, else what
its config's test dataset declares."""
from typing import List, Optional, Tuple

from mmengine.registry import DefaultScope

from mmlml.registry import DATASETS

__all__ = ['class_names']


def class_names(cfg, checkpoint: dict) -> Tuple[Optional[List[str]], str]:
    """The class names and where they come from: the checkpoint's
    ``meta['dataset_meta']['classes']`` (what ``tools/train.py`` saves),
    else the metainfo of the config's test (or validation) dataset, built
    with ``lazy_init=True`` (no annotation file is read); ``(None, why)``
    when neither has them.

    Args:
        cfg (Config): The config the model was trained with.
        checkpoint (dict): The loaded checkpoint.
    """
    meta = checkpoint.get('meta') or {}
    classes = (meta.get('dataset_meta') or {}).get('classes')
    if classes is not None:
        return [str(name) for name in classes], 'the checkpoint'
    reasons = []
    for name in ('test_dataloader', 'val_dataloader'):
        dataset_cfg = (cfg.get(name) or {}).get('dataset')
        if dataset_cfg is None:
            continue
        try:
            with DefaultScope.overwrite_default_scope('mmpretrain'):
                dataset = DATASETS.build(dict(dataset_cfg, lazy_init=True))
            classes = dataset.metainfo.get('classes')
        except Exception as error:
            reasons.append(f'{name}.dataset: {type(error).__name__}: '
                           f'{error}')
            continue
        if classes is not None:
            return ([str(name)
                     for name in classes], f'the config ({name}.dataset)')
        reasons.append(f'{name}.dataset has no classes in its metainfo')
    return None, '; '.join(reasons) or 'the config has no test dataset'
