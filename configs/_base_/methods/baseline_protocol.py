# The baselines of configs/baselines/ on Cole et al.'s single-positive
# protocol: what every one of their configs shares. Each method's recipe
# builds on this one: ./baseline_an.py (AN and the full-label oracle),
# ./baseline_an_ls.py, ./baseline_dw.py and ./baseline_role.py (through
# ./baseline_early_stopping.py), ./baseline_wan.py, ./baseline_epr.py and
# ./baseline_large_loss.py (LL-R, LL-Ct, LL-Cp). Each config adds its
# dataset base (configs/_base_/datasets/) and its per-dataset values: the
# number of classes, the loss's per-dataset arguments, batch size and lr.
#
# Sources: Cole et al., "Multi-Label Learning from Single Positive Labels",
# CVPR 2021 (the protocol, AN, WAN, AN-LS, EPR, ROLE); Zhou et al.,
# "Acknowledging the Unknown for Multi-label Learning with Single Positive
# Labels", ECCV 2022 (Table 1: the numbers of full labels, AN, DW, AN-LS and
# ROLE that the configs mirror; official code Correr-Zhou/SPML-AckTheUnknown,
# "the EM authors' code"); Kim et al., "Large Loss Matters in Weakly
# Supervised Multi-Label Classification", CVPR 2022 (LL-R, LL-Ct, LL-Cp;
# its Table 1, end-to-end, also lists Cole et al.'s own numbers: the table
# is in the README of snucml/LargeLossMatters).
# - Protocol (shared bases): ResNet-50 with torchvision's V1 ImageNet
#   weights, 448x448 resize, horizontal flip, ImageNet normalisation, Cole et
#   al.'s labels (seed 1200) and 80/20 split with clean validation labels, 10
#   epochs, validation after each; the checkpoint of the epoch with the best
#   validation mAP is tested.
# - Adam (betas 0.9, 0.999), no weight decay, constant learning rate, as in
#   Cole et al.'s code and every paper of the protocol (the Large Loss
#   configs take Kim et al.'s settings instead: ./baseline_large_loss.py).
# - Batch size and lr of full labels, AN, WAN, DW, AN-LS, EPR and ROLE (each
#   config: batch 8 / 16 / 16 / 8 and lr 1e-5 / 1e-5 / 1e-5 / 1e-4 for VOC /
#   COCO / NUS-WIDE / CUB): the EM authors' official code
#   (Correr-Zhou/SPML-AckTheUnknown, main.py) trains AN and full-label BCE
#   with these per-dataset values (the paper grid-searched batch {8, 16} x lr
#   {1e-2, 1e-3, 1e-4, 1e-5} and does not print its pick). For WAN, DW,
#   AN-LS, EPR and ROLE they are chosen (each config says so): the papers
#   grid-searched batch {8, 16} x lr {1e-2, 1e-3, 1e-4, 1e-5} per method and
#   dataset, and the picks are in none of the texts we have; we take the
#   per-dataset values of the EM authors' official code, which trains AN and
#   full-label BCE with them, on the same protocol.
# - Model selection as Cole et al.'s code: the best of the 10 epochs by
#   validation mAP (no early stopping); the recipes of the configs that
#   mirror Zhou et al.'s numbers add their early stopping
#   (./baseline_early_stopping.py).
# - Loss scale: the official code averages the loss over the N x C entries
#   of the batch; the head sums over classes and divides by N, so each
#   config's loss_weight=1/C gives the official value.
# - One GPU x each config's batch (its auto_scale_lr.base_batch_size); on
#   more GPUs, --auto-scale-lr scales the learning rate with the total batch
#   size.
# - Seed: none (randomness.seed=None), as Cole et al.'s code, which does not
#   seed torch (Zhou et al.'s seeds: ./baseline_early_stopping.py).
_base_ = [
    '../models/resnet50_multilabel.py',
    '../schedules/adam_10e.py',
    '../default_runtime.py',
]

train_cfg = dict(max_epochs=10)
