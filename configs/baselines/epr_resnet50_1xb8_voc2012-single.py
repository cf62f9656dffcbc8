# EPR (expected positive regularisation), single positive labels, PASCAL VOC
# 2012.
# Mirrors: Cole et al. (CVPR 2021), end-to-end EPR: 85.5 test mAP, as tabulated
#   in Kim et al. (CVPR 2022), Table 1, end-to-end. The LASD paper (Table 2)
#   reports 85.15 +- 0.58 for its own runs of Cole et al.'s code.
# Batch 8, lr 1e-5: chosen. Recipe, sources and shared choices:
#   configs/_base_/methods/baseline_epr.py.
_base_ = [
    '../_base_/datasets/voc2012_single_positive.py',
    '../_base_/methods/baseline_epr.py',
]

model = dict(
    head=dict(
        num_classes={{_base_.num_classes}},
        loss=dict(
            expected_positives={{_base_.expected_positives}},
            loss_weight=1 / 20)))

train_dataloader = dict(batch_size=8)

optim_wrapper = dict(optimizer=dict(lr=1e-5))

auto_scale_lr = dict(base_batch_size=8)
