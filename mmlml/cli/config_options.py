"""How a tool's command line changes the config it reads:
``--cfg-options``, the work directory, and the data loaders' worker
processes capped to the cores this process may use; and the config a tool
reads, with its annotation files checked before any dataset is built."""
import argparse
import os
import os.path as osp
from typing import Optional

from mmengine.config import DictAction

__all__ = [
    'add_cfg_options_argument', 'load_config', 'set_work_dir', 'usable_cores',
    'cap_dataloader_workers'
]


def add_cfg_options_argument(parser: argparse.ArgumentParser,
                             help: str = 'override config settings',
                             default: Optional[dict] = None) -> None:
    """Add ``--cfg-options KEY=VALUE ...`` (MMEngine's ``DictAction``:
    dotted keys, values parsed as Python literals, lists as ``[a,b]``);
    ``help`` says what the settings override in this tool."""
    parser.add_argument(
        '--cfg-options',
        nargs='+',
        action=DictAction,
        default=default,
        help=help)


def load_config(path: str, cfg_options: Optional[dict] = None):
    """The config at ``path`` with ``cfg_options`` (``--cfg-options``)
    merged, and the annotation files of its data loaders' datasets checked
    (:func:`mmlml.datasets.checks.check_config_annotation_files`): a
    pickle, or a stock dataset's YAML, is refused before anything builds
    a dataset, which would load it with ``mmengine.load`` and run the code
    it names. Every tool that builds a dataset of a config reads it so.

    Raises:
        ValueError: One line naming the annotation file and the format to
            convert it to.
    """
    from mmengine.config import Config

    from mmlml.datasets.checks import check_config_annotation_files
    cfg = Config.fromfile(path)
    if cfg_options:
        cfg.merge_from_dict(cfg_options)
    check_config_annotation_files(cfg)
    return cfg


def set_work_dir(cfg, work_dir: Optional[str], config_path: str) -> None:
    """Set ``cfg.work_dir``: ``work_dir`` (``--work-dir``) if given, else
    the config's own, else ``./work_dirs/<config name>`` (MMPretrain's
    rule)."""
    if work_dir is not None:
        cfg.work_dir = work_dir
    elif cfg.get('work_dir') is None:
        cfg.work_dir = osp.join('./work_dirs',
                                osp.splitext(osp.basename(config_path))[0])


def usable_cores() -> int:
    """The CPU cores this process may run on (its affinity mask, which a
    container or ``taskset`` narrows; ``os.cpu_count()`` where the platform
    has no affinity)."""
    if hasattr(os, 'sched_getaffinity'):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def cap_dataloader_workers(cfg, cores: Optional[int] = None) -> list:
    """Cap ``num_workers`` of the config's train, val and test data loaders
    to ``cores`` (default :func:`usable_cores`): a paper config's 4 or 8
    workers on a 2-core machine only compete for the cores (and PyTorch
    warns about it). Returns one line per loader capped."""
    cores = usable_cores() if cores is None else cores
    notes = []
    for name in ('train_dataloader', 'val_dataloader', 'test_dataloader'):
        loader = cfg.get(name)
        workers = loader.get('num_workers') if loader else None
        if workers and workers > cores:
            loader['num_workers'] = cores
            notes.append(f'{name}.num_workers: {workers} -> {cores} (the '
                         f'cores this process may use)')
    return notes
