"""Train each config given, in turn, in this process: one rank of
``torch.distributed.run`` (``--launcher pytorch`` for every config), so
that a test of several methods in two processes starts the processes and
imports torch, MMEngine and MMPretrain once (``tools/train.py`` trains one
config a launch)."""
import os.path as osp
import sys

from mmengine.config import Config
from mmengine.runner import Runner

import mmlml  # noqa: F401

for path in sys.argv[1:]:
    cfg = Config.fromfile(path)
    cfg.launcher = 'pytorch'
    # Runners of one process share MMEngine's named instances (logger,
    # message hub): one name a config.
    cfg.experiment_name = osp.splitext(osp.basename(path))[0]
    Runner.from_cfg(cfg).train()
