# EM loss (Zhou et al., "Acknowledging the Unknown for Multi-label Learning
# with Single Positive Labels", ECCV 2022): what every dataset's EM config
# of configs/em_apl/ shares (the EM + APL recipe, ./em_apl.py, builds on it).
# Each config adds its dataset base (Cole et al.'s single-positive
# protocol, configs/_base_/datasets/) and its values of alpha, batch size
# and lr.
#
# Sources ("paper": the ECCV 2022 paper, arXiv:2203.16219; "code": the
# official repository https://github.com/Correr-Zhou/SPML-AckTheUnknown,
# main.py, losses.py, datasets.py):
# - ResNet-50 pretrained on ImageNet, global average pooling, a linear
#   2048 x C classifier, 448x448 resize, random horizontal flip (p = 0.5),
#   Adam, 10 epochs, best epoch by validation mAP, early stopping: paper
#   Sec. 4.1 ("Implementation Details"); ImageNet normalisation, clean
#   labels on the 20% validation split: code (datasets.py, main.py).
# - alpha (each config): paper Table 6 (Appendix B.2); the code uses the
#   same value for EM alone and for EM + APL.
# - Batch size and lr (each config): code (main.py; the paper only gives
#   the grid {8, 16} x {1e-2, 1e-3, 1e-4, 1e-5}). Adam's default betas, no
#   weight decay, one lr for all parameters, constant lr: code. 1 GPU x
#   that batch (each config's `auto_scale_lr.base_batch_size`, the code's
#   setup); `--auto-scale-lr` scales the learning rate to another total
#   batch size.
# - Loss scale: the code averages the loss over the N x C elements; the
#   head divides the sum over classes by N, so each config's
#   `loss_weight = 1 / num_classes` gives the official magnitude that the
#   learning rate was tuned for. The code's eps 1e-5 inside the logs is not
#   reproduced (see the EMLoss docstring).
# - Early stopping: the code stops at the first epoch whose validation mAP
#   is not above the best so far and keeps the best epoch; EarlyStoppingHook
#   (patience 1, min_delta 0) and the best checkpoint do the same (the
#   code also stops on an exact tie, this hook does not).
# - Thresholded metrics: the authors evaluate EM at threshold 0.75 (code
#   README, "Usage Tips", citing the paper's Appendix E); each config adds
#   the metrics at 0.75 (CP/CR/CF1/OP/OR/OF1) to the dataset base's at 0.5
#   (`_base_.val_evaluator + [...]`: a recipe cannot set the evaluators,
#   which the dataset base sets). The published figure is the mAP.
# Deviations and choices: no seed is fixed (the paper names none; the
# code seeds torch with 0, and 1 and 8 for the other runs:
# `--cfg-options randomness.seed=0` seeds this framework, not bit for bit
# like the code).
_base_ = [
    '../models/resnet50_multilabel.py',
    '../schedules/adam_10e.py',
    '../default_runtime.py',
]

model = dict(head=dict(loss=dict(_delete_=True, type='EMLoss')))

# The schedule's Adam (default betas, no weight decay, one constant lr).
train_cfg = dict(max_epochs=10)

# Stop once the validation mAP does not improve (paper Sec. 4.1, code).
early_stopping = dict(
    type='EarlyStoppingHook',
    monitor='multi-label/mAP',
    rule='greater',
    min_delta=0.,
    patience=1)
custom_hooks = [early_stopping]
