# ROLE (regularized online label estimation), single positive labels, MS-COCO
# 2014.
# Mirrors: Zhou et al. (ECCV 2022), Table 1, row "1 P. & 0 N. / ROLE", MS-COCO
#   2014: 67.04 +- 0.19 test mAP. Cole et al. report 66.3 for their own
#   end-to-end run (Kim et al., CVPR 2022, Table 1, end-to-end).
# Batch 16, lr 1e-5: chosen. Recipe, sources and shared choices:
#   configs/_base_/methods/baseline_role.py.
_base_ = [
    '../_base_/datasets/coco2014_single_positive.py',
    '../_base_/methods/baseline_role.py',
]

model = dict(
    head=dict(
        num_classes={{_base_.num_classes}},
        loss=dict(
            expected_positives={{_base_.expected_positives}},
            loss_weight=1 / 80),
        label_estimator=dict(
            num_samples={{_base_.num_train_samples}},
            num_classes={{_base_.num_classes}})))

train_dataloader = dict(batch_size=16)

optim_wrapper = dict(optimizer=dict(lr=1e-5))

auto_scale_lr = dict(base_batch_size=16)
