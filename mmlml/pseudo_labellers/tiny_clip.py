"""A random tiny CLIP for offline trials: a 2-layer ViT image encoder (32
dimensions, patches of 8 on 32x32 images, CLIP's pre-norm layout and
QuickGELU) with a projection to 16 dimensions, saved under the keys of a
converted CLIP checkpoint of MMPretrain (``visual.*``,
``visual_proj.proj``), and random class text embeddings.

Its scores mean nothing: it lets a VLPL or AEVLP config, the
pseudo-labelling hook and ``tools/vl_pseudo_label.py`` run end to end
without downloading CLIP (``tools/write_tiny_clip.py``; the tests use it
too)."""
import os.path as osp
from typing import Any, Dict

import numpy as np
import torch

__all__ = ['TINY_ENCODER', 'PROJ_DIMS', 'INPUT_SIZE', 'write_tiny_clip']

#: The image encoder: CLIP's ViT layout (pre-norm, QuickGELU), tiny.
TINY_ENCODER = dict(
    type='VisionTransformer',
    arch=dict(
        embed_dims=32, num_layers=2, num_heads=2, feedforward_channels=64),
    img_size=32,
    patch_size=8,
    pre_norm=True,
    layer_cfgs=dict(act_cfg=dict(type='QuickGELU')))
#: The joint embedding size of the tiny CLIP.
PROJ_DIMS = 16
#: The side of the images it scores.
INPUT_SIZE = 32

CHECKPOINT_NAME = 'tiny_clip.pth'
TEXT_NAME = 'text_embeddings.npy'


def write_tiny_clip(folder: str,
                    num_classes: int = 20,
                    seed: int = 0) -> Dict[str, Any]:
    """Write the weights (``tiny_clip.pth``) and the class text embeddings
    (``text_embeddings.npy``) of a random tiny CLIP into ``folder``.

    Args:
        folder (str): An existing folder.
        num_classes (int): Rows of the text embeddings, the dataset's
            classes. Defaults to 20.
        seed (int): Seed of the weights and embeddings (the same seed
            writes the same files). Defaults to 0.

    Returns:
        dict: The config of its :class:`CLIPPseudoLabeller` (whole images
        of 32x32), to put in a ``VLPseudoLabelHook``'s ``labeller``.
    """
    from mmengine.registry import DefaultScope

    from .clip_pseudo_labeller import CLIPPseudoLabeller
    if isinstance(num_classes,
                  bool) or not isinstance(num_classes, int) or num_classes < 1:
        raise ValueError(
            f'num_classes must be a positive integer, got {num_classes!r}')
    text = osp.join(str(folder), TEXT_NAME)
    np.save(
        text,
        np.random.RandomState(seed).randn(num_classes,
                                          PROJ_DIMS).astype(np.float32))
    torch.manual_seed(seed)
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        labeller = CLIPPseudoLabeller(
            TINY_ENCODER, text, proj_dims=PROJ_DIMS, input_size=INPUT_SIZE)
    state = dict(labeller.state_dict())
    # What a converted CLIP checkpoint holds besides the image side.
    state['transformer.resblocks.0.attn.in_proj_weight'] = torch.zeros(3, 3)
    state['logit_scale'] = torch.tensor(4.6)
    checkpoint = osp.join(str(folder), CHECKPOINT_NAME)
    torch.save(dict(state_dict=state, meta={}), checkpoint)
    return dict(
        type='CLIPPseudoLabeller',
        image_encoder=TINY_ENCODER,
        proj_dims=PROJ_DIMS,
        checkpoint=checkpoint,
        text_embeddings=text,
        input_size=INPUT_SIZE)
