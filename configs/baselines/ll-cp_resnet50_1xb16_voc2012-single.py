# LL-Cp (Large Loss Matters, permanent correction), single positive labels,
# PASCAL VOC 2012.
# Mirrors: Kim et al. (CVPR 2022), Table 1, row "LL-Cp (Ours)", end-to-end,
#   PASCAL VOC 2012: 88.4 test mAP (the LASD paper, Table 2, tabulates
#   88.40 +- 0.24).
# delta = 0.1% per batch; SGD, lr 5e-3 (METHODS.md "Baselines", Kim et al.'s
#   VOC setting). Recipe, sources and shared choices:
#   configs/_base_/methods/baseline_large_loss_sgd.py.
_base_ = [
    '../_base_/datasets/voc2012_single_positive.py',
    '../_base_/methods/baseline_large_loss_sgd.py',
]

model = dict(
    head=dict(
        type='PartialLabelLinearClsHead',
        num_classes={{_base_.num_classes}},
        loss=dict(mode='permanent', delta_rel=0.001, loss_weight=1 / 20)))

train_dataloader = dict(batch_size=16)

optim_wrapper = dict(optimizer=dict(lr=5e-3))

custom_hooks = [dict(type='LargeLossCorrectionHook')]

auto_scale_lr = dict(base_batch_size=16)
