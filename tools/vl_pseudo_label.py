"""Score the training images of a config with a pseudo-labeller, once, for
``VLPseudoLabelHook(scores_file=...)`` in as many training runs as wanted.

::

    python tools/vl_pseudo_label.py CONFIG --out scores.npy \\
        [--labeller LABELLER_CONFIG] [--labeller-options k=v ...] \\
        [--split train|all] [--pipeline val|test] [--batch-size B] \\
        [--num-workers W] [--chunk-size S] [--device cpu] [--force]
    torchrun --nproc_per_node 8 tools/vl_pseudo_label.py CONFIG \\
        --out scores.npy --launcher pytorch

The labeller is the ``labeller`` dict of ``--labeller`` (a config file that
defines one, e.g. ``labeller = dict(type='CLIPPseudoLabeller', ...)``), or
else that of the ``VLPseudoLabelHook`` in CONFIG's ``custom_hooks``;
``--labeller-options`` overrides its keys (and can give all of them). The
images are those of the :class:`~mmlml.datasets.PartialLabelDataset` of
CONFIG's ``train_dataloader.dataset``: its training rows (``--split
train``, the default) or all the rows of the dataset it wraps (``--split
all``: one file for every split of the same images). They go through the
labeller's own pipeline, else the pipeline of CONFIG's ``val_dataloader``
(``--pipeline test`` for ``test_dataloader``'s): no random augmentation.
The scoring is :func:`mmlml.pseudo_labellers.score_dataset`, the hook's.

The output is an ``(N, C)`` float32 ``.npy``: one row per sample of the
dataset that the training ``PartialLabelDataset`` wraps, in its order (the
hook's ``scores_file``), NaN in the rows not scored.

Under ``torchrun`` (``--launcher pytorch``) every process scores its share
of the images and rank 0 writes the file. The run is resumable: each chunk
of ``--chunk-size`` images is saved in ``<out>.parts/`` once scored, and a
run started again with the same arguments scores only the chunks that are
missing (a folder made with another labeller, pipeline or chunk size is
refused: delete it). The folder is removed once the file is written. A
``<out>.parts`` that mmlml did not make (without its ``.mmlml-owned``
marker file) is refused and left as it is.

``--out`` is never a file that CONFIG reads (its label files, annotation
files, checkpoints...), even with ``--force``; the ``scores_file`` (or
``cache_file``) of CONFIG's ``VLPseudoLabelHook`` is what the tool makes
and may be replaced with ``--force``. Rank 0
prints a progress line on stderr.
"""
import json

import numpy as np
import torch
from mmengine.config import Config, ConfigDict, DictAction
from mmengine.dataset import Compose
from mmengine.dist import get_rank, init_dist
from mmengine.registry import init_default_scope

import mmlml  # noqa: F401  (registers modules, applies fixes)
from mmlml import pseudo_labellers
from mmlml.cli import (add_launcher_arguments, add_scoring_arguments,
                       check_config_output, check_scoring_arguments,
                       end_distributed, load_config, tool_parser)
from mmlml.datasets import PartialLabelDataset, find_partial_label_dataset
from mmlml.hooks.vl_pseudo_label_hook import scoring_pipeline
from mmlml.registry import DATASETS, MODELS

TOOL = 'vl_pseudo_label.py'


def parse_args(argv=None):
    parser = tool_parser(__doc__)
    parser.add_argument(
        'config', help='the training config whose training images are scored')
    parser.add_argument(
        '--out',
        required=True,
        help='the .npy file to write: (N, C) float32 scores, one row per '
        'sample of the wrapped dataset')
    parser.add_argument(
        '--labeller',
        help='a config file that defines `labeller = dict(type=...)` '
        "(default: the labeller of the config's VLPseudoLabelHook)")
    parser.add_argument(
        '--labeller-options',
        nargs='+',
        action=DictAction,
        help='override (or give) keys of the labeller, e.g. '
        'type=ModelPseudoLabeller config=C checkpoint=W')
    parser.add_argument(
        '--split',
        choices=['train', 'all'],
        default='train',
        help="the rows to score: the training set's (default; the others "
        'stay NaN) or all the rows of the wrapped dataset')
    add_scoring_arguments(
        parser, 'val', 'the dataloader whose pipeline transforms the images '
        'when the labeller has no pipeline of its own (default: val)')
    parser.add_argument(
        '--chunk-size',
        type=int,
        help='images per chunk, the unit of work of a process and of '
        'resuming (default: 16 batches)')
    add_launcher_arguments(
        parser, 'the job launcher: pytorch under torchrun (default: none, '
        'one process)')
    args = parser.parse_args(argv)
    check_scoring_arguments(parser, args, (args.config, args.labeller), '.npy')
    if args.chunk_size is not None and args.chunk_size < 1:
        parser.error(f'--chunk-size must be positive, got {args.chunk_size}')
    return args


