"""Score the training images of a config with a pseudo-labeller, once, for
``VLPseudoLabelHook(scores_file=...)`` in as many training runs as wanted.

The command line of ``tools/vl_pseudo_label.py``, also run as
``python -m mmlml.apis.vl_pseudo_label`` (the same arguments, without the
checkout's ``tools/``)::

    python tools/vl_pseudo_label.py CONFIG --out scores.npy \\
        [--labeller LABELLER_CONFIG] [--labeller-options k=v ...] \\
        [--split train|all] [--pipeline val|test] [--batch-size B] \\
        [--num-workers W] [--chunk-size S] [--device cpu] [--force]
    python -m mmlml.apis.vl_pseudo_label CONFIG --out scores.npy ...
    torchrun --nproc_per_node 8 tools/vl_pseudo_label.py CONFIG \\
        --out scores.npy --launcher pytorch
    torchrun --nproc_per_node 8 -m mmlml.apis.vl_pseudo_label CONFIG \\
        --out scores.npy --launcher pytorch

or :func:`score_training_images` in a Python process. The labeller is the
``labeller`` dict of ``--labeller`` (a config file that defines one, e.g.
``labeller = dict(type='CLIPPseudoLabeller', ...)``), or else that of the
``VLPseudoLabelHook`` in CONFIG's ``custom_hooks``; ``--labeller-options``
overrides its keys (and can give all of them). The images are those of the
:class:`~mmlml.datasets.PartialLabelDataset` of CONFIG's
``train_dataloader.dataset``: its training rows (``--split train``, the
default) or all the rows of the dataset it wraps (``--split all``: one file
for every split of the same images). They go through the labeller's own
pipeline, else the pipeline of CONFIG's ``val_dataloader`` (``--pipeline
test`` for ``test_dataloader``'s): no random augmentation. The scoring is
:func:`mmlml.pseudo_labellers.score_dataset`, the hook's.

The output is an ``(N, C)`` float32 ``.npy``: one row per sample of the
dataset that the training ``PartialLabelDataset`` wraps, in its order (the
hook's ``scores_file``), NaN in the rows not scored. The summary line
counts the scores >= 0.3 per scored image.

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

This module imports the command line (:mod:`mmlml.cli`), the
pseudo-labellers and the hooks: :mod:`mmlml.apis` does not import it.
"""
import argparse
import json
import sys
from typing import Any, Dict, List, NamedTuple, Optional

import numpy as np
import torch
from mmengine.config import Config, ConfigDict, DictAction
from mmengine.dataset import Compose
from mmengine.dist import get_rank, init_dist
from mmengine.registry import init_default_scope

import mmlml  # noqa: F401  (registers modules, applies fixes)
from mmlml import pseudo_labellers
from mmlml.cli import (LAUNCHERS, add_launcher_arguments,
                       add_scoring_arguments, check_config_output,
                       check_output, check_scoring_arguments, end_distributed,
                       load_config, tool_parser)
from mmlml.datasets import PartialLabelDataset, find_partial_label_dataset
from mmlml.hooks.vl_pseudo_label_hook import scoring_pipeline
from mmlml.registry import DATASETS, MODELS

__all__ = [
    'TOOL', 'VLScoresResult', 'build_rows', 'find_labeller',
    'hook_score_files', 'main', 'parse_args', 'run', 'score_training_images'
]

#: The name the step's messages (and its progress line) give it.
TOOL = 'vl_pseudo_label.py'


class VLScoresResult(NamedTuple):
    """What :func:`score_training_images` wrote and reported."""
    #: The ``.npy`` file written (``--out``, as given; by rank 0).
    out: str
    #: The ``(N, C)`` float32 scores, NaN in the rows not scored (every
    #: rank holds them).
    scores: np.ndarray
    #: The number of rows scored.
    num_scored: int
    #: The line printed by rank 0 (empty on the other ranks).
    text: str


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    """The command line of the step (that of ``tools/vl_pseudo_label.py``);
    a bad one exits with argparse's status 2, an ``--out`` that exists
    without ``--force`` raises ``FileExistsError``."""
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


