# AEVLP (Tran et al., "More Reliable Pseudo-labels, Better Performance: A
# Generalized Approach to Single Positive Multi-label Learning", ICCV
# 2025): what every dataset's config of configs/aevlp/ shares. Each config
# adds its dataset base (Cole et al.'s single-positive protocol,
# configs/_base_/datasets/) and its values of configs/*.json of the code.
#
# Sources ("paper": arXiv:2508.20381; "code": the official repository
# https://github.com/Fsoft-AIC/AEVLP, commit 0bad82a, train.py, models.py,
# losses.py, utils.py, datasets.py, configs/{pascal,coco,nuswide,cub}.json):
# - ResNet-50 with torchvision's ImageNet weights (`pretrained=True`),
#   global average pooling, a linear 2048 x C classifier with PyTorch's
#   default initialisation, 448x448 resize, random horizontal flip,
#   ImageNet normalisation: code (models.py, datasets.py).
# - Adam (default betas), no weight decay, constant lr 1e-5, lr x10 on the
#   linear classifier (`lr_mult`): code (train.py, configs/*.json).
# - Per dataset (each config): batch size, epochs, beta = (w_0, w_T, b_0,
#   b_T), q3, lam, reg: configs/*.json. The same on all four: q2 = 0.01,
#   alpha = (mu_0, sigma_0, mu_T, sigma_T) = (0.5, 2, 0.8, 0.5),
#   rho = 0.9; the expected number of positives is Cole et al.'s (the
#   dataset base's `expected_positives`, the code's `expected_num_pos`).
# - The (w, b) and (mu, sigma) schedules are GR Loss's official ones (the
#   same formulas in train.py; `schedule='official'`); T is
#   `train_cfg.max_epochs`, no linear initialisation (`linear_init` 0).
# - Loss scale: the code's `loss_mtx.mean()` plus the regulariser; each
#   config's `loss_weight = 1 / num_classes` gives it with the head's
#   sum over classes / N (the regulariser is spread over the N x C
#   elements, see GPRLoss).
# - Model selection: the epoch with the best mAP on the clean 20%
#   validation split. Early stopping after 2 epochs without improvement:
#   code (train.py); its other rule, stopping when the mAP falls more than
#   2 points below the best, is not reproduced, and MMEngine's hook does
#   not count an exact tie as a failure to improve.
# - The pseudo-labels: DAMP (CLIP on the whole image and a grid of tiles),
#   written into the label store by the pseudo-labeller, see
#   configs/aevlp/README.md.
# Deviations: no seed is fixed (the code fixes numpy's only).
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
            type='GPRLoss',
            q2=0.01,
            alpha=(0.5, 2, 0.8, 0.5),  # (mu_0, sigma_0, mu_T, sigma_T)
            rho=0.9)))

# The schedule's Adam (default betas, no weight decay, constant lr), with
# lr x10 on the head.
optim_wrapper = dict(
    optimizer=dict(lr=1e-5),
    paramwise_cfg=dict(custom_keys={'head': dict(lr_mult=10)}))

# Stop after two epochs without a better validation mAP (code, train.py).
early_stopping = dict(
    type='EarlyStoppingHook',
    monitor='multi-label/mAP',
    rule='greater',
    min_delta=0.,
    patience=2)
custom_hooks = [early_stopping]

# The pseudo-labeller that every config of configs/aevlp/ completes with its
# dataset's class text embeddings, tiles and eta: CLIP ViT-B/16 at 224 px,
# its image encoder as MMPretrain builds it (pre-norm ViT, QuickGELU,
# LayerNorm epsilon 1e-5), converted for MMPretrain
# (configs/aevlp/README.md), tile scores combined as AEVLP does.
clip_labeller = dict(
    type='CLIPPseudoLabeller',
    image_encoder=dict(
        type='VisionTransformer',
        arch='base',
        img_size=224,
        patch_size=16,
        pre_norm=True,
        norm_cfg=dict(type='LN', eps=1e-5),
        layer_cfgs=dict(act_cfg=dict(type='QuickGELU'))),
    proj_dims=512,
    input_size=224,
    checkpoint='checkpoints/clip_vit-b-p16_openai_mmpretrain.pth',
    tile_combine='aevlp')
