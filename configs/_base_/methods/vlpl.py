# VLPL (Xing et al., "Vision-Language Pseudo-Labels for Single-Positive
# Multi-Label Learning", CVPR 2024 Workshops): what every dataset's config
# of configs/vlpl/ shares. Each config adds its dataset base (Cole et al.'s
# single-positive protocol, configs/_base_/datasets/) and its values of
# alpha and the learning rate.
#
# Sources ("paper": arXiv:2310.15985; "code": the official repository
# https://github.com/mvrl/VLPL, commit ed09b59, main_clip.py, models.py,
# losses.py, datasets.py):
# - ResNet-50 with torchvision's ImageNet weights (`pretrained=True`), a
#   linear 2048 x C classifier with PyTorch's default initialisation,
#   448x448 resize, random horizontal flip, ImageNet normalisation: code
#   (models.py, datasets.py; the published numbers are for this backbone).
# - Adam (default betas), no weight decay, one constant lr for all trained
#   parameters, batch 8 on every dataset, 10 epochs, the epoch with the
#   best mAP on the clean 20% validation split: code (main_clip.py; its
#   early stopping is commented out, so all 10 epochs run).
# - Loss `loss_EM_PL`, the code's default: VLPLLoss with the code's
#   beta_pos = 0.7, beta_neg = 0 and the 0.9 / 0.1 targets
#   (`smoothing=0.1`), alpha per dataset. `warmup_epoch` is 0 for every
#   dataset: the pseudo-labels count from the first iteration.
# - Loss scale: the code averages over the N x C elements; the head divides
#   the sum over classes by N, so each config's
#   `loss_weight = 1 / num_classes` gives the official magnitude that the
#   learning rate was tuned for.
# - The pseudo-labels: CLIP ViT-L/14 at 336 px, each image's cosine
#   similarities to the class-name embeddings through a softmax over the
#   classes with temperature 0.01, pseudo-positive where above 0.3 (code,
#   models.py), written into the label store by the pseudo-labeller (see
#   configs/vlpl/README.md).
# Deviations: no seed is fixed (the code seeds torch with its `-s`, 0 by
# default).
_base_ = [
    '../models/resnet50_multilabel.py',
    '../schedules/adam_10e.py',
    '../default_runtime.py',
]

model = dict(
    head=dict(
        type='PartialLabelLinearClsHead',
        loss=dict(
            _delete_=True,
            type='VLPLLoss',
            beta_pos=0.7,
            beta_neg=0.0,
            smoothing=0.1)))

train_cfg = dict(max_epochs=10)

# The pseudo-labeller that every config of configs/vlpl/ completes with its
# dataset's class text embeddings: CLIP ViT-L/14 at 336 px, its image
# encoder as MMPretrain builds it (pre-norm ViT, QuickGELU, LayerNorm
# epsilon 1e-5), converted for MMPretrain (configs/vlpl/README.md).
clip_labeller = dict(
    type='CLIPPseudoLabeller',
    image_encoder=dict(
        type='VisionTransformer',
        arch='large',
        img_size=336,
        patch_size=14,
        pre_norm=True,
        norm_cfg=dict(type='LN', eps=1e-5),
        layer_cfgs=dict(act_cfg=dict(type='QuickGELU'))),
    proj_dims=768,
    input_size=336,
    checkpoint='checkpoints/clip_vit-l-p14-336_openai_mmpretrain.pth')
