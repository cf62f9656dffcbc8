# WAN (weak assume negative), single positive labels, CUB-200-2011.
# Mirrors: Cole et al. (CVPR 2021), end-to-end WAN: 20.3 test mAP, as tabulated
#   in Kim et al. (CVPR 2022), Table 1, end-to-end.
# Batch 8, lr 1e-4: chosen. neg_weight=None: 1/(C-1) = 1/311. Recipe, sources
#   and shared choices: configs/_base_/methods/baseline_wan.py.
_base_ = [
    '../_base_/datasets/cub_single_positive.py',
    '../_base_/methods/baseline_wan.py',
]

model = dict(
    head=dict(
        num_classes={{_base_.num_classes}}, loss=dict(loss_weight=1 / 312)))

train_dataloader = dict(batch_size=8)

optim_wrapper = dict(optimizer=dict(lr=1e-4))

auto_scale_lr = dict(base_batch_size=8)
