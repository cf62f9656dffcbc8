# EM loss + APL (Zhou et al., ECCV 2022) on the 312 attributes of
# CUB-200-2011 with single positive labels. Mirrors Table 1, row
# "EM loss+APL" (1 P. & 0 N.), column CUB: test mAP 21.84 +- 0.34 (mean of
# 3 runs).
# alpha = 0.01, beta = 0.4, T_w = 3: paper Table 6 (Appendix B.2) and code;
# batch 8, lr 1e-4: the EM config of this dataset (code, main.py);
# loss_weight = 1 / num_classes (1 / 312).
# The recipe, sources and shared choices: configs/_base_/methods/em_apl.py.
_base_ = [
    '../_base_/datasets/cub_single_positive.py',
    '../_base_/methods/em_apl.py',
]

model = dict(
    head=dict(
        num_classes={{_base_.num_classes}},
        loss=dict(alpha=0.01, beta=0.4, loss_weight=1 / 312)))
train_dataloader = dict(batch_size=8)
optim_wrapper = dict(optimizer=dict(lr=1e-4))
auto_scale_lr = dict(base_batch_size=8)

custom_hooks = [
    {{_base_.early_stopping}},
    dict(type='APLHook', warmup_epochs=3, theta=0.9, extra_pass=True),
]

val_evaluator = _base_.val_evaluator + [
    dict(type='MultiLabelF1Metric', thr=0.75)  # the authors' threshold
]
test_evaluator = val_evaluator
