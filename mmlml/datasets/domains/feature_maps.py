"""A frozen backbone's feature maps of generated images, computed once and
cached on disk: the input of the linear protocol (Cole et al.'s "linear"
setting, a classifier trained on fixed ImageNet features).

A generated dataset given ``features=dict(...)`` (see
:func:`check_features`) puts in every data info, instead of the image, the
backbone's last feature map as an ``(h, w, C)`` ``float16`` array (the
``img`` key, so that ``PackInputs`` makes it the ``(C, h, w)`` input of a
``PrecomputedFeatures`` backbone). The spatial map is kept, not only its
average, for the methods that read class activation maps (BoostLU).
"""
import hashlib
import json
import os
import os.path as osp
import tempfile
from typing import Callable, Optional, Sequence, Tuple

import numpy as np

from mmlml.utils.progress_line import ProgressLine

__all__ = [
    'check_features', 'check_feature_pipeline', 'feature_maps', 'map_shape',
    'read_cache', 'cached_feature_maps', 'feature_cache_path', 'file_digest'
]

#: The keys of ``features`` and their defaults.
FEATURE_DEFAULTS = dict(
    backbone=dict(type='EfficientNetLite', arch='lite0'),
    checkpoint=None,
    # The input statistics of the backbone's weights (EfficientNet-Lite:
    # RGB, mean 127, std 128).
    mean=(127., 127., 127.),
    std=(128., 128., 128.),
    cache_dir='work_dirs/feature_cache',
    batch_size=50)

#: The transforms a pipeline may hold on feature maps: they read no pixel.
FEATURE_TRANSFORMS = ('PackInputs', 'MultiView')


def check_feature_pipeline(pipeline: Optional[Sequence], name: str) -> None:
    """Refuse, before anything is built, a pipeline that would transform
    the images of a dataset that gives feature maps instead (``features``
    set): a flip or a crop of an ``(h, w, C)`` map of 1280 channels fails
    deep in OpenCV at the first batch, or means nothing. Only
    :data:`FEATURE_TRANSFORMS` (given as dicts; ``MultiView``'s own
    pipelines are checked too) may run on them.

    Raises:
        ValueError: naming the transforms and what to do instead.
    """

    def image_transforms(transforms) -> list:
        found = []
        for transform in transforms or ():
            if isinstance(transform, (list, tuple)):
                found += image_transforms(transform)
            elif not isinstance(transform, dict):
                continue  # a built transform: not a config to read
            elif transform.get('type') not in FEATURE_TRANSFORMS:
                found.append(str(transform.get('type')))
            else:
                found += image_transforms(transform.get('transforms'))
        return found

    found = image_transforms(pipeline)
    if found:
        raise ValueError(
            f'{name} gives cached feature maps (features=...), not images: '
            f'its pipeline\'s {", ".join(dict.fromkeys(found))} cannot run '
            'on them. A method that augments images (configs/demo/'
            'lasd_cr.py) needs a domain of images (synthetic_shapes, or '
            'the same domain without features).')


def check_features(features: Optional[dict]) -> Optional[dict]:
    """``features`` with its defaults filled in (None stays None).

    Keys: ``backbone`` (the MODELS config of the frozen backbone),
    ``checkpoint`` (a checkpoint with its weights as ``backbone.*``; None:
    random weights, for tests only), ``mean``/``std`` (RGB input
    statistics), ``cache_dir`` (where the maps are kept; None: not kept),
    ``batch_size``.

    Raises:
        TypeError: ``features`` is not a dict or names an unknown key.
        FileNotFoundError: The checkpoint does not exist.
    """
    if features is None:
        return None
    if not isinstance(features, dict):
        raise TypeError('features must be a dict (backbone, checkpoint, '
                        f'mean, std, cache_dir, batch_size), got '
                        f'{features!r}')
    unknown = sorted(set(features) - set(FEATURE_DEFAULTS))
    if unknown:
        raise TypeError(f'features: unknown keys {unknown}; the keys are '
                        f'{sorted(FEATURE_DEFAULTS)}')
    features = {**FEATURE_DEFAULTS, **features}
    checkpoint = features['checkpoint']
    if checkpoint is not None and not osp.isfile(checkpoint):
        raise FileNotFoundError(
            f'features.checkpoint: {checkpoint} does not exist (for '
            'EfficientNet-Lite0: python tools/model_converters/'
            'efficientnet_lite0.py)')
    return features


