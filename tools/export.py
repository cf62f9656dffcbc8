"""Export a trained multi-label classifier to ONNX: images in, class
probabilities out, the class names and thresholds in the file's metadata.

    python tools/export.py CONFIG CHECKPOINT [--out model.onnx] \\
        [--input-size H W] [--input-dtype uint8|float32] [--channels C] \\
        [--force]

The graph takes a batch of images as the test pipeline of ``CONFIG``
hands them to the model, ``(N, H, W, C)`` (``uint8`` by default, channels
in the pipeline's order: BGR after ``LoadImageFromFile``), and holds the
model's data preprocessor (the ``to_rgb`` flip, ``(x - mean) / std``), the
backbone, the neck and the head; it returns the ``(N, num_classes)``
probabilities of the model's ``predict``. The batch axis is dynamic, the
image size fixed: ``--input-size``, by default the test pipeline's last
``Resize`` or ``CenterCrop`` (or the generated dataset's ``img_size``).

Metadata (ONNX Runtime: ``session.get_modelmeta().custom_metadata_map``):
``classes`` (a JSON list, from the checkpoint's ``dataset_meta``, else the
config's test dataset), ``thresholds`` and ``global_threshold`` when
``X.thresholds.json`` lies beside the checkpoint ``X.pth``, ``input``,
``output``, ``config``, ``checkpoint`` and ``mmlml_version``.

Every export is checked: ONNX Runtime runs the file on batches of 1 and 3
random images, and its probabilities must match PyTorch's within 1e-4 (the
differences are printed). A part of the model that cannot be exported is
named in the one-line error.
"""
import os.path as osp
import sys

from mmengine.config import Config

import mmlml  # noqa: F401  (registers modules, applies fixes)
from mmlml.apis import build_model, class_names
from mmlml.apis.onnx_export import (INPUT_DTYPES, OnnxExportError, export_onnx,
                                    input_size_of)
from mmlml.cli import (add_cfg_options_argument, add_force_argument,
                       add_model_arguments, check_output, tool_parser)
from mmlml.compat.checkpoint_policy import check_checkpoint_exists
from mmlml.evaluation.class_thresholds import (check_classes, load_thresholds,
                                               thresholds_path)


def parse_args(argv=None):
    parser = tool_parser(__doc__)
    add_model_arguments(parser)
    parser.add_argument(
        '--out',
        help='the .onnx file to write (default: the checkpoint\'s path '
        'with .onnx in place of its extension)')
    parser.add_argument(
        '--input-size',
        type=int,
        nargs=2,
        metavar=('H', 'W'),
        help='the height and width of the images (default: the test '
        'pipeline\'s output size)')
    parser.add_argument(
        '--input-dtype',
        choices=INPUT_DTYPES,
        default='uint8',
        help='the dtype of the graph\'s images (default: uint8)')
    parser.add_argument(
        '--channels',
        type=int,
        help='the channels of the images (default: those of the data '
        'preprocessor\'s mean, else 3)')
    add_cfg_options_argument(parser)
    add_force_argument(parser)
    args = parser.parse_args(argv)
    if args.out is None:
        args.out = osp.splitext(args.checkpoint)[0] + '.onnx'
    if not args.out.endswith('.onnx'):
        parser.error(f'--out must be a .onnx file, got {args.out!r}')
    if args.input_size is not None and min(args.input_size) < 1:
        parser.error('--input-size must be two positive integers, got '
                     f'{args.input_size}')
    if args.channels is not None and args.channels < 1:
        parser.error(f'--channels must be positive, got {args.channels}')
    return args


def default_channels(model) -> int:
    """The channels of the data preprocessor's ``mean``, else 3."""
    preprocessor = model.data_preprocessor
    if getattr(preprocessor, '_enable_normalize', False):
        return preprocessor.mean.numel()
    return 3


def main(argv=None) -> dict:
    args = parse_args(argv)
    check_checkpoint_exists(args.checkpoint)
    check_output(args.out, (args.config, args.checkpoint), args.force)
    cfg = Config.fromfile(args.config)
    if args.cfg_options is not None:
        cfg.merge_from_dict(args.cfg_options)
    input_size = args.input_size or input_size_of(cfg)
    if input_size is None:
        raise ValueError('The test pipeline of the config does not say the '
                         'size of the images it hands the model: give it '
                         'with --input-size H W.')
    try:
        model, checkpoint = build_model(cfg, args.checkpoint, 'cpu')
    except RuntimeError as error:
        reason = ' '.join(str(error).split())
        raise ValueError(f'The checkpoint {args.checkpoint} does not fit '
                         f'the model of the config: {reason}') from error
    classes, source = class_names(cfg, checkpoint)
    if classes is None:
        num_classes = model.head.num_classes
        print(
            f'No class names found ({source}); using class_0 .. '
            f'class_{num_classes - 1}.',
            file=sys.stderr)
        classes = [f'class_{i}' for i in range(num_classes)]
    channels = args.channels or default_channels(model)
    thresholds = None
    if osp.isfile(args.checkpoint):
        thresholds = load_thresholds(args.checkpoint)
    if thresholds is not None:
        check_classes(thresholds, classes, thresholds_path(args.checkpoint))
    differences = export_onnx(
        model,
        args.out,
        classes,
        tuple(input_size),
        input_dtype=args.input_dtype,
        channels=channels,
        thresholds=None if thresholds is None else thresholds.thresholds,
        global_threshold=None
        if thresholds is None else thresholds.global_threshold,
        metadata=dict(
            config=osp.basename(args.config),
            checkpoint=osp.basename(args.checkpoint)))
    height, width = input_size
    origin = f'class names from {source}'
    if thresholds is not None:
        origin += f', thresholds from {thresholds_path(args.checkpoint)}'
    print(f'Wrote {args.out}: images {args.input_dtype} (N, {height}, '
          f'{width}, {channels}) -> probabilities (N, {len(classes)}), '
          f'{origin}.')
    print('ONNX Runtime vs PyTorch, largest |difference| of the '
          'probabilities: ' +
          ', '.join(f'batch {batch}: {diff:.2e}'
                    for batch, diff in differences.items()))
    return differences


if __name__ == '__main__':
    try:
        main()
    except (FileNotFoundError, FileExistsError, ValueError,
            OnnxExportError) as error:
        sys.exit(f'{osp.basename(__file__)}: error: {error}')
