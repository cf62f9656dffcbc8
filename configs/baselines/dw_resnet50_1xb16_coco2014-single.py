# DW (AN with down-weighted assumed negatives, weight tuned per dataset),
# single positive labels, MS-COCO 2014.
# Mirrors: Zhou et al. (ECCV 2022), Table 1, row "1 P. & 0 N. / DW", MS-COCO
#   2014: 67.59 +- 0.11 test mAP.
# Batch 16, lr 1e-5: chosen. neg_weight 0.1 (Zhou et al., supplementary B.2).
#   Recipe, sources and shared choices: configs/_base_/methods/baseline_dw.py.
_base_ = [
    '../_base_/datasets/coco2014_single_positive.py',
    '../_base_/methods/baseline_dw.py',
]

model = dict(
    head=dict(
        num_classes={{_base_.num_classes}},
        loss=dict(neg_weight=0.1, loss_weight=1 / 80)))

train_dataloader = dict(batch_size=16)

optim_wrapper = dict(optimizer=dict(lr=1e-5))

auto_scale_lr = dict(base_batch_size=16)
