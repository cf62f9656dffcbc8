"""Convert OpenImages V6 human-verified image-level labels for
``OpenImagesMultiLabel``.

The official label CSV of a split (tens of millions of rows for train) is
streamed once and restricted to a class subset; the result is written as a
compact ``.npz`` file (no pickle) that ``OpenImagesMultiLabel`` loads in
seconds::

    python tools/dataset_converters/openimages.py \\
        --data-root data/openimages --split train \\
        --classes-file data/openimages/annotations/classes_567.txt \\
        --out data/openimages/annotations/train_567.npz

Reads ``<data-root>/annotations/<official file of the split>`` (or
``--ann-file``) and, for the class names,
``<data-root>/annotations/oidv6-class-descriptions.csv`` if it exists (or
``--class-descriptions``; ``--no-class-descriptions`` names the classes by
their MIDs). Paths given on the command line are relative to the working
directory. The file holds every image with at least one verified label of
the subset, sorted by ``ImageID``: the positive and the negative class
indices of each (compressed sparse rows), the MIDs and names of the classes,
and the counts of the conversion; see
:func:`mmlml.datasets.benchmarks.openimages_npz.save_labels`.

Then the dataset is built from the new file as a config would build it
(``drop_images_without_positive=True`` unless
``--keep-images-without-positive``) and its summary printed: images,
classes, positives per image, negatives, unknown labels, images without
positive, and the image files missing under ``<data-root>/<split>/`` with
their paths (``--no-check-images`` skips that check).
"""
import os
import os.path as osp
import sys
import time

from mmlml.cli import add_force_argument, check_output, tool_parser
from mmlml.datasets import OpenImagesMultiLabel
from mmlml.datasets.benchmarks import openimages_files as files
from mmlml.datasets.benchmarks.openimages_npz import save_labels
from mmlml.datasets.summary import dataset_summary, format_summary


def parse_args(argv=None):
    parser = tool_parser(__doc__)
    parser.add_argument(
        '--data-root',
        required=True,
        help='the OpenImages folder (with annotations/ and the image '
        'folders train/, validation/, test/)')
    parser.add_argument(
        '--split',
        required=True,
        choices=list(files.HUMAN_LABEL_FILES),
        help='the split whose human-verified labels are converted')
    parser.add_argument(
        '--classes-file',
        required=True,
        help='the class subset: one MID a line (/m/011k07), or CSV rows '
        'whose first column is the MID; its order is the class order')
    parser.add_argument('--out', required=True, help='the .npz file to write')
    parser.add_argument(
        '--ann-file',
        help='the official human-verified label CSV (default: '
        '<data-root>/annotations/<official file of the split>)')
    names = parser.add_mutually_exclusive_group()
    names.add_argument(
        '--class-descriptions',
        help='the class descriptions CSV for the class names (default: '
        f'<data-root>/annotations/{files.CLASS_DESCRIPTIONS_FILE} if it '
        'exists)')
    names.add_argument(
        '--no-class-descriptions',
        action='store_true',
        help='name the classes by their MIDs')
    parser.add_argument(
        '--keep-images-without-positive',
        action='store_true',
        help='summarise the dataset with drop_images_without_positive='
        'False (the file always holds these images)')
    parser.add_argument(
        '--no-check-images',
        action='store_true',
        help='do not look for the image files')
    parser.add_argument(
        '--no-progress', action='store_true', help='no progress bars')
    add_force_argument(parser)
    args = parser.parse_args(argv)
    check_output(args.out,
                 (args.ann_file, args.classes_file, args.class_descriptions),
                 args.force)
    if not args.out.lower().endswith('.npz'):
        parser.error(f'--out must be an .npz file, but got {args.out!r}.')
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    ann_file = args.ann_file or osp.join(args.data_root, 'annotations',
                                         files.HUMAN_LABEL_FILES[args.split])
    subset = files.read_class_subset(args.classes_file)
    descriptions_file = ''
    descriptions = None
    if args.class_descriptions:
        descriptions_file = args.class_descriptions
    elif not args.no_class_descriptions:
        default = osp.join(args.data_root, 'annotations',
                           files.CLASS_DESCRIPTIONS_FILE)
        if osp.isfile(default):
            descriptions_file = default
        else:
            print(f'No class descriptions file {default!r}: the class names '
                  'are the MIDs.')
    if descriptions_file:
        descriptions = files.read_class_descriptions(descriptions_file)
    class_names = files.class_display_names(subset, args.classes_file,
                                            descriptions, descriptions_file)
    class_mids = tuple(mid for _, mid in subset)

    print(f'Reading {ann_file} ({len(class_mids)} classes of '
          f'{args.classes_file})...')
    start = time.time()
    labels = files.read_human_labels(
        ann_file,
        class_mids,
        class_names,
        split=args.split,
        progress=not args.no_progress)
    save_labels(args.out, labels)
    counts = labels.counts
    print(f'Wrote {args.out} ({osp.getsize(args.out) / 2**20:.1f} MiB) in '
          f'{time.time() - start:.1f} s: {len(labels.image_ids)} images with '
          f'a verified label of the subset, from {counts["num_rows"]} rows '
          f'({counts["num_rows_outside_subset"]} of other classes, ignored; '
          f'{counts["num_duplicate_labels"]} repeating an image and class; '
          f'{counts["num_conflicting_labels"]} image and class pairs both '
          'positive and negative, taken as positive).')
    del labels

    dataset = OpenImagesMultiLabel(
        data_root=args.data_root,
        split=args.split,
        ann_file=osp.abspath(args.out),
        drop_images_without_positive=not args.keep_images_without_positive)
    summary = dataset_summary(
        dataset,
        check_images=not args.no_check_images,
        progress=not args.no_progress)
    stats = dataset.annotation_statistics()
    print(
        format_summary(
            summary,
            name=f'OpenImages {args.split} ({len(class_mids)} classes)'))
    print(
        f'  images with only negatives in the subset: '
        f'{stats["num_images_dropped"]} ' +
        ('(left out)' if not args.keep_images_without_positive else '(kept)'))
    out = osp.abspath(args.out)
    root = osp.abspath(args.data_root)
    if out.startswith(root + os.sep):
        out = osp.relpath(out, root)
    print('Config:\n'
          f'    dict(type={OpenImagesMultiLabel.__name__!r}, '
          f'data_root={args.data_root!r}, split={args.split!r}, '
          f'ann_file={out!r}' +
          (', drop_images_without_positive=False' if args.
           keep_images_without_positive else '') + ')')
    return 0


if __name__ == '__main__':
    sys.exit(main())
