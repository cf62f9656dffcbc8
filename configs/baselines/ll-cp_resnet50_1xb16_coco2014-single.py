# LL-Cp (Large Loss Matters, permanent correction), single positive labels,
# MS-COCO 2014.
# Mirrors: Kim et al. (CVPR 2022), Table 1, row "LL-Cp (Ours)", end-to-end,
#   MS-COCO 2014: 70.7 test mAP (the LASD paper, Table 2, tabulates
#   70.74 +- 0.08).
# delta = 0.2% per batch; Adam, lr 1e-5 (METHODS.md "Baselines", Kim et al.'s
#   MS-COCO 2014 setting). Recipe, sources and shared choices:
#   configs/_base_/methods/baseline_large_loss.py.
_base_ = [
    '../_base_/datasets/coco2014_single_positive.py',
    '../_base_/methods/baseline_large_loss.py',
]

model = dict(
    head=dict(
        type='PartialLabelLinearClsHead',
        num_classes={{_base_.num_classes}},
        loss=dict(mode='permanent', delta_rel=0.002, loss_weight=1 / 80)))

train_dataloader = dict(batch_size=16)

optim_wrapper = dict(optimizer=dict(lr=1e-5))

custom_hooks = [dict(type='LargeLossCorrectionHook')]

auto_scale_lr = dict(base_batch_size=16)
