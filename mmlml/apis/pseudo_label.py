"""Relabel a training set with a trained model (the "pseudo label" baseline).

The two-stage baseline of Zhang et al.'s Hill/SPLC paper ("BCE + pseudo
label", after Lee, 2013): train a model on the partial labels, relabel the
training set with it, and train again on the new labels. This step is the
middle one, the command line of ``tools/pseudo_label.py`` (the same
arguments with ``python -m``, without the checkout's ``tools/``)::

    python tools/pseudo_label.py CONFIG CHECKPOINT --out labels.npy [--thr 0.5]
    python -m mmlml.apis.pseudo_label CONFIG CHECKPOINT --out labels.npy

or :func:`relabel_training_set` in a Python process. It builds the model of
``CONFIG``, loads ``CHECKPOINT`` and predicts, in eval mode and without
gradients, every sample of the :class:`~mmlml.datasets.PartialLabelDataset`
of ``train_dataloader.dataset`` taken with ``split=None``: all ``N``
samples of the wrapped dataset, in its order, training and validation rows
alike. The images go through the pipeline of ``val_dataloader``
(``--pipeline test`` for ``test_dataloader``'s): no random augmentation,
and the validation set of mmlml's configs wraps the same images as the
training set, so its pipeline reads them.

The output is an ``(N, C)`` ``int8`` ``.npy`` matrix in mmlml's encoding,
for ``PartialLabelDataset(mode='file', label_file=...)``:

- an observed label (1 or -1) is kept as it is;
- an unannotated label (0) whose predicted probability is strictly greater
  than ``--thr`` becomes an observed positive (1), as in SPLC's rule
  ``p > tau`` of the same paper;
- every other label stays unannotated (0).

The paper states no threshold for this baseline; its Fig. 7 marks 0.4 to
0.6 as the range of a well-trained model used for pseudo-labelling, and
SPLC uses 0.6. Choose it on the validation split. The validation rows are
relabelled too (the file covers every row), but a second stage that
validates on clean labels (``val_labels='clean'``) never reads them.

``--out`` is never a file that ``CONFIG`` reads (its ``label_file``,
annotation files, checkpoints...), even with ``--force``: the first stage's
labels stay as they are.

The summary judges the added pseudo-positives by the known labels of the
wrapped dataset's annotation (the full labels of a fully labelled
dataset): their precision on known labels, the share of the annotated
negatives they leave alone, and apart how many fell on labels the
annotation leaves unknown (a partially annotated dataset such as
OpenImages), which are neither hits nor misses; then their recall of the
known positives missing from the observed labels. The training log of the
second stage reports its label file in the same words
(:func:`mmlml.datasets.partial.statistics.quality_text`). One process, on
the GPU when there is one.

This module imports the command line (:mod:`mmlml.cli`), the datasets and
the root package: :mod:`mmlml.apis` does not import it.
"""
import argparse
import os
import os.path as osp
import sys
from typing import Any, Dict, List, NamedTuple, Optional

import numpy as np
import torch
from mmengine.dataset import Compose
from mmengine.registry import init_default_scope

import mmlml  # noqa: F401  (registers modules, applies fixes)
from mmlml.cli import (add_model_arguments, add_scoring_arguments,
                       check_config_output, check_output,
                       check_scoring_arguments, load_config, tool_parser)
from mmlml.datasets import PartialLabelDataset, split_train_val
from mmlml.datasets.partial.statistics import known_label_quality, quality_text
from mmlml.registry import DATASETS
from .model_scores import build_model, find_pipeline, predict_scores

__all__ = [
    'PseudoLabelResult', 'build_dataset', 'build_model',
    'find_partial_label_cfg', 'main', 'parse_args', 'pseudo_label',
    'relabel_training_set', 'run', 'summarise'
]


class PseudoLabelResult(NamedTuple):
    """What :func:`relabel_training_set` wrote and reported."""
    #: The ``.npy`` file written (``--out``, as given).
    out: str
    #: The ``(N, C)`` ``int8`` labels written to it.
    labels: np.ndarray
    #: :func:`summarise` of all rows (``'all'``) and, for a config that
    #: trains on the training split, of that split's rows (``'train'``).
    summary: Dict[str, dict]
    #: The lines printed: where the file went and the summaries.
    text: str


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    """The command line of the step (that of ``tools/pseudo_label.py``);
    a bad one exits with argparse's status 2, an ``--out`` that exists
    without ``--force`` raises ``FileExistsError``."""
    parser = tool_parser(__doc__)
    add_model_arguments(parser)
    parser.add_argument(
        '--out',
        required=True,
        help='the .npy file to write (label_file of the second stage)')
    parser.add_argument(
        '--thr',
        type=float,
        default=0.5,
        help='an unannotated label becomes positive if its probability is '
        'strictly greater than this (default: 0.5)')
    add_scoring_arguments(
        parser, 'val', 'the dataloader whose pipeline transforms the '
        'training images (default: val)')
    args = parser.parse_args(argv)
    check_scoring_arguments(parser, args, (args.config, args.checkpoint),
                            '.npy')
    if not 0 <= args.thr <= 1:
        parser.error(f'--thr must lie in [0, 1], got {args.thr}')
    return args


