# LL-R (Large Loss Matters, rejection), single positive labels, MS-COCO 2014.
# Mirrors: Kim et al. (CVPR 2022), Table 1, row "LL-R (Ours)", end-to-end,
#   MS-COCO 2014: 71.0 test mAP (the LASD paper, Table 2, tabulates
#   71.02 +- 0.09).
# delta = 0.4% per epoch; Adam, lr 1e-5 (METHODS.md "Baselines", Kim et al.'s
#   MS-COCO 2014 setting). Recipe, sources and shared choices:
#   configs/_base_/methods/baseline_large_loss.py.
_base_ = [
    '../_base_/datasets/coco2014_single_positive.py',
    '../_base_/methods/baseline_large_loss.py',
]

model = dict(
    head=dict(
        num_classes={{_base_.num_classes}},
        loss=dict(mode='rejection', delta_rel=0.004, loss_weight=1 / 80)))

train_dataloader = dict(batch_size=16)

optim_wrapper = dict(optimizer=dict(lr=1e-5))

auto_scale_lr = dict(base_batch_size=16)
