"""The repairs of the MMPretrain 1.2 / MMEngine 0.10 stack on current
PyTorch and setuptools, without which it cannot run, applied once when
``mmlml`` is imported (:func:`apply_all`). Nothing else of MMPretrain or
MMEngine is changed: what changes behaviour is an opt-in registered
component of mmlml
(``PartialLabelAveragePrecision``, ``ScaledOneCycleLR``, the heads' check
of stock losses), used by mmlml's configs, and the check of the settings
that a Runner using such a component gets
(:func:`mmlml.hooks.training_setup_check_hook.add_setup_check_to_mmlml_runs`).

* :func:`patch_checkpoint_loading`: torch >= 2.6 loads checkpoints with
  ``weights_only=True`` by default, and MMEngine's checkpoints pickle a
  ``HistoryBuffer``, numpy arrays and more, so ``resume``, ``load_from`` and
  ``tools/test.py`` fail with ``Unsupported global``; torch.hub's URL
  loader, which MMEngine uses for ``https://`` and ``torchvision://``
  checkpoints, loads with ``weights_only=False`` (a downloaded file runs
  code). Every checkpoint source MMEngine knows is loaded with
  ``weights_only=True`` and the few globals MMEngine's own checkpoints hold
  allow-listed (:mod:`mmlml.compat.checkpoint_policy`). A file that pickles
  anything else is refused with ``UnpicklingError``, which names the
  globals and how to allow-list them for a trusted file.
* :func:`patch_package_lookup`: ``_base_ = 'mmpretrain::...'`` configs go
  through ``pkg_resources``, which setuptools 82 removed. Only where it is
  missing, MMEngine's package lookup is re-implemented with ``importlib``.
  Config parsing happens before ``custom_imports`` runs, so this repair
  takes effect for launchers that import mmlml first (``tools/train.py``
  and ``tools/test.py`` of this repository do).
* :func:`patch_cpu_distributed`: MMEngine calls ``torch.cuda.set_device``
  unconditionally in the PyTorch and Slurm launchers and wraps the model
  with ``device_ids=[LOCAL_RANK]``, so a CPU-only ``torchrun`` or ``srun``
  (``tools/slurm_train.sh`` on CPU nodes) fails. Without CUDA, the process
  group uses gloo (the Slurm launcher's rank, world size and address set
  from Slurm's variables as MMEngine sets them) and DDP gets no
  ``device_ids``, and the
  Runner's environment banner says so: the backend the process group uses
  (not the config's ``nccl``) and ``GPU number: 0``, with the number of
  processes as ``world size`` (MMEngine logs the world size as the GPU
  number). With CUDA all three run MMEngine's own code.
* :func:`patch_compiled_optimizer_step`: MMEngine's ``compile=True``
  compiles ``model.train_step``, optimizer step included; inductor cannot
  keep the learning rate symbolic in the optimizer's kernels, so it
  recompiles the step for every value a scheduler gives it (one per
  iteration) until dynamo's limit of 8 recompilations. The backward pass
  and the optimizer step (``OptimWrapper.update_params``) run eagerly
  inside the compiled step: the backward pass is a graph break anyway and
  still runs the compiled backward kernels. Eager training is unchanged.

* :func:`patch_config_text_formatting`: MMEngine formats the config's
  text with yapf each time it logs, dumps or checkpoints it (seconds each);
  each distinct text is formatted once per process, with the same result,
  or not at all where ``MMLML_CONFIG_TEXT=unformatted`` (the sweep's
  training runs).
* :func:`patch_atomic_checkpoints`: MMEngine writes a checkpoint straight
  to its name, so a full disk or a killed job leaves a truncated
  ``epoch_N.pth`` beside the good ones (and ``--resume`` picks it). A
  local checkpoint is written to ``<name>.tmp``, flushed to disk, then
  renamed to its name (``os.replace``, atomic): a file of that name is
  always whole. Other file backends (``s3://``...) are MMEngine's.
* :func:`patch_build_messages`: an unknown ``type`` or setting in a config
  fails with MMEngine's and Python's errors, which name neither what is
  registered nor the class that was built; the same errors, of the same
  types, name the closest registered names and the class's settings
  (:mod:`mmlml.compat.build_messages`). A build that succeeds is
  MMEngine's.

:func:`applied_fixes` tells which repairs this process applied;
``tools/train.py`` and ``TrainingSetupCheckHook`` write
:func:`applied_fixes_message` into the run's log. Each repair has a test
that fails once upstream no longer needs it
(``tests/test_runtime/test_compat.py``).
"""
import functools
import importlib
import importlib.metadata
import importlib.util
import os
import os.path as osp
from typing import Dict, Tuple

