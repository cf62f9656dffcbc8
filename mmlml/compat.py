"""Fixes for known breakages of the MMPretrain 1.2 / MMEngine 0.10 stack on
current PyTorch and setuptools, applied when ``mmlml`` is imported.

Each fix is small, idempotent, and only changes behaviour where the stock
code would fail:

* :func:`patch_checkpoint_loading`: torch >= 2.6 loads checkpoints with
  ``weights_only=True`` by default, and MMEngine's checkpoints pickle a
  ``HistoryBuffer``, numpy arrays and more, so ``resume``, ``load_from`` and
  ``tools/test.py`` fail with ``Unsupported global``. Local checkpoint files
  are loaded with ``weights_only=False`` again, as MMEngine expects. Only load
  checkpoints you trust (as with any pickle).
* :func:`patch_package_lookup`: ``_base_ = 'mmpretrain::...'`` configs go
  through ``pkg_resources``, which setuptools 82 removed. Where it is missing,
  MMEngine's package lookup is re-implemented with ``importlib``. Config
  parsing happens before ``custom_imports`` runs, so this fix takes effect
  for launchers that import mmlml first (``tools/train.py`` and
  ``tools/test.py`` of this repository do).
* :func:`patch_cpu_distributed`: MMEngine calls ``torch.cuda.set_device``
  unconditionally in the PyTorch launcher and wraps the model with
  ``device_ids=[LOCAL_RANK]``, so a CPU-only ``torchrun`` fails. Without CUDA,
  the process group uses gloo and DDP gets no ``device_ids``. GPU machines
  are unaffected.
"""
import importlib.metadata
import importlib.util
import os.path as osp

import torch

_APPLIED = set()


def patch_checkpoint_loading() -> None:
    """Load local checkpoints with ``weights_only=False`` (MMEngine's
    behaviour before torch 2.6)."""
    if 'checkpoint' in _APPLIED:
        return
    from mmengine.runner.checkpoint import CheckpointLoader

    def load_from_local(filename, map_location):
        filename = osp.expanduser(filename)
        if not osp.isfile(filename):
            raise FileNotFoundError(f'{filename} can not be found.')
        return torch.load(
            filename, map_location=map_location, weights_only=False)

    CheckpointLoader.register_scheme(
        prefixes='', loader=load_from_local, force=True)
    _APPLIED.add('checkpoint')


def _module_of(package: str) -> str:
    """The top-level module a distribution installs (``mmcv-lite`` ->
    ``mmcv``), or ``package`` itself."""
    try:
        top_level = importlib.metadata.distribution(package).read_text(
            'top_level.txt')
    except importlib.metadata.PackageNotFoundError:
        top_level = None
    if top_level and top_level.split():
        return top_level.split()[0]
    return package.replace('-', '_')


def is_installed(package: str) -> bool:
    """Whether ``package`` (a distribution or module name) is importable."""
    return importlib.util.find_spec(_module_of(package)) is not None


def get_installed_path(package: str) -> str:
    """The directory of the installed ``package``."""
    spec = importlib.util.find_spec(_module_of(package))
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError(f'package {package!r} is not installed')
    return osp.dirname(spec.origin)


def patch_package_lookup(force: bool = False) -> None:
    """Give MMEngine an ``importlib``-based package lookup when
    ``pkg_resources`` is missing (setuptools >= 82), or always with
    ``force=True``."""
    if 'package_lookup' in _APPLIED:
        return
    if not force and importlib.util.find_spec('pkg_resources') is not None:
        return
    import mmengine.config.config as config_module
    import mmengine.hub.hub as hub_module
    import mmengine.utils as utils_module
    import mmengine.utils.package_utils as package_utils
    for module in (package_utils, utils_module, config_module, hub_module):
        if hasattr(module, 'is_installed'):
            module.is_installed = is_installed
        if hasattr(module, 'get_installed_path'):
            module.get_installed_path = get_installed_path
    _APPLIED.add('package_lookup')


def patch_cpu_distributed() -> None:
    """Let ``torchrun`` + the ``pytorch`` launcher work without CUDA."""
    if 'cpu_distributed' in _APPLIED:
        return
    import mmengine.dist.utils as dist_utils
    from mmengine.model.wrappers.distributed import MMDistributedDataParallel
    from torch import distributed as torch_dist

    init_dist_pytorch = dist_utils._init_dist_pytorch

    def _init_dist_pytorch(backend, init_backend='torch', **kwargs):
        if torch.cuda.is_available() or init_backend != 'torch':
            return init_dist_pytorch(backend, init_backend, **kwargs)
        if backend == 'nccl':
            backend = 'gloo'
        torch_dist.init_process_group(backend=backend, **kwargs)

    ddp_init = MMDistributedDataParallel.__init__

    def __init__(self, module, *args, **kwargs):
        on_cpu = all(not p.is_cuda for p in module.parameters())
        if on_cpu and not torch.cuda.is_available():
            kwargs.pop('device_ids', None)
            kwargs.pop('output_device', None)
        ddp_init(self, module, *args, **kwargs)

    dist_utils._init_dist_pytorch = _init_dist_pytorch
    MMDistributedDataParallel.__init__ = __init__
    _APPLIED.add('cpu_distributed')


def apply_all() -> None:
    """Apply every fix (idempotent)."""
    patch_checkpoint_loading()
    patch_package_lookup()
    patch_cpu_distributed()
