"""Choose each class's decision threshold on the validation split and store
the thresholds beside the checkpoint.

    python tools/choose_thresholds.py CONFIG CHECKPOINT [--shrinkage 10] \\
        [--batch-size B] [--num-workers W] [--device cpu] \\
        [--cfg-options k=v ...] [--force]

The model of ``CONFIG`` with the weights of ``CHECKPOINT`` scores every
sample of the config's validation split (``val_dataloader.dataset``,
through its own pipeline). Only the split's *known* labels count: observed
positives and observed negatives; an unknown label is never read, even
where the config's validation metrics count unknown labels as negatives
(``val_unknown='negative'``). The global threshold maximises OF1 over all
known labels; each class's own threshold maximises its F1 and is shrunk
toward the global one by its number of known positives ``n_c``::

    t_c = (n_c * t_c_best + k * t_global) / (n_c + k)      (k: --shrinkage)

(:mod:`mmlml.evaluation.class_thresholds`). The thresholds are written to
``X.thresholds.json`` beside the checkpoint ``X.pth``, where
``tools/test.py``, ``tools/infer.py`` and ``tools/export.py`` find them
(``--thr`` overrides them there). The tool prints each class's known
positives and negatives, its own and its final threshold, and CF1/OF1 on
the validation split at 0.5, at the global threshold and at the per-class
thresholds; a ``model_card.md`` beside the checkpoint gets the same
section.
"""
import os.path as osp
import sys

import torch
from mmengine.registry import init_default_scope

import mmlml  # noqa: F401  (registers modules, applies fixes)
from mmlml.apis import build_model, predict_scores
from mmlml.cli import (add_cfg_options_argument, add_force_argument,
                       add_model_arguments, load_config, tool_parser)
from mmlml.datasets import known_targets
from mmlml.evaluation import class_thresholds as ct
from mmlml.registry import DATASETS
from mmlml.utils.model_card import update_model_card

TOOL = osp.basename(__file__)


def parse_args(argv=None):
    parser = tool_parser(__doc__)
    add_model_arguments(parser)
    parser.add_argument(
        '--shrinkage',
        type=float,
        default=ct.DEFAULT_SHRINKAGE,
        help='k: the known positives at which a class threshold lies '
        'halfway between its own best and the global one (default: '
        f'{ct.DEFAULT_SHRINKAGE:g}; 0 keeps each class\'s own)')
    parser.add_argument(
        '--batch-size',
        type=int,
        help='default: the batch size of the validation dataloader')
    parser.add_argument(
        '--num-workers',
        type=int,
        help='default: the workers of the validation dataloader')
    parser.add_argument(
        '--device', help='default: cuda if available, else cpu')
    add_cfg_options_argument(parser)
    add_force_argument(parser)
    args = parser.parse_args(argv)
    if not args.shrinkage >= 0:
        parser.error(f'--shrinkage must be >= 0, got {args.shrinkage}')
    if args.batch_size is not None and args.batch_size < 1:
        parser.error(f'--batch-size must be positive, got {args.batch_size}')
    if args.num_workers is not None and args.num_workers < 0:
        parser.error('--num-workers must not be negative, got '
                     f'{args.num_workers}')
    if not osp.isfile(args.checkpoint):
        parser.error(f'the checkpoint {args.checkpoint} is not a local file '
                     '(the thresholds are written beside it)')
    path = ct.thresholds_path(args.checkpoint)
    if osp.exists(path) and not args.force:
        parser.error(f'the thresholds file {path} exists already: pass '
                     '--force to replace it')
    return args


def format_thresholds(thresholds: ct.ClassThresholds, metrics: dict) -> str:
    """The per-class table and the three CF1/OF1 lines, as markdown (the
    tool prints it, the model card holds it)."""
    lines = [
        f'Global threshold (best OF1 on the known labels): '
        f'{thresholds.global_threshold:.4f}; shrinkage k = '
        f'{thresholds.shrinkage:g}.', '',
        '| class | known positives | known negatives | own best | '
        'threshold |', '|---|---:|---:|---:|---:|'
    ]
    for c, name in enumerate(thresholds.classes):
        own = thresholds.best_thresholds[c]
        lines.append(f'| {name} | {thresholds.known_positives[c]} | '
                     f'{thresholds.known_negatives[c]} | '
                     f'{"-" if own is None else f"{own:.4f}"} | '
                     f'{thresholds.thresholds[c]:.4f} |')
    lines += [
        '', '| threshold | CF1 | OF1 |', '|---|---:|---:|',
        *(f'| {label} | {metrics[key]["CF1"]:.2f} | '
          f'{metrics[key]["OF1"]:.2f} |'
          for key, label in (('0.5', '0.5'), ('global', 'global'),
                             ('class', 'per-class')))
    ]
    return '\n'.join(lines)


def main(argv=None) -> ct.ClassThresholds:
    args = parse_args(argv)
    cfg = load_config(args.config, args.cfg_options)
    init_default_scope(cfg.get('default_scope', 'mmpretrain'))
    loader = cfg.get('val_dataloader')
    if not loader or loader.get('dataset') is None:
        raise ValueError(f'{args.config} has no val_dataloader.dataset to '
                         'choose the thresholds on.')
    device = args.device or ('cuda' if torch.cuda.is_available() else 'cpu')
    dataset = DATASETS.build(loader.dataset)
    model, _ = build_model(cfg, args.checkpoint, device)
    scores = predict_scores(
        model, dataset, args.batch_size or loader.get('batch_size', 32),
        args.num_workers if args.num_workers is not None else loader.get(
            'num_workers', 0))
    target = known_targets(dataset)
    classes = [str(name) for name in dataset.metainfo['classes']]
    thresholds = ct.choose_thresholds(
        scores,
        target,
        classes,
        shrinkage=args.shrinkage,
        source=dict(
            config=osp.abspath(args.config),
            checkpoint=osp.abspath(args.checkpoint),
            split='val_dataloader.dataset',
            samples=str(len(dataset))))
    metrics = ct.threshold_metrics(scores, target, thresholds)
    path = ct.save_thresholds(thresholds, args.checkpoint)
    report = format_thresholds(thresholds, metrics)
    print(f'Thresholds chosen on {len(dataset)} validation samples '
          f'({int((target >= 0).sum())} known labels, '
          f'{int((target < 0).sum())} unknown and ignored):\n{report}\n'
          f'Written to {path}.')
    card = update_model_card(
        osp.dirname(osp.abspath(args.checkpoint)), 'Thresholds',
        f'Chosen on the validation split by `tools/choose_thresholds.py` '
        f'for `{osp.basename(args.checkpoint)}` '
        f'(`{osp.basename(path)}`); validation CF1/OF1:\n\n{report}')
    if card:
        print(f'Model card updated: {card}')
    return thresholds


if __name__ == '__main__':
    try:
        main()
    except (FileExistsError, FileNotFoundError, ValueError) as error:
        sys.exit(f'{TOOL}: error: {error}')
