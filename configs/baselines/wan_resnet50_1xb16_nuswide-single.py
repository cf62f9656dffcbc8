# WAN (weak assume negative), single positive labels, NUS-WIDE.
# Mirrors: Cole et al. (CVPR 2021), end-to-end WAN: 46.3 test mAP, as tabulated
#   in Kim et al. (CVPR 2022), Table 1, end-to-end.
# Batch 16, lr 1e-5: chosen. neg_weight=None: 1/(C-1) = 1/80. Recipe, sources
#   and shared choices: configs/_base_/methods/baseline_wan.py.
_base_ = [
    '../_base_/datasets/nus_wide_single_positive.py',
    '../_base_/methods/baseline_wan.py',
]

model = dict(
    head=dict(
        num_classes={{_base_.num_classes}}, loss=dict(loss_weight=1 / 81)))

train_dataloader = dict(batch_size=16)

optim_wrapper = dict(optimizer=dict(lr=1e-5))

auto_scale_lr = dict(base_batch_size=16)
