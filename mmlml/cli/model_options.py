"""The command line of the tools that read a trained model: its
checkpoint argument (``tools/test.py``, ``tools/infer.py``...), and the
options of those that score a dataset with it and write the scores
(``tools/pseudo_label.py``, ``tools/vl_pseudo_label.py``,
``tools/analysis/missing_label_scores.py``; the scoring itself is
:mod:`mmlml.apis`)."""
import argparse
from typing import Iterable, Optional

from .config_options import add_cfg_options_argument
from .output_files import add_force_argument, check_output

__all__ = [
    'CHECKPOINT_SOURCES', 'add_checkpoint_argument', 'add_model_arguments',
    'add_scoring_arguments', 'check_scoring_arguments'
]

#: Where a checkpoint may come from: whatever MMEngine's
#: ``load_checkpoint`` reads (every source goes through
#: :mod:`mmlml.compat.checkpoint_policy`).
CHECKPOINT_SOURCES = ('a file, or a URL (http(s)://, torchvision://, '
                      'open-mmlab://, s3://, ...)')


def add_checkpoint_argument(parser: argparse.ArgumentParser,
                            what: str = 'the trained checkpoint') -> None:
    """The positional ``checkpoint``: ``what`` it is, and
    :data:`CHECKPOINT_SOURCES`."""
    parser.add_argument('checkpoint', help=f'{what}: {CHECKPOINT_SOURCES}')


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    """The positional ``config`` and ``checkpoint`` of a trained model."""
    parser.add_argument('config', help='the config the model was trained with')
    add_checkpoint_argument(parser)


def add_scoring_arguments(parser: argparse.ArgumentParser,
                          pipeline: str = 'test',
                          pipeline_help: str = '') -> None:
    """The options of the scoring tools: ``--pipeline`` (``'test'`` or
    ``'val'``, default ``pipeline``), ``--batch-size``, ``--num-workers``,
    ``--device``, ``--cfg-options`` and ``--force``."""
    parser.add_argument(
        '--pipeline',
        choices=['test', 'val'],
        default=pipeline,
        help=pipeline_help or 'the dataloader whose pipeline transforms the '
        f'images (default: {pipeline})')
    parser.add_argument(
        '--batch-size',
        type=int,
        help='default: the batch size of that dataloader')
    parser.add_argument(
        '--num-workers',
        type=int,
        help='default: the number of workers of that dataloader')
    parser.add_argument(
        '--device', help='default: cuda if available, else cpu')
    add_cfg_options_argument(parser)
    add_force_argument(parser)


def check_scoring_arguments(parser: argparse.ArgumentParser,
                            args: argparse.Namespace,
                            inputs: Iterable[Optional[str]],
                            suffix: str) -> None:
    """Refuse an ``--out`` that is not a ``suffix`` file, is one of
    ``inputs`` or exists without ``--force``
    (:func:`~mmlml.cli.output_files.check_output`), a non-positive
    ``--batch-size`` and a negative ``--num-workers``."""
    check_output(args.out, inputs, args.force)
    if not args.out.endswith(suffix):
        parser.error(f'--out must be a {suffix} file, got {args.out!r}')
    if args.batch_size is not None and args.batch_size < 1:
        parser.error(f'--batch-size must be positive, got {args.batch_size}')
    if args.num_workers is not None and args.num_workers < 0:
        parser.error('--num-workers must not be negative, got '
                     f'{args.num_workers}')
