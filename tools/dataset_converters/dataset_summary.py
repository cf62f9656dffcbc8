"""Print the counts of the dataset of a config, and its missing images.

Checks a dataset preparation against the counts of ``docs/datasets.md``::

    python tools/dataset_converters/dataset_summary.py CONFIG --split train

The dataset of ``<split>_dataloader`` is built as training would build it.
A ``PartialLabelDataset`` prints its label statistics (observed labels,
images without positive) and then the summary of the dataset it wraps.
An evaluation split that training would refuse because no known label is
a negative (a fully labelled file read with ``unlisted='unknown'``) is
summarized with a warning that names the fix.
"""
import sys

from mmengine.registry import init_default_scope

import mmlml  # noqa: F401  (registers the datasets)
from mmlml.cli import add_cfg_options_argument, load_config, tool_parser
from mmlml.datasets.custom_multi_label_dataset import NoKnownNegative
from mmlml.datasets.summary import dataset_summary, format_summary
from mmlml.registry import DATASETS


def parse_args(argv=None):
    parser = tool_parser(__doc__)
    parser.add_argument('config', help='the config file')
    parser.add_argument(
        '--split',
        default='train',
        choices=('train', 'val', 'test'),
        help='the dataloader whose dataset to summarize (default: train)')
    parser.add_argument(
        '--no-check-images',
        action='store_true',
        help='do not look for the image files')
    add_cfg_options_argument(
        parser, 'override settings of the config, e.g. '
        'train_dataloader.dataset.dataset.data_root=data/coco')
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    cfg = load_config(args.config, args.cfg_options)
    init_default_scope(cfg.get('default_scope', 'mmpretrain'))
    loader = cfg.get(f'{args.split}_dataloader')
    if not loader:
        print(
            f'{args.config} has no {args.split}_dataloader.', file=sys.stderr)
        return 1
    try:
        try:
            dataset = DATASETS.build(loader['dataset'])
        except NoKnownNegative as error:
            # Summarize it all the same (as a split that is not evaluated).
            print(f'warning: {error}', file=sys.stderr)
            dataset = DATASETS.build(dict(loader['dataset'], test_mode=False))
    except (FileNotFoundError, ValueError) as error:
        # What a preparation gets wrong (a missing annotation file, a value
        # that does not fit), in one line: it names the file and the item.
        print(f'[dataset_summary] {args.split}: {error}', file=sys.stderr)
        return 1
    if hasattr(dataset, 'statistics') and hasattr(dataset, 'dataset'):
        stats = dataset.statistics()
        print(f'{type(dataset).__name__} ({args.split}):')
        for key, value in stats.items():
            print(f'  {key}: {value}')
        dataset = dataset.dataset
    summary = dataset_summary(dataset, check_images=not args.no_check_images)
    print(format_summary(summary, name=type(dataset).__name__))
    return 0


if __name__ == '__main__':
    sys.exit(main())
