# EM loss + APL (Zhou et al., ECCV 2022) on MS-COCO 2014 with single positive
# labels. Mirrors Table 1, row "EM loss+APL" (1 P. & 0 N.), column COCO: test
# mAP 70.87 +- 0.23 (mean of 3 runs).
# alpha = 0.1, beta = 0.9, T_w = 5: paper Table 6 (Appendix B.2) and code;
# batch 16, lr 1e-5: the EM config of this dataset (code, main.py);
# loss_weight = 1 / num_classes (1 / 80).
# The recipe, sources and shared choices: configs/_base_/methods/em_apl.py.
_base_ = [
    '../_base_/datasets/coco2014_single_positive.py',
    '../_base_/methods/em_apl.py',
]

model = dict(
    head=dict(
        num_classes={{_base_.num_classes}},
        loss=dict(alpha=0.1, beta=0.9, loss_weight=1 / 80)))
train_dataloader = dict(batch_size=16)
optim_wrapper = dict(optimizer=dict(lr=1e-5))
auto_scale_lr = dict(base_batch_size=16)

custom_hooks = [
    {{_base_.early_stopping}},
    dict(type='APLHook', warmup_epochs=5, theta=0.9, extra_pass=True),
]

val_evaluator = _base_.val_evaluator + [
    dict(type='MultiLabelF1Metric', thr=0.75)  # the authors' threshold
]
test_evaluator = val_evaluator
