# AN-LS (assume negative with label smoothing), single positive labels, PASCAL
# VOC 2012.
# Mirrors: Zhou et al. (ECCV 2022), Table 1, row "1 P. & 0 N. / LS", PASCAL VOC
#   2012: 87.90 +- 0.21 test mAP. Cole et al. report 86.7 (Kim et al., CVPR
#   2022, Table 1, end-to-end, row "LSAN").
# Batch 8, lr 1e-5: chosen. Recipe, sources and shared choices:
#   configs/_base_/methods/baseline_an_ls.py.
_base_ = [
    '../_base_/datasets/voc2012_single_positive.py',
    '../_base_/methods/baseline_an_ls.py',
]

model = dict(
    head=dict(
        num_classes={{_base_.num_classes}}, loss=dict(loss_weight=1 / 20)))

train_dataloader = dict(batch_size=8)

optim_wrapper = dict(optimizer=dict(lr=1e-5))

auto_scale_lr = dict(base_batch_size=8)
