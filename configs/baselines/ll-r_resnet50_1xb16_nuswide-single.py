# LL-R (Large Loss Matters, rejection), single positive labels, NUS-WIDE.
# Mirrors: Kim et al. (CVPR 2022), Table 1, row "LL-R (Ours)", end-to-end,
#   NUS-WIDE: 47.4 test mAP (the LASD paper, Table 2, tabulates 47.44 +- 0.28).
# delta = 0.4% per epoch; Adam, lr 1e-5 (METHODS.md "Baselines", Kim et al.'s
#   NUS-WIDE setting). Recipe, sources and shared choices:
#   configs/_base_/methods/baseline_large_loss.py.
_base_ = [
    '../_base_/datasets/nus_wide_single_positive.py',
    '../_base_/methods/baseline_large_loss.py',
]

model = dict(
    head=dict(
        num_classes={{_base_.num_classes}},
        loss=dict(mode='rejection', delta_rel=0.004, loss_weight=1 / 81)))

train_dataloader = dict(batch_size=16)

optim_wrapper = dict(optimizer=dict(lr=1e-5))

auto_scale_lr = dict(base_batch_size=16)
