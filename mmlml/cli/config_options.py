"""How a tool's command line changes the config it reads:
``--cfg-options`` and the work directory."""
import argparse
import os.path as osp
from typing import Optional

from mmengine.config import DictAction

__all__ = ['add_cfg_options_argument', 'set_work_dir']


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


def set_work_dir(cfg, work_dir: Optional[str], config_path: str) -> None:
    """Set ``cfg.work_dir``: ``work_dir`` (``--work-dir``) if given, else
    the config's own, else ``./work_dirs/<config name>`` (MMPretrain's
    rule)."""
    if work_dir is not None:
        cfg.work_dir = work_dir
    elif cfg.get('work_dir') is None:
        cfg.work_dir = osp.join('./work_dirs',
                                osp.splitext(osp.basename(config_path))[0])
