# LL-Ct (Large Loss Matters, temporary correction), single positive labels,
# CUB-200-2011.
# Mirrors: Kim et al. (CVPR 2022), Table 1, row "LL-Ct (Ours)", end-to-end,
#   CUB-200-2011: 20.4 test mAP (the LASD paper, Table 2, tabulates
#   20.43 +- 0.38).
# delta = 0.4% per epoch; Adam, lr 7.5e-5 (METHODS.md "Baselines", Kim et al.'s
#   CUB-200-2011 setting). Recipe, sources and shared choices:
#   configs/_base_/methods/baseline_large_loss.py.
_base_ = [
    '../_base_/datasets/cub_single_positive.py',
    '../_base_/methods/baseline_large_loss.py',
]

model = dict(
    head=dict(
        num_classes={{_base_.num_classes}},
        loss=dict(mode='temporary', delta_rel=0.004, loss_weight=1 / 312)))

train_dataloader = dict(batch_size=16)

optim_wrapper = dict(optimizer=dict(lr=7.5e-5))

auto_scale_lr = dict(base_batch_size=16)