import torch

from . import build_messages
from .checkpoint_policy import checkpoint_safe_global_names
from .checkpoint_policy import install as _install_checkpoint_policy

__all__ = [
    'apply_all', 'applied_fixes', 'applied_fixes_message',
    'patch_checkpoint_loading', 'patch_package_lookup',
    'patch_cpu_distributed', 'patch_compiled_optimizer_step',
    'patch_config_text_formatting', 'patch_atomic_checkpoints',
    'patch_build_messages', 'write_atomically', 'readable_text',
    'is_installed', 'get_installed_path', 'slurm_environment',
    'cpu_runtime_env'
]

#: The fixes applied in this process, in order: name -> log description.
_APPLIED: Dict[str, str] = {}

# ----------------------------------------------------- checkpoint loading


def patch_checkpoint_loading() -> None:
    """Load checkpoints from every source MMEngine knows with
    ``weights_only=True`` and the allow-list of
    :mod:`mmlml.compat.checkpoint_policy`."""
    if 'checkpoint_loading' in _APPLIED:
        return
    if not _install_checkpoint_policy():
        return  # torch < 2.5: its stock loading is left as it is
    _APPLIED['checkpoint_loading'] = (
        f'safe checkpoint loading ({len(checkpoint_safe_global_names())} '
        'globals allow-listed)')


# --------------------------------------------------------- package lookup


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
    _APPLIED['package_lookup'] = 'importlib package lookup'


# -------------------------------------------------------- CPU distributed


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

    init_dist_slurm = dist_utils._init_dist_slurm

    def _init_dist_slurm(backend, port=None, init_backend='torch', **kwargs):
        if torch.cuda.is_available() or init_backend != 'torch':
            return init_dist_slurm(backend, port, init_backend, **kwargs)
        slurm_environment(port)
        torch_dist.init_process_group(
            backend='gloo' if backend == 'nccl' else backend, **kwargs)

    dist_utils._init_dist_pytorch = _init_dist_pytorch
    dist_utils._init_dist_slurm = _init_dist_slurm
    MMDistributedDataParallel.__init__ = __init__
    _patch_cpu_environment_log()
    _APPLIED['cpu_distributed'] = 'CPU torchrun'


def slurm_environment(port=None) -> None:
    """Set the variables of ``torch.distributed``'s ``env://`` start from
    those of a Slurm task (``SLURM_PROCID``, ``SLURM_NTASKS``,
    ``SLURM_LOCALID``, ``SLURM_NODELIST``): the rank, the world size, the
    local rank, and the first node of the job as the master address unless
    ``MASTER_ADDR`` is set; the port ``port``, else ``MASTER_PORT``, else
    29500."""
    import os
    import subprocess
    env = os.environ
    env['RANK'] = env['SLURM_PROCID']
    env['WORLD_SIZE'] = env['SLURM_NTASKS']
    env['LOCAL_RANK'] = env.get('SLURM_LOCALID', '0')
    if port is not None:
        env['MASTER_PORT'] = str(port)
    env.setdefault('MASTER_PORT', '29500')
    if 'MASTER_ADDR' not in env:
        nodes = env['SLURM_NODELIST']
        first = subprocess.run(['scontrol', 'show', 'hostnames', nodes],
                               capture_output=True,
                               text=True).stdout.split()
        env['MASTER_ADDR'] = first[0] if first else nodes


