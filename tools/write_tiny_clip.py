"""Write a random tiny CLIP for offline trials of the CLIP pseudo-labeller.

The files let VLPL and AEVLP configs, ``VLPseudoLabelHook`` and
``tools/vl_pseudo_label.py`` run end to end without downloading CLIP (its
scores mean nothing: use it to check a setup, not to train a model)::

    python tools/write_tiny_clip.py work_dirs/tiny_clip --num-classes 20
    python tools/vl_pseudo_label.py configs/demo/an.py \\
        --labeller work_dirs/tiny_clip/labeller.py \\
        --out work_dirs/tiny_clip_scores.npy

OUT_DIR receives ``tiny_clip.pth`` (a 2-layer ViT image encoder and its
projection, under the keys of a converted CLIP checkpoint of MMPretrain),
``text_embeddings.npy`` (random class text embeddings, one row per class)
and ``labeller.py``, a config file whose ``labeller`` dict is the
``CLIPPseudoLabeller`` of the two (for ``--labeller``, or to paste into a
``VLPseudoLabelHook``). See :mod:`mmlml.pseudo_labellers.tiny_clip`.
"""
import os
import os.path as osp
import pprint

import mmlml  # noqa: F401  (registers modules, applies fixes)
from mmlml.cli import add_force_argument, check_output, tool_parser
from mmlml.pseudo_labellers import tiny_clip

LABELLER_NAME = 'labeller.py'


def parse_args(argv=None):
    parser = tool_parser(__doc__)
    parser.add_argument(
        'out_dir',
        help='folder to write tiny_clip.pth, text_embeddings.npy and '
        'labeller.py into (created if missing)')
    parser.add_argument(
        '--num-classes',
        type=int,
        default=20,
        help='classes of the text embeddings: those of the dataset to '
        'score (default 20)')
    parser.add_argument(
        '--seed',
        type=int,
        default=0,
        help='seed of the random weights and embeddings (default 0)')
    add_force_argument(parser)
    args = parser.parse_args(argv)
    if args.num_classes < 1:
        parser.error(f'--num-classes must be >= 1, got {args.num_classes}')
    return args


def main(argv=None):
    args = parse_args(argv)
    names = (tiny_clip.CHECKPOINT_NAME, tiny_clip.TEXT_NAME, LABELLER_NAME)
    for name in names:
        check_output(osp.join(args.out_dir, name), (), args.force)
    os.makedirs(args.out_dir, exist_ok=True)
    labeller = tiny_clip.write_tiny_clip(args.out_dir, args.num_classes,
                                         args.seed)
    path = osp.join(args.out_dir, LABELLER_NAME)
    with open(path, 'w') as f:
        f.write('# A random tiny CLIP (tools/write_tiny_clip.py): for '
                'offline trials only.\n')
        f.write(f'labeller = {pprint.pformat(labeller, sort_dicts=False)}\n')
    print(f'wrote {", ".join(osp.join(args.out_dir, n) for n in names)}')
    return labeller


if __name__ == '__main__':
    main()
