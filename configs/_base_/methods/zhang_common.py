# The losses of Zhang et al., "Simple and Robust Loss Design for Multi-Label
# Learning with Missing Labels" (Hill / SPLC / Focal margin), arXiv:2112.07368,
# 2021; official code xinyu1205/robust-loss-mlml: what every config of
# configs/hill_splc/ shares, whatever its loss. The recipe of each loss
# (./zhang_bce.py, ./zhang_focal.py, ./zhang_asl.py, ./zhang_hill.py,
# ./zhang_splc.py, ./zhang_focal_margin.py) builds on this one; each config
# adds its dataset base (Zhang et al.'s missing-label protocol,
# configs/_base_/datasets/*_missing_labels.py).
#
# Recipe (Sec. IV-A and the official train.py): the bases, which document
# each choice and deviation: ResNet-50 with torchvision's V1 weights, 448 x
# 448, Cutout + RandAugment, no normalisation, batch 128, Adam 1e-4 with
# coupled L2 1e-4 on weights, OneCycle over 80 epochs stopped after 31, beta1
# cycling, AMP, EMA 0.9997 (the learning rate, the 31 epochs and
# `auto_scale_lr.base_batch_size=128` are the schedule's, the batch of 128
# the dataset base's). The published number is the best test mAP over the
# epochs (validation set = test set, as in the official code); the best
# checkpoint here is the EMA model's, the official code takes the better of
# the EMA and the regular model.
# NUS-WIDE is in the official code: its train_nus.py repeats train.py's
# recipe (the same arguments and defaults; only the data loading and the 81
# classes differ) and tests on the list dataset/nus_val.txt. VOC and
# OpenImages are not: the COCO recipe is assumed for them (Sec. IV-D: the
# hyperparameters found on COCO-40% are shared by all datasets).
_base_ = [
    '../models/resnet50_multilabel.py',
    '../schedules/adam_onecycle_80e.py',
    '../default_runtime.py',
]

# Loss scale: the official losses sum over the N x C batch; MMPretrain's head
# divides the class-summed loss by N (avg_factor), so loss_weight = 128, the
# batch size, restores the official sum (checked against the official
# implementation: same value and gradients). Keep 128 when the 128 images are
# split over GPUs (e.g. 8 x 16): DDP averages the ranks' gradients, which
# again gives the sum over the 128 images. Each loss's recipe adds its type
# and arguments.
model = dict(head=dict(loss=dict(_delete_=True, loss_weight=128.)))
