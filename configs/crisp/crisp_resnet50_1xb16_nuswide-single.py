# CRISP (Liu, Xu, Wang and Geng, "Can Class-Priors Help Single-Positive
# Multi-Label Learning?", arXiv:2309.13886) on NUS-WIDE with single positive
# labels. Mirrors Table 1, row "CRISP", column NUS: test mAP 50.00 (mean of
# 5 trials).
# delta = tau = 0.01 and the AN warm-up: paper (Appendix A.6); batch 16, lr
# 1e-5, weight decay 1e-5 and one warm-up epoch are chosen (the paper picks
# them on validation data and prints no pick).
# The recipe, sources and choices: configs/_base_/methods/crisp.py.
_base_ = [
    '../_base_/datasets/nus_wide_single_positive.py',
    '../_base_/methods/crisp.py',
]

model = dict(head=dict(num_classes={{_base_.num_classes}}))
train_dataloader = dict(batch_size=16)
optim_wrapper = dict(optimizer=dict(lr=1e-5))
auto_scale_lr = dict(base_batch_size=16)