def _is_partial_label_dataset(dataset_cfg) -> bool:
    dataset_type = dataset_cfg.get('type')
    if isinstance(dataset_type, str):
        dataset_type = DATASETS.get(dataset_type)
    return isinstance(dataset_type, type) and issubclass(
        dataset_type, PartialLabelDataset)


def find_partial_label_cfg(dataset_cfg):
    """The config of the :class:`PartialLabelDataset` that a training
    dataset config is or wraps (through ``dataset`` keys, e.g. of a
    ``ClassBalancedDataset``)."""
    current = dataset_cfg
    while isinstance(current, dict):
        if _is_partial_label_dataset(current):
            return current
        current = current.get('dataset')
    raise TypeError('train_dataloader.dataset must be, or wrap, a '
                    'PartialLabelDataset: the tool relabels its samples and '
                    'keeps their row order.')


def build_dataset(cfg, pipeline_from: str = 'val') -> PartialLabelDataset:
    """All samples of the training set (``split=None``) with the pipeline of
    ``{pipeline_from}_dataloader``."""
    dataset_cfg = find_partial_label_cfg(cfg.train_dataloader.dataset)
    dataset_cfg = dataset_cfg.copy()
    dataset_cfg.update(split=None, lazy_init=False)
    dataset = DATASETS.build(dataset_cfg)
    loader = f'{pipeline_from}_dataloader'
    if cfg.get(loader) is None:
        raise ValueError(f'The config has no {loader}: choose another '
                         '--pipeline.')
    dataset.pipeline = Compose(find_pipeline(cfg[loader].dataset, loader))
    return dataset


def pseudo_label(model: torch.nn.Module,
                 dataset: PartialLabelDataset,
                 thr: float,
                 batch_size: int,
                 num_workers: int = 0) -> np.ndarray:
    """Relabel every sample of ``dataset`` with ``model``.

    Args:
        model (torch.nn.Module): A classifier in eval mode whose
            ``test_step`` returns data samples with ``pred_score`` (the
            per-class probabilities of a multi-label head).
        dataset (PartialLabelDataset): The samples, whose
            ``observed_labels`` are relabelled.
        thr (float): An unannotated label with a probability strictly
            greater than ``thr`` becomes an observed positive.
        batch_size (int): The inference batch size.
        num_workers (int): The dataloader workers. Defaults to 0.

    Returns:
        np.ndarray: The ``(len(dataset), C)`` ``int8`` matrix of the new
        observed labels.
    """
    observed = dataset.observed_labels
    scores = predict_scores(model, dataset, batch_size, num_workers)
    labels = observed.copy()
    labels[(observed == 0) & (scores > thr)] = 1
    return labels


def summarise(observed: np.ndarray,
              labels: np.ndarray,
              full: np.ndarray,
              unknown: Optional[np.ndarray] = None) -> dict:
    """How many pseudo-positives ``labels`` adds to ``observed``, and how
    they agree with the known labels of the annotation (``full``, its
    positives, and ``unknown``, the labels it leaves unknown, or None).

    The quality (:func:`known_label_quality` on the entries ``observed``
    leaves unannotated, the ones the tool decides on) is counted on known
    labels only: ``precision`` over the pseudo-positives on known labels,
    ``negative_agreement`` over the annotated negatives, and the
    pseudo-positives on unknown labels apart. ``recall`` is over the known
    positives that ``observed`` misses. A ratio with nothing to count is
    None.
    """
    added = (labels == 1) & (observed != 1)
    num_added = int(added.sum())
    quality = known_label_quality(labels, full, unknown, observed == 0)
    known_positive = full == 1
    if unknown is not None:
        known_positive &= ~unknown
    missing = int((known_positive & (observed != 1)).sum())
    found = int((added & known_positive).sum())
    num_images = int(observed.shape[0])
    return dict(
        num_images=num_images,
        num_observed_positives=int((observed == 1).sum()),
        num_pseudo_positives=num_added,
        pseudo_positives_per_image=num_added /
        num_images if num_images else 0.,
        num_missing_positives=missing,
        precision=quality['precision'],
        recall=found / missing if missing else None,
        quality=quality)


def _format(summary: dict, title: str) -> str:

    def percent(value):
        return 'n/a' if value is None else f'{100 * value:.1f}%'

    return (f'{title}: {summary["num_images"]} images, observed positives '
            f'{summary["num_observed_positives"]}, pseudo-positives added '
            f'{summary["num_pseudo_positives"]} '
            f'({summary["pseudo_positives_per_image"]:.2f} per image), '
            f'recall {percent(summary["recall"])} of the '
            f'{summary["num_missing_positives"]} missing known positives; ' +
            quality_text(summary['quality'], 'pseudo-positives added'))


