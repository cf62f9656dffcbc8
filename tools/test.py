"""Evaluate a checkpoint on a config's test set.

Same command line as MMPretrain's ``tools/test.py`` (without visualisation).
``mmlml`` is imported first, so checkpoints load under torch >= 2.6 and
``mmpretrain::`` base configs parse without ``pkg_resources``.
"""
import argparse
import json
import os
import os.path as osp
import sys

sys.path.insert(0, osp.dirname(osp.dirname(osp.abspath(__file__))))

from mmengine.config import Config, ConfigDict, DictAction  # noqa: E402
from mmengine.runner import Runner  # noqa: E402

import mmlml  # noqa: E402,F401  (registers modules, applies fixes)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description='Test a classifier')
    parser.add_argument('config', help='test config file path')
    parser.add_argument('checkpoint', help='checkpoint file')
    parser.add_argument('--work-dir', help='the dir to save logs and results')
    parser.add_argument(
        '--out',
        help='write the metrics (.json) or the predictions (.pkl, with '
        '--out-item pred) to this file')
    parser.add_argument(
        '--out-item',
        choices=['metrics', 'pred'],
        default='metrics',
        help='what --out holds')
    parser.add_argument(
        '--amp', action='store_true', help='test with mixed precision')
    parser.add_argument(
        '--cfg-options',
        nargs='+',
        action=DictAction,
        help='override config settings')
    parser.add_argument(
        '--launcher',
        choices=['none', 'pytorch', 'slurm', 'mpi'],
        default='none',
        help='job launcher')
    parser.add_argument('--local_rank', '--local-rank', type=int, default=0)
    args = parser.parse_args(argv)
    if 'LOCAL_RANK' not in os.environ:
        os.environ['LOCAL_RANK'] = str(args.local_rank)
    return args


def merge_args(cfg, args):
    cfg.launcher = args.launcher
    if args.work_dir is not None:
        cfg.work_dir = args.work_dir
    elif cfg.get('work_dir') is None:
        cfg.work_dir = osp.join('./work_dirs',
                                osp.splitext(osp.basename(args.config))[0])
    cfg.load_from = args.checkpoint
    if args.amp:
        cfg.test_cfg = dict(cfg.get('test_cfg') or {}, fp16=True)
    if args.out and args.out_item == 'pred':
        evaluators = cfg.test_evaluator
        if isinstance(evaluators, (dict, ConfigDict)):
            evaluators = [evaluators]
        cfg.test_evaluator = list(evaluators) + [
            dict(type='DumpResults', out_file_path=args.out)
        ]
    loader = cfg.test_dataloader
    if not loader.get('num_workers'):
        loader['persistent_workers'] = False
    if args.cfg_options is not None:
        cfg.merge_from_dict(args.cfg_options)
    return cfg


def main(argv=None):
    args = parse_args(argv)
    if args.out and args.out_item == 'metrics' and \
            not args.out.endswith('.json'):
        raise ValueError('--out with --out-item metrics must be a .json file')
    cfg = merge_args(Config.fromfile(args.config), args)
    if 'runner_type' in cfg:
        from mmengine.registry import RUNNERS
        runner = RUNNERS.build(cfg)
    else:
        runner = Runner.from_cfg(cfg)
    metrics = runner.test()
    if args.out and args.out_item == 'metrics' and runner.rank == 0:
        with open(args.out, 'w') as f:
            json.dump({k: float(v) for k, v in metrics.items()}, f, indent=2)
    return metrics


if __name__ == '__main__':
    main()
