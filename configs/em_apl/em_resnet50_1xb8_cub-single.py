# EM loss (Zhou et al., ECCV 2022) on the 312 attributes of CUB-200-2011
# with single positive labels. Mirrors Table 1, row "EM loss" (1 P. & 0 N.),
# column CUB: test mAP 20.85 +- 0.42 (mean of 3 runs).
# alpha = 0.01 (paper Table 6, Appendix B.2); batch 8, lr 1e-4 (code, main.py);
# loss_weight = 1 / num_classes (1 / 312).
# The recipe, sources and shared choices: configs/_base_/methods/em_loss.py.
_base_ = [
    '../_base_/datasets/cub_single_positive.py',
    '../_base_/methods/em_loss.py',
]

model = dict(
    head=dict(
        num_classes={{_base_.num_classes}},
        loss=dict(alpha=0.01, loss_weight=1 / 312)))
train_dataloader = dict(batch_size=8)
optim_wrapper = dict(optimizer=dict(lr=1e-4))
auto_scale_lr = dict(base_batch_size=8)

val_evaluator = _base_.val_evaluator + [
    dict(type='MultiLabelF1Metric', thr=0.75)  # the authors' threshold
]
test_evaluator = val_evaluator