def cpu_runtime_env(env_cfg: dict, world_size: int) -> dict:
    """What the environment banner of a Runner on a machine without CUDA
    reports, from the Runner's ``env_cfg``: a copy whose
    ``dist_cfg.backend`` is the backend the process group uses (the
    initialised group's, or gloo for nccl, as the launcher picks it) and
    with ``world size``, the number of processes."""
    from torch import distributed as torch_dist
    env = dict(env_cfg)
    dist_cfg = dict(env.get('dist_cfg') or {})
    if torch_dist.is_available() and torch_dist.is_initialized():
        dist_cfg['backend'] = torch_dist.get_backend()
    elif dist_cfg.get('backend', 'nccl') == 'nccl':
        dist_cfg['backend'] = 'gloo'
    env['dist_cfg'] = dist_cfg
    env['world size'] = world_size
    return env


def _patch_cpu_environment_log() -> None:
    """Without CUDA, the Runner's banner logs :func:`cpu_runtime_env` and
    ``GPU number: 0`` (MMEngine writes its world size there)."""
    from mmengine.runner import Runner
    log_env = Runner._log_env

    def _log_env(self, env_cfg):
        if torch.cuda.is_available():
            return log_env(self, env_cfg)
        world_size = self._world_size
        self._world_size = 0  # read only for the banner's "GPU number"
        try:
            return log_env(self, cpu_runtime_env(env_cfg, world_size))
        finally:
            self._world_size = world_size

    Runner._log_env = _log_env


# ------------------------------------------------- compiled training step


def patch_compiled_optimizer_step() -> None:
    """Keep ``OptimWrapper.update_params`` (backward pass, optimizer step,
    gradient reset) out of ``torch.compile``'s graphs."""
    if 'compiled_optimizer_step' in _APPLIED:
        return
    from mmengine.optim import OptimWrapper
    OptimWrapper.update_params = torch.compiler.disable(
        OptimWrapper.update_params)
    _APPLIED['compiled_optimizer_step'] = 'eager optimizer step in compile'


# --------------------------------------------------------- config text

#: The environment variable that turns the config text's formatting off
#: (``unformatted``): :func:`patch_config_text_formatting`.
CONFIG_TEXT_VARIABLE = 'MMLML_CONFIG_TEXT'


def patch_config_text_formatting() -> None:
    """Format each distinct config text with yapf once per process.

    MMEngine's ``Config.pretty_text`` formats the whole config with yapf
    every time it is asked: when the Runner logs and dumps the config and
    at every checkpoint it saves (the ``meta`` holds the text), about ten
    times in a short run. For a config with nested datasets that costs
    about 5 s of a CPU core each time, more than the training of a linear
    head on cached features. ``FormatCode`` is a pure function of the text
    and the style, so its results are kept (the last 16 texts); the text
    MMEngine writes is unchanged.

    Where the environment has ``MMLML_CONFIG_TEXT=unformatted``
    (:data:`CONFIG_TEXT_VARIABLE`) the text is not formatted at all: it is
    MMEngine's text before yapf, the same Python with longer lines. The
    benchmark sweep sets it for its training runs (a second or more of a
    ten-second linear run, and nobody reads those folders' configs).
    """
    if 'config_text_formatting' in _APPLIED:
        return
    import mmengine.config.config as config_module
    format_code = config_module.FormatCode

    @functools.lru_cache(maxsize=16)
    def _format(text: str, style: Tuple[Tuple[str, object], ...], **kwargs):
        return format_code(text, style_config=dict(style), **kwargs)

    @functools.wraps(format_code)
    def format_once(text, style_config=None, **kwargs):
        if os.environ.get(CONFIG_TEXT_VARIABLE) == 'unformatted' \
                and not _READABLE:
            return text, False
        if not isinstance(style_config, dict):
            return format_code(text, style_config=style_config, **kwargs)
        return _format(text, tuple(sorted(style_config.items())), **kwargs)

    config_module.FormatCode = format_once
    _APPLIED['config_text_formatting'] = 'config text formatted once'