def score_training_images(config: str,
                          out: str,
                          *,
                          labeller: Optional[str] = None,
                          labeller_options: Optional[Dict[str, Any]] = None,
                          split: str = 'train',
                          pipeline: str = 'val',
                          batch_size: Optional[int] = None,
                          num_workers: Optional[int] = None,
                          chunk_size: Optional[int] = None,
                          device: Optional[str] = None,
                          cfg_options: Optional[Dict[str, Any]] = None,
                          force: bool = False,
                          launcher: str = 'none') -> VLScoresResult:
    """Score the training images of ``config`` with a pseudo-labeller and
    write the ``(N, C)`` float32 scores file ``out`` (NaN in the rows not
    scored), as ``tools/vl_pseudo_label.py`` does: rank 0 writes it and
    prints one line (the rows scored, the pipeline, the scores >= 0.3 per
    image).

    Args:
        config (str): The training config whose training images are
            scored.
        out (str): The ``.npy`` file to write.
        labeller (str, optional): A config file that defines ``labeller =
            dict(type=...)``; defaults to the labeller of the config's
            ``VLPseudoLabelHook``.
        labeller_options (dict, optional): Keys of the labeller to
            override (or give), e.g. ``dict(type='ModelPseudoLabeller',
            config=C, checkpoint=W)``.
        split (str): ``'train'`` (the training set's rows) or ``'all'``
            (every row of the wrapped dataset). Defaults to 'train'.
        pipeline (str): ``'val'`` or ``'test'``: the dataloader whose
            pipeline transforms the images when the labeller has none of
            its own. Defaults to 'val'.
        batch_size (int, optional): Defaults to that dataloader's.
        num_workers (int, optional): Defaults to that dataloader's.
        chunk_size (int, optional): Images per chunk (the unit of work of
            a process and of resuming). Defaults to 16 batches.
        device (str, optional): Defaults to cuda if available, else cpu.
        cfg_options (dict, optional): Overrides of the config
            (``--cfg-options``).
        force (bool): Replace an existing ``out``. Defaults to False.
        launcher (str): ``'none'`` (one process, or a process group that
            the caller started: every rank calls this function) or a
            launcher of :data:`mmlml.cli.LAUNCHERS` (``'pytorch'`` under
            torchrun), which starts the process group here and ends it
            once the file is written. Defaults to 'none'.

    Returns:
        VLScoresResult: ``out``, the scores, the number of rows scored and
        the line printed.

    Raises:
        FileExistsError: ``out`` exists and ``force`` is False.
        ValueError: ``out`` is an input (``config``, ``labeller``, a file
            the config or the labeller reads, but the ``scores_file`` of
            the config's hook) or not a ``.npy`` file, another argument is
            out of its range, or the labeller is missing or scores another
            number of classes.
    """
    # The checks of parse_args, for a caller without the command line.
    check_output(out, (config, labeller), force)
    if not out.endswith('.npy'):
        raise ValueError(f'--out must be a .npy file, got {out!r}')
    for name, value, choices in (('--split', split, ('train', 'all')),
                                 ('--pipeline', pipeline, ('val', 'test')),
                                 ('--launcher', launcher, LAUNCHERS)):
        if value not in choices:
            raise ValueError(f'{name} must be one of {list(choices)}, got '
                             f'{value!r}')
    if batch_size is not None and batch_size < 1:
        raise ValueError(f'--batch-size must be positive, got {batch_size}')
    if num_workers is not None and num_workers < 0:
        raise ValueError('--num-workers must not be negative, got '
                         f'{num_workers}')
    if chunk_size is not None and chunk_size < 1:
        raise ValueError(f'--chunk-size must be positive, got {chunk_size}')

    cfg = load_config(config, cfg_options)
    # Never over a file the config reads, but for the scores (and cache)
    # file of its VLPseudoLabelHook: that is what this tool makes.
    check_config_output(out, cfg, exclude=hook_score_files(cfg))
    # Nor over a file the labeller reads (its text embeddings, checkpoint).
    check_config_output(out, dict(labeller_options or {}), option='--out')
    init_default_scope(cfg.get('default_scope', 'mmpretrain'))
    if launcher != 'none':
        init_dist(launcher)
    # A name: score_dataset makes the torch.device (an unknown one fails
    # there, as from the tool).
    scoring_device: Any = device or ('cuda'
                                     if torch.cuda.is_available() else 'cpu')

    labeller_cfg = find_labeller(cfg, labeller, labeller_options)
    rows = build_rows(cfg, split)
    model = MODELS.build(labeller_cfg.copy())
    if model.num_classes != rows.num_classes:
        raise ValueError(f'{TOOL}: the labeller scores '
                         f'{model.num_classes} classes, the dataset has '
                         f'{rows.num_classes}')
    transforms, source = scoring_pipeline(model, cfg, source=pipeline)
    rows.pipeline = Compose(transforms)
    loader = cfg.get(f'{pipeline}_dataloader') or {}
    batch_size = batch_size or loader.get('batch_size', 32)
    num_workers = num_workers if num_workers is not None \
        else loader.get('num_workers', 0)
    parts = pseudo_labellers.parts_dir_of(out)
    fingerprint = json.dumps(
        dict(
            labeller=str(labeller_cfg.to_dict()),
            pipeline=str(transforms),
            split=split),
        sort_keys=True)
    scores = pseudo_labellers.score_dataset(
        model,
        rows,
        batch_size=batch_size,
        num_workers=num_workers,
        chunk_size=chunk_size,
        parts_dir=parts,
        fingerprint=fingerprint,
        device=scoring_device,
        task=f'{TOOL}: scoring')

    full = np.full((len(rows.dataset), rows.num_classes),
                   np.nan,
                   dtype=np.float32)
    full[rows.indices] = scores
    text = ''
    if get_rank() == 0:
        pseudo_labellers.save_scores(out, full)
        pseudo_labellers.remove_parts(parts)
        positives = scores >= 0.3
        text = (f'Scores of {len(rows)} of the {len(full)} images '
                f'({split} rows; pipeline of {source}) written to '
                f'{out}: {full.shape[0]} x {full.shape[1]}, float32, NaN '
                'in the rows not scored. Scores >= 0.3: '
                f'{positives.sum() / max(len(rows), 1):.2f} per image.')
        print(text)
    if launcher != 'none':
        end_distributed()
    return VLScoresResult(out, full, len(rows), text)


def run(argv: Optional[List[str]] = None) -> np.ndarray:
    """Parse the command line ``argv`` (default: ``sys.argv[1:]``), score
    and return the scores (:attr:`VLScoresResult.scores`): what
    ``tools/vl_pseudo_label.py``'s ``main`` returns."""
    args = parse_args(argv)
    return score_training_images(
        args.config,
        args.out,
        labeller=args.labeller,
        labeller_options=args.labeller_options,
        split=args.split,
        pipeline=args.pipeline,
        batch_size=args.batch_size,
        num_workers=args.num_workers,
        chunk_size=args.chunk_size,
        device=args.device,
        cfg_options=args.cfg_options,
        force=args.force,
        launcher=args.launcher).scores


def main(argv: Optional[List[str]] = None) -> int:
    """The command line (``python -m mmlml.apis.vl_pseudo_label``): 0 once
    the file is written; a bad command line exits with status 2, and an
    error raises (status 1)."""
    run(argv)
    return 0


if __name__ == '__main__':
    sys.exit(main())
