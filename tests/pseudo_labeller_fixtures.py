"""A tiny CLIP-style image encoder for the pseudo-labeller tests: a
randomly initialised 2-layer ViT (32 dims, patches of 8 on 32x32 images)
with a projection to 16 dims, saved under the keys of MMPretrain's CLIP
(``visual.*``, ``visual_proj.proj``), and random class text embeddings."""
import os.path as osp

import numpy as np
import torch

#: The image encoder: CLIP's ViT layout (pre-norm, QuickGELU), tiny.
TINY_ENCODER = dict(
    type='VisionTransformer',
    arch=dict(
        embed_dims=32, num_layers=2, num_heads=2, feedforward_channels=64),
    img_size=32,
    patch_size=8,
    pre_norm=True,
    layer_cfgs=dict(act_cfg=dict(type='QuickGELU')))
PROJ_DIMS = 16


def write_tiny_clip(folder, num_classes=20, seed=0):
    """Write the weights and the text embeddings of a tiny CLIP into
    ``folder``; return the config of its :class:`CLIPPseudoLabeller`
    (whole images of 32x32)."""
    from mmengine.registry import DefaultScope

    from mmlml.pseudo_labellers import CLIPPseudoLabeller
    text = osp.join(str(folder), 'text_embeddings.npy')
    np.save(
        text,
        np.random.RandomState(seed).randn(num_classes,
                                          PROJ_DIMS).astype(np.float32))
    torch.manual_seed(seed)
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        labeller = CLIPPseudoLabeller(
            TINY_ENCODER, text, proj_dims=PROJ_DIMS, input_size=32)
    state = dict(labeller.state_dict())
    # What a converted CLIP checkpoint holds besides the image side.
    state['transformer.resblocks.0.attn.in_proj_weight'] = torch.zeros(3, 3)
    state['logit_scale'] = torch.tensor(4.6)
    checkpoint = osp.join(str(folder), 'tiny_clip.pth')
    torch.save(dict(state_dict=state, meta={}), checkpoint)
    return dict(
        type='CLIPPseudoLabeller',
        image_encoder=TINY_ENCODER,
        proj_dims=PROJ_DIMS,
        checkpoint=checkpoint,
        text_embeddings=text,
        input_size=32)