def file_digest(path: str) -> str:
    """The SHA-256 digest of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, 'rb') as file:
        for block in iter(lambda: file.read(1 << 20), b''):
            digest.update(block)
    return digest.hexdigest()


#: The least seconds between two progress lines of :func:`feature_maps`.
PROGRESS_INTERVAL = 5.


def feature_maps(images: np.ndarray, features: dict) -> np.ndarray:
    """The last feature map of ``features['backbone']`` for each of the
    ``(N, H, W, 3)`` BGR ``uint8`` ``images``, as an ``(N, h, w, C)``
    ``float16`` array (the backbone in eval mode, no gradients), with a
    progress line on stderr when it takes more than a few seconds."""
    import torch
    from mmpretrain.registry import MODELS

    from mmlml.compat.checkpoint_policy import safe_load
    backbone = MODELS.build(dict(features['backbone']))
    if features['checkpoint'] is not None:
        state = safe_load(features['checkpoint'], map_location='cpu')
        state = state.get('state_dict', state)
        backbone.load_state_dict({
            key[len('backbone.'):]: value
            for key, value in state.items() if key.startswith('backbone.')
        })
    backbone.eval()
    mean = torch.tensor(features['mean'], dtype=torch.float32)
    std = torch.tensor(features['std'], dtype=torch.float32)
    out = None
    progress = ProgressLine(
        'caching features', len(images), 'images', interval=PROGRESS_INTERVAL)
    with torch.no_grad():
        for start in range(0, len(images), features['batch_size']):
            batch = torch.from_numpy(
                np.ascontiguousarray(
                    images[start:start + features['batch_size'],
                           ..., ::-1])).float()
            batch = ((batch - mean) / std).permute(0, 3, 1, 2)
            maps = backbone(batch)[-1].permute(0, 2, 3, 1).numpy()
            if out is None:
                out = np.empty((len(images), ) + maps.shape[1:], np.float16)
            out[start:start + len(maps)] = maps
            progress.update(len(maps))
    progress.close()
    if out is None:
        raise ValueError('There are no images to compute the features of.')
    return out


def map_shape(features: dict, image_size: Tuple[int, int]) -> tuple:
    """The ``(h, w, C)`` feature map of ``features['backbone']`` for an
    image of ``image_size`` (one blank image through the backbone)."""
    import torch
    from mmpretrain.registry import MODELS
    backbone = MODELS.build(dict(features['backbone']))
    backbone.eval()  # a backbone's train() may return None
    with torch.no_grad():
        out = backbone(torch.zeros((1, 3) + tuple(image_size)))[-1]
    return tuple(out.permute(0, 2, 3, 1).shape[1:])


def read_cache(path: str, count: int, shape: tuple) -> np.ndarray:
    """The cached maps in ``path``, checked: ``count`` maps of ``shape``,
    ``float16``, all finite.

    Raises:
        ValueError: one line naming the file, what is wrong and that
            deleting it makes it again.
    """

    def refuse(problem: str) -> None:
        raise ValueError(f'{path}: a feature cache that {problem}; delete it '
                         '(it is made again at the next run)')

    try:
        maps = np.load(path, allow_pickle=False)
    except (ValueError, EOFError, OSError) as error:
        refuse(f'cannot be read ({str(error).splitlines()[0]})')
    if not isinstance(maps, np.ndarray) or maps.dtype != np.float16:
        refuse(f'is not float16 maps (found {getattr(maps, "dtype", maps)})')
    if maps.shape != (count, ) + tuple(shape):
        refuse(f'holds maps of shape {maps.shape}, not {count} of '
               f'{tuple(shape)} (h, w, channels)')
    if not np.isfinite(maps).all():
        refuse('holds NaN or infinite values')
    return maps


def feature_cache_path(description: dict, features: dict) -> Optional[str]:
    """The cache file of the maps of the images ``description`` determines
    (:func:`cached_feature_maps`), from them, the backbone, the content of
    its checkpoint and the statistics; None without a ``cache_dir``."""
    if features['cache_dir'] is None:
        return None
    checkpoint = features['checkpoint']
    key = json.dumps(
        dict(
            images=description,
            backbone=features['backbone'],
            checkpoint=None if checkpoint is None else file_digest(checkpoint),
            mean=list(features['mean']),
            std=list(features['std'])),
        sort_keys=True,
        default=str)
    name = hashlib.sha256(key.encode()).hexdigest()[:24] + '.npy'
    return osp.join(features['cache_dir'], name)


def cached_feature_maps(description: dict,
                        make_images: Callable[[], np.ndarray], features: dict,
                        count: int, image_size: Tuple[int, int]) -> np.ndarray:
    """:func:`feature_maps` of ``make_images()`` (``count`` images of
    ``image_size``), read from ``features['cache_dir']`` when a file for
    the same ``description`` (what determines the images, with the digests
    of the files they are made of: a JSON-able dict), backbone, checkpoint
    content and statistics is there (checked, :func:`read_cache`), else
    computed and written there (atomically, so that concurrent runs never
    read half a file)."""
    path = feature_cache_path(description, features)
    cache_dir = features['cache_dir']
    if path is not None and osp.isfile(path):
        return read_cache(path, count, map_shape(features, image_size))
    maps = feature_maps(make_images(), features)
    if path is not None:
        os.makedirs(cache_dir, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=cache_dir, suffix='.npy.part')
        with os.fdopen(handle, 'wb') as file:
            np.save(file, maps)
        os.chmod(temporary, 0o644)  # mkstemp's files are private
        os.replace(temporary, path)
    return maps