def relabel_training_set(config: str,
                         checkpoint: str,
                         out: str,
                         thr: float = 0.5,
                         *,
                         pipeline: str = 'val',
                         batch_size: Optional[int] = None,
                         num_workers: Optional[int] = None,
                         device: Optional[str] = None,
                         cfg_options: Optional[Dict[str, Any]] = None,
                         force: bool = False) -> PseudoLabelResult:
    """Relabel the training set of ``config`` with the model of
    ``checkpoint`` and write the labels to ``out``: an unannotated label
    (0) whose probability is strictly greater than ``thr`` becomes an
    observed positive (1), every other label is kept. Prints the summary
    (:func:`summarise` of all rows, and of the training split's rows when
    the config trains on that split), as ``tools/pseudo_label.py`` does.

    Args:
        config (str): The config the model was trained with.
        checkpoint (str): Its checkpoint (a file or a URL).
        out (str): The ``.npy`` file to write (``label_file`` of the
            second stage).
        thr (float): The threshold, in [0, 1]. Defaults to 0.5.
        pipeline (str): ``'val'`` or ``'test'``: the dataloader whose
            pipeline transforms the training images. Defaults to 'val'.
        batch_size (int, optional): Defaults to that dataloader's.
        num_workers (int, optional): Defaults to that dataloader's.
        device (str, optional): Defaults to cuda if available, else cpu.
        cfg_options (dict, optional): Overrides of the config
            (``--cfg-options``).
        force (bool): Replace an existing ``out``. Defaults to False.

    Returns:
        PseudoLabelResult: ``out``, the labels, the summaries and the text
        printed.

    Raises:
        FileExistsError: ``out`` exists and ``force`` is False.
        ValueError: ``out`` is an input (``config``, ``checkpoint``, a file
            the config reads) or not a ``.npy`` file, or another argument
            is out of its range.
        TypeError: The training set is no ``PartialLabelDataset``.
    """
    # The checks of parse_args, for a caller without the command line.
    check_output(out, (config, checkpoint), force)
    if not out.endswith('.npy'):
        raise ValueError(f'--out must be a .npy file, got {out!r}')
    if not 0 <= thr <= 1:
        raise ValueError(f'--thr must lie in [0, 1], got {thr}')
    if pipeline not in ('val', 'test'):
        raise ValueError(f"--pipeline must be 'val' or 'test', got "
                         f'{pipeline!r}')
    if batch_size is not None and batch_size < 1:
        raise ValueError(f'--batch-size must be positive, got {batch_size}')
    if num_workers is not None and num_workers < 0:
        raise ValueError('--num-workers must not be negative, got '
                         f'{num_workers}')

    cfg = load_config(config, cfg_options)
    # Never over the labels (or any other file) the config trains on.
    check_config_output(out, cfg)
    init_default_scope(cfg.get('default_scope', 'mmpretrain'))
    device = device or ('cuda' if torch.cuda.is_available() else 'cpu')

    dataset = build_dataset(cfg, pipeline)
    model, _ = build_model(cfg, checkpoint, device)
    source = cfg[f'{pipeline}_dataloader']
    batch_size = batch_size or source.get('batch_size', 32)
    num_workers = num_workers if num_workers is not None \
        else source.get('num_workers', 0)
    labels = pseudo_label(model, dataset, thr, batch_size, num_workers)

    out_dir = osp.dirname(osp.abspath(out))
    os.makedirs(out_dir, exist_ok=True)
    np.save(out, labels)

    observed, full = dataset.observed_labels, dataset.full_labels
    unknown = dataset.annotation_unknown
    summary = dict(all=summarise(observed, labels, full, unknown))
    lines = [
        f'Pseudo-labels (p > {thr}) written to {out}: '
        f'{labels.shape[0]} x {labels.shape[1]}, int8.',
        _format(summary['all'], 'All rows')
    ]
    train_cfg = find_partial_label_cfg(cfg.train_dataloader.dataset)
    if train_cfg.get('split') == 'train':
        train_idx, _ = split_train_val(
            len(dataset), dataset.val_frac, dataset.split_seed)
        summary['train'] = summarise(
            observed[train_idx], labels[train_idx], full[train_idx],
            None if unknown is None else unknown[train_idx])
        lines.append(_format(summary['train'], "Training split's rows"))
    text = '\n'.join(lines)
    print(text)
    return PseudoLabelResult(out, labels, summary, text)


def run(argv: Optional[List[str]] = None) -> Dict[str, dict]:
    """Parse the command line ``argv`` (default: ``sys.argv[1:]``), relabel
    and return the summaries (:attr:`PseudoLabelResult.summary`): what
    ``tools/pseudo_label.py``'s ``main`` returns."""
    args = parse_args(argv)
    return relabel_training_set(
        args.config,
        args.checkpoint,
        args.out,
        args.thr,
        pipeline=args.pipeline,
        batch_size=args.batch_size,
        num_workers=args.num_workers,
        device=args.device,
        cfg_options=args.cfg_options,
        force=args.force).summary


def main(argv: Optional[List[str]] = None) -> int:
    """The command line (``python -m mmlml.apis.pseudo_label``): 0 once
    the file is written; a bad command line exits with status 2, and an
    error raises (status 1)."""
    run(argv)
    return 0


if __name__ == '__main__':
    sys.exit(main())
