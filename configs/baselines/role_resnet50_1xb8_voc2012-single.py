# ROLE (regularized online label estimation), single positive labels, PASCAL
# VOC 2012.
# Mirrors: Zhou et al. (ECCV 2022), Table 1, row "1 P. & 0 N. / ROLE", PASCAL
#   VOC 2012: 87.77 +- 0.22 test mAP. Cole et al. report 87.9 for their own
#   end-to-end run (Kim et al., CVPR 2022, Table 1, end-to-end).
# Batch 8, lr 1e-5: chosen. Recipe, sources and shared choices:
#   configs/_base_/methods/baseline_role.py.
_base_ = [
    '../_base_/datasets/voc2012_single_positive.py',
    '../_base_/methods/baseline_role.py',
]

model = dict(
    head=dict(
        num_classes={{_base_.num_classes}},
        loss=dict(
            expected_positives={{_base_.expected_positives}},
            loss_weight=1 / 20),
        label_estimator=dict(
            num_samples={{_base_.num_train_samples}},
            num_classes={{_base_.num_classes}})))

train_dataloader = dict(batch_size=8)

optim_wrapper = dict(optimizer=dict(lr=1e-5))

auto_scale_lr = dict(base_batch_size=8)
