# EPR (expected positive regularisation), single positive labels, MS-COCO 2014.
# Mirrors: Cole et al. (CVPR 2021), end-to-end EPR: 63.3 test mAP, as tabulated
#   in Kim et al. (CVPR 2022), Table 1, end-to-end. The LASD paper (Table 2)
#   reports 63.94 +- 0.12 for its own runs of Cole et al.'s code.
# Batch 16, lr 1e-5: chosen. Recipe, sources and shared choices:
#   configs/_base_/methods/baseline_epr.py.
_base_ = [
    '../_base_/datasets/coco2014_single_positive.py',
    '../_base_/methods/baseline_epr.py',
]

model = dict(
    head=dict(
        num_classes={{_base_.num_classes}},
        loss=dict(
            expected_positives={{_base_.expected_positives}},
            loss_weight=1 / 80)))

train_dataloader = dict(batch_size=16)

optim_wrapper = dict(optimizer=dict(lr=1e-5))

auto_scale_lr = dict(base_batch_size=16)
