# AN-LS (assume negative with label smoothing), single positive labels,
# CUB-200-2011.
# Mirrors: Zhou et al. (ECCV 2022), Table 1, row "1 P. & 0 N. / LS",
#   CUB-200-2011: 16.26 +- 0.45 test mAP. Cole et al. report 17.9 (Kim et al.,
#   CVPR 2022, Table 1, end-to-end, row "LSAN").
# Batch 8, lr 1e-4: chosen. Recipe, sources and shared choices:
#   configs/_base_/methods/baseline_an_ls.py.
_base_ = [
    '../_base_/datasets/cub_single_positive.py',
    '../_base_/methods/baseline_an_ls.py',
]

model = dict(
    head=dict(
        num_classes={{_base_.num_classes}}, loss=dict(loss_weight=1 / 312)))

train_dataloader = dict(batch_size=8)

optim_wrapper = dict(optimizer=dict(lr=1e-4))

auto_scale_lr = dict(base_batch_size=8)