#: Set while :func:`readable_text` asks for the formatted text.
_READABLE: list = []


def readable_text(cfg) -> str:
    """``cfg.pretty_text`` formatted whatever ``MMLML_CONFIG_TEXT`` says:
    the text of a config file that a person reads (a child config a tool
    writes), never the unformatted one of the switch."""
    _READABLE.append(True)
    try:
        return cfg.pretty_text
    finally:
        _READABLE.pop()


# --------------------------------------------------- atomic checkpoints


def write_atomically(filename: str, write) -> None:
    """Call ``write(file)`` on ``<filename>.tmp`` (a binary file), flush
    it to disk, then rename it to ``filename``: a reader of ``filename``
    sees the old file or the whole new one, never part of it. On any
    failure (``OSError`` of a full disk, an interrupt) the temporary file
    is removed and the error raised; ``filename`` is untouched."""
    directory = osp.dirname(osp.abspath(filename))
    os.makedirs(directory, exist_ok=True)
    temporary = f'{filename}.tmp'
    try:
        with open(temporary, 'wb') as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, filename)
    except BaseException:
        if osp.exists(temporary):
            os.remove(temporary)
        raise


def patch_atomic_checkpoints() -> None:
    """Write local checkpoints with :func:`write_atomically`, wherever
    MMEngine saves them (``Runner.save_checkpoint``, ``CheckpointHook``)."""
    if 'atomic_checkpoints' in _APPLIED:
        return
    import mmengine.runner as runner_package  # CheckpointHook's import
    import mmengine.runner.checkpoint as checkpoint_module
    import mmengine.runner.runner as runner_module
    save_checkpoint = checkpoint_module.save_checkpoint

    @functools.wraps(save_checkpoint)
    def save_atomically(checkpoint,
                        filename,
                        file_client_args=None,
                        backend_args=None):
        if (file_client_args is not None or backend_args is not None
                or '://' in str(filename)):
            return save_checkpoint(checkpoint, filename, file_client_args,
                                   backend_args)
        write_atomically(str(filename), lambda f: torch.save(checkpoint, f))

    for module in (checkpoint_module, runner_module, runner_package):
        module.save_checkpoint = save_atomically
    _APPLIED['atomic_checkpoints'] = 'checkpoints written atomically'


# ------------------------------------------------------- build messages


def patch_build_messages() -> None:
    """Name the closest registered types and the built class's settings
    in the errors of a failed registry build
    (:mod:`mmlml.compat.build_messages`)."""
    if 'build_messages' in _APPLIED:
        return
    build_messages.install()
    _APPLIED['build_messages'] = 'registry errors name the closest names'


# ---------------------------------------------------------------- logging


def applied_fixes() -> Tuple[str, ...]:
    """The names of the repairs applied in this process, in order:
    ``'checkpoint_loading'``, ``'package_lookup'`` (only where
    ``pkg_resources`` is missing), ``'cpu_distributed'``,
    ``'compiled_optimizer_step'``, ``'config_text_formatting'``,
    ``'atomic_checkpoints'`` and ``'build_messages'``."""
    return tuple(_APPLIED)


def applied_fixes_message() -> str:
    """The log line that lists the applied repairs."""
    if not _APPLIED:
        return 'mmlml compatibility fixes applied: none'
    return ('mmlml compatibility fixes applied: ' +
            ', '.join(_APPLIED.values()))


def apply_all() -> None:
    """Apply every repair (idempotent)."""
    patch_checkpoint_loading()
    patch_package_lookup()
    patch_cpu_distributed()
    patch_compiled_optimizer_step()
    patch_config_text_formatting()
    patch_atomic_checkpoints()
    patch_build_messages()
