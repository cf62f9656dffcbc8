"""Keep the backbone weights of a classifier checkpoint, for fine-tuning.

The result holds ``state_dict`` (the ``backbone.*`` entries, prefix kept)
and ``meta`` (the source checkpoint's meta plus the source file name), and
loads with MMPretrain's usual initialisation::

    model = dict(backbone=dict(init_cfg=dict(
        type='Pretrained', checkpoint='OUT.pth', prefix='backbone')))

Example (the benchmark's source backbone, see
configs/benchmark/source_pretrain.py)::

    python tools/model_converters/extract_backbone.py \\
        work_dirs/source_pretrain/best_multi-label_mAP_epoch_20.pth \\
        checkpoints/synthetic_shapes_source_backbone.pth
"""
import os
import os.path as osp

import torch
from mmengine.runner import CheckpointLoader

import mmlml  # noqa: F401  (MMEngine's checkpoint loading, as patched)
from mmlml.cli import (add_checkpoint_argument, add_force_argument,
                       check_output, tool_parser)
from mmlml.compat.checkpoint_policy import check_checkpoint_exists

PREFIX = 'backbone.'


def extract_backbone(checkpoint: dict, source: str = '') -> dict:
    """The ``backbone.*`` entries of ``checkpoint['state_dict']`` (or of the
    checkpoint itself when it is a bare state dict) and its meta."""
    state = checkpoint.get('state_dict', checkpoint)
    backbone = {k: v for k, v in state.items() if k.startswith(PREFIX)}
    if not backbone:
        keys = ', '.join(list(state)[:5])
        raise ValueError(f'{source or "The checkpoint"} has no '
                         f"'{PREFIX}*' weights (first keys: {keys}).")
    meta = dict(checkpoint.get('meta') or {})
    meta['extracted_from'] = osp.basename(source) if source else None
    return dict(state_dict=backbone, meta=meta)


def main(argv=None):
    parser = tool_parser(__doc__)
    add_checkpoint_argument(parser, 'the classifier checkpoint')
    parser.add_argument('out', help='the backbone checkpoint to write')
    add_force_argument(parser)
    args = parser.parse_args(argv)
    check_output(args.out, [args.checkpoint], args.force, option='OUT')
    check_checkpoint_exists(args.checkpoint)
    checkpoint = CheckpointLoader.load_checkpoint(
        args.checkpoint, map_location='cpu')
    result = extract_backbone(checkpoint, args.checkpoint)
    os.makedirs(osp.dirname(osp.abspath(args.out)), exist_ok=True)
    torch.save(result, args.out)
    size = osp.getsize(args.out) / 2**20
    print(f'{len(result["state_dict"])} backbone tensors -> {args.out} '
          f'({size:.2f} MiB)')


if __name__ == '__main__':
    main()
