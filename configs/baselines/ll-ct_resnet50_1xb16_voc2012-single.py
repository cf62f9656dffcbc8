# LL-Ct (Large Loss Matters, temporary correction), single positive labels,
# PASCAL VOC 2012.
# Mirrors: the LASD paper, Table 2, row "L_LL-Ct", column VOC12: 89.06 +-
#   0.17 test mAP, the printed value of Kim et al.'s result (CVPR 2022,
#   Table 1, row "LL-Ct (Ours)", end-to-end, PASCAL VOC 2012, where we read
#   89.0).
# delta = 0.2% per epoch; SGD, lr 5e-3 (METHODS.md "Baselines", Kim et al.'s
#   VOC setting). Recipe, sources and shared choices:
#   configs/_base_/methods/baseline_large_loss_sgd.py.
_base_ = [
    '../_base_/datasets/voc2012_single_positive.py',
    '../_base_/methods/baseline_large_loss_sgd.py',
]

model = dict(
    head=dict(
        num_classes={{_base_.num_classes}},
        loss=dict(mode='temporary', delta_rel=0.002, loss_weight=1 / 20)))

train_dataloader = dict(batch_size=16)

optim_wrapper = dict(optimizer=dict(lr=5e-3))

auto_scale_lr = dict(base_batch_size=16)