def hook_score_files(cfg) -> list:
    """The ``scores_file`` and ``cache_file`` of the config's
    ``VLPseudoLabelHook``: the files this tool is meant to write."""
    return [
        hook[key] for hook in cfg.get('custom_hooks', None) or []
        if hook.get('type') == 'VLPseudoLabelHook'
        for key in ('scores_file', 'cache_file') if hook.get(key)
    ]


def find_labeller(cfg, labeller_file=None, options=None) -> ConfigDict:
    """The labeller config: ``labeller`` of ``labeller_file``, else that of
    the config's ``VLPseudoLabelHook``, with ``options`` merged in."""
    labeller = None
    if labeller_file is not None:
        labeller = Config.fromfile(labeller_file).get('labeller')
        if labeller is None:
            raise ValueError(f'{labeller_file} defines no `labeller`')
    else:
        for hook in cfg.get('custom_hooks', None) or []:
            if hook.get('type') == 'VLPseudoLabelHook' and hook.get(
                    'labeller') is not None:
                labeller = hook['labeller']
    labeller = ConfigDict(labeller or {})
    if options:
        merged = Config(dict(labeller=labeller))
        merged.merge_from_dict({
            f'labeller.{k}': v
            for k, v in options.items()
        })
        labeller = merged.labeller
    if labeller.get('type') is None:
        raise ValueError(
            f'{TOOL}: no labeller: give --labeller, --labeller-options '
            'type=... or a VLPseudoLabelHook with a labeller in the config')
    return labeller


def build_rows(cfg, split: str = 'train') -> PartialLabelDataset:
    """The partial-label wrapper of the rows to score: the config's training
    set, or all the rows of the dataset it wraps."""
    train = find_partial_label_dataset(
        DATASETS.build(cfg.train_dataloader.dataset), requester=TOOL)
    if split == 'train':
        return train
    return train.over_split(None)


def main(argv=None):
    args = parse_args(argv)
    cfg = load_config(args.config, args.cfg_options)
    # Never over a file the config reads, but for the scores (and cache)
    # file of its VLPseudoLabelHook: that is what this tool makes.
    check_config_output(args.out, cfg, exclude=hook_score_files(cfg))
    # Nor over a file the labeller reads (its text embeddings, checkpoint).
    check_config_output(
        args.out, dict(args.labeller_options or {}), option='--out')
    init_default_scope(cfg.get('default_scope', 'mmpretrain'))
    if args.launcher != 'none':
        init_dist(args.launcher)
    device = args.device or ('cuda' if torch.cuda.is_available() else 'cpu')

    labeller_cfg = find_labeller(cfg, args.labeller, args.labeller_options)
    rows = build_rows(cfg, args.split)
    labeller = MODELS.build(labeller_cfg.copy())
    if labeller.num_classes != rows.num_classes:
        raise ValueError(f'{TOOL}: the labeller scores '
                         f'{labeller.num_classes} classes, the dataset has '
                         f'{rows.num_classes}')
    pipeline, source = scoring_pipeline(labeller, cfg, source=args.pipeline)
    rows.pipeline = Compose(pipeline)
    loader = cfg.get(f'{args.pipeline}_dataloader') or {}
    batch_size = args.batch_size or loader.get('batch_size', 32)
    num_workers = args.num_workers if args.num_workers is not None \
        else loader.get('num_workers', 0)
    parts = pseudo_labellers.parts_dir_of(args.out)
    fingerprint = json.dumps(
        dict(
            labeller=str(labeller_cfg.to_dict()),
            pipeline=str(pipeline),
            split=args.split),
        sort_keys=True)
    scores = pseudo_labellers.score_dataset(
        labeller,
        rows,
        batch_size=batch_size,
        num_workers=num_workers,
        chunk_size=args.chunk_size,
        parts_dir=parts,
        fingerprint=fingerprint,
        device=device,
        task=f'{TOOL}: scoring')

    full = np.full((len(rows.dataset), rows.num_classes),
                   np.nan,
                   dtype=np.float32)
    full[rows.indices] = scores
    if get_rank() == 0:
        pseudo_labellers.save_scores(args.out, full)
        pseudo_labellers.remove_parts(parts)
        positives = scores >= 0.3
        print(f'Scores of {len(rows)} of the {len(full)} images '
              f'({args.split} rows; pipeline of {source}) written to '
              f'{args.out}: {full.shape[0]} x {full.shape[1]}, float32, NaN '
              'in the rows not scored. Scores >= 0.3: '
              f'{positives.sum() / max(len(rows), 1):.2f} per image.')
    end_distributed()
    return full


if __name__ == '__main__':
    main()
