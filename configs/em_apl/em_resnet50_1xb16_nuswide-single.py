# EM loss (Zhou et al., ECCV 2022) on NUS-WIDE with single positive
# labels. Mirrors Table 1, row "EM loss" (1 P. & 0 N.), column NUS: test mAP
# 47.15 +- 0.11 (mean of 3 runs).
# alpha = 0.1 (paper Table 6, Appendix B.2); batch 16, lr 1e-5 (code, main.py);
# loss_weight = 1 / num_classes (1 / 81).
# Data: the authors use the images of the official NUS-WIDE release
# (Flickr.zip) instead of Cole et al.'s 2020 re-crawl (paper footnote 7,
# code README), with formatted arrays of the same layout and size
# (150,000 / 60,260 rows, paper Appendix B.1). The dataset base reads either
# copy (`ann_format='cole'`); put the authors' arrays in data/nuswide to
# mirror the paper.
# The recipe, sources and shared choices: configs/_base_/methods/em_loss.py.
_base_ = [
    '../_base_/datasets/nus_wide_single_positive.py',
    '../_base_/methods/em_loss.py',
]

model = dict(
    head=dict(
        num_classes={{_base_.num_classes}},
        loss=dict(alpha=0.1, loss_weight=1 / 81)))
train_dataloader = dict(batch_size=16)
optim_wrapper = dict(optimizer=dict(lr=1e-5))
auto_scale_lr = dict(base_batch_size=16)

val_evaluator = _base_.val_evaluator + [
    dict(type='MultiLabelF1Metric', thr=0.75)  # the authors' threshold
]
test_evaluator = val_evaluator
