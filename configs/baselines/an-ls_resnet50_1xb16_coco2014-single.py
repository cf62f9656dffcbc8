# AN-LS (assume negative with label smoothing), single positive labels, MS-COCO
# 2014.
# Mirrors: Zhou et al. (ECCV 2022), Table 1, row "1 P. & 0 N. / LS", MS-COCO
#   2014: 67.15 +- 0.13 test mAP. Cole et al. report 66.9 (Kim et al., CVPR
#   2022, Table 1, end-to-end, row "LSAN").
# Batch 16, lr 1e-5: chosen. Recipe, sources and shared choices:
#   configs/_base_/methods/baseline_an_ls.py.
_base_ = [
    '../_base_/datasets/coco2014_single_positive.py',
    '../_base_/methods/baseline_an_ls.py',
]

model = dict(
    head=dict(
        num_classes={{_base_.num_classes}}, loss=dict(loss_weight=1 / 80)))

train_dataloader = dict(batch_size=16)

optim_wrapper = dict(optimizer=dict(lr=1e-5))

auto_scale_lr = dict(base_batch_size=16)
