# EM loss + APL (Zhou et al., ECCV 2022) on PASCAL VOC 2012 with single
# positive labels. Mirrors Table 1, row "EM loss+APL" (1 P. & 0 N.), column
# VOC: test mAP 89.19 +- 0.31 (mean of 3 runs).
# alpha = 0.2, beta = 0.02, T_w = 5: paper Table 6 (Appendix B.2) and code;
# batch 8, lr 1e-5: the EM config of this dataset (code, main.py);
# loss_weight = 1 / num_classes (1 / 20).
# The recipe, sources and shared choices: configs/_base_/methods/em_apl.py.
_base_ = [
    '../_base_/datasets/voc2012_single_positive.py',
    '../_base_/methods/em_apl.py',
]

model = dict(
    head=dict(
        num_classes={{_base_.num_classes}},
        loss=dict(alpha=0.2, beta=0.02, loss_weight=1 / 20)))
train_dataloader = dict(batch_size=8)
optim_wrapper = dict(optimizer=dict(lr=1e-5))
auto_scale_lr = dict(base_batch_size=8)

custom_hooks = [
    {{_base_.early_stopping}},
    dict(type='APLHook', warmup_epochs=5, theta=0.9, extra_pass=True),
]

val_evaluator = _base_.val_evaluator + [
    dict(type='MultiLabelF1Metric', thr=0.75)  # the authors' threshold
]
test_evaluator = val_evaluator
