"""Train configs on the embedded demo dataset and report their test metrics.

For each config: train (validating on the held-out clean split every
epoch), reload the checkpoint with the best validation mAP, evaluate it on
the fully labelled test split, and print mAP, CP, CR, CF1, OP, OR, OF1.
With several configs it ends with one table, so the whole demo benchmark is
one command::

    python tools/demo.py configs/demo/an.py configs/demo/full_labels.py \
        configs/demo/hill.py --out work_dirs/demo/summary.json

CF1 is reported twice: MMPretrain's ``MultiLabelMetric`` averages per-class
F1 scores ("CF1 (mean F1)"), while the multi-label papers define
``CF1 = 2 CP CR / (CP + CR)`` ("CF1 (paper)").
"""
import argparse
import json
import os.path as osp
import sys
import time

sys.path.insert(0, osp.dirname(osp.dirname(osp.abspath(__file__))))

from mmengine.config import Config, DictAction  # noqa: E402
from mmengine.runner import Runner  # noqa: E402

import mmlml  # noqa: E402,F401

COLUMNS = ('mAP', 'CP', 'CR', 'CF1 (mean F1)', 'CF1 (paper)', 'OP', 'OR',
           'OF1')


def summarise(metrics: dict) -> dict:
    """Pick the usual multi-label numbers out of the demo evaluators'
    keys (``AveragePrecision``, ``MultiLabelMetric`` and
    ``MultiLabelF1Metric``)."""
    keys = {
        'mAP': 'mAP',
        'CP': 'precision',
        'CR': 'recall',
        'CF1 (mean F1)': 'f1-score',
        'CF1 (paper)': 'CF1',
        'OP': 'precision_micro',
        'OR': 'recall_micro',
        'OF1': 'f1-score_micro',
    }
    return {name: metrics[f'multi-label/{key}'] for name, key in keys.items()}


def run(config: str, work_root: str, cfg_options=None) -> dict:
    """Train one config, test its best checkpoint, return the summary."""
    cfg = Config.fromfile(config)
    if cfg_options:
        cfg.merge_from_dict(cfg_options)
    name = osp.splitext(osp.basename(config))[0]
    cfg.work_dir = osp.join(work_root, name)
    start = time.time()
    runner = Runner.from_cfg(cfg)
    runner.train()
    best = runner.message_hub.get_info('best_ckpt')
    if best:
        runner.load_checkpoint(best)
    summary = summarise(runner.test())
    summary['best checkpoint'] = best or 'last epoch'
    summary['minutes'] = (time.time() - start) / 60
    return summary


def format_table(results: dict) -> str:
    header = f'{"config":<16}' + ''.join(f'{c:>15}' for c in COLUMNS)
    lines = [header, '-' * len(header)]
    for name, row in results.items():
        lines.append(f'{name:<16}' +
                     ''.join(f'{row[c]:>15.2f}' for c in COLUMNS))
    return '\n'.join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('configs', nargs='+', help='config files')
    parser.add_argument(
        '--work-dir',
        default='work_dirs/demo',
        help='one sub-folder per config is created here')
    parser.add_argument('--out', help='also write the results as JSON')
    parser.add_argument(
        '--cfg-options',
        nargs='+',
        action=DictAction,
        help='override settings of every config')
    args = parser.parse_args(argv)

    results = {}
    for config in args.configs:
        name = osp.splitext(osp.basename(config))[0]
        results[name] = run(config, args.work_dir, args.cfg_options)
        print(f'\n[{name}] test metrics (best val checkpoint, '
              f'{results[name]["minutes"]:.1f} min):')
        for key in COLUMNS:
            print(f'  {key:<14} {results[name][key]:6.2f}')
    if len(results) > 1:
        print('\n' + format_table(results))
    if args.out:
        with open(args.out, 'w') as f:
            json.dump(results, f, indent=2)
    return results


if __name__ == '__main__':
    main()
