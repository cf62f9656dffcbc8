# DW (AN with down-weighted assumed negatives, weight tuned per dataset),
# single positive labels, PASCAL VOC 2012.
# Mirrors: Zhou et al. (ECCV 2022), Table 1, row "1 P. & 0 N. / DW", PASCAL VOC
#   2012: 86.98 +- 0.36 test mAP.
# Batch 8, lr 1e-5: chosen. neg_weight 0.1 (Zhou et al., supplementary B.2).
#   Recipe, sources and shared choices: configs/_base_/methods/baseline_dw.py.
_base_ = [
    '../_base_/datasets/voc2012_single_positive.py',
    '../_base_/methods/baseline_dw.py',
]

model = dict(
    head=dict(
        num_classes={{_base_.num_classes}},
        loss=dict(neg_weight=0.1, loss_weight=1 / 20)))

train_dataloader = dict(batch_size=8)

optim_wrapper = dict(optimizer=dict(lr=1e-5))

auto_scale_lr = dict(base_batch_size=8)
