# GR Loss (Chen et al., IJCAI 2024) on the 312 attributes of CUB-200-2011
# with single positive labels. Mirrors Table 2, row "GR Loss (ours)", column
# CUB: test mAP 21.64 +- 0.32.
# Paper Table 6 (Appendix E.2): batch 8, lr 5e-5, T = 10 epochs, q3 = 1.5,
# beta_T = (w_T, b_T) = (10, -8); loss_weight = 1 / num_classes (1 / 312).
# The recipe, sources and shared choices: configs/_base_/methods/gr_loss.py.
_base_ = [
    '../_base_/datasets/cub_single_positive.py',
    '../_base_/methods/gr_loss.py',
]

model = dict(
    head=dict(
        num_classes={{_base_.num_classes}},
        # beta = (w_0, w_T, b_0, b_T); q2 and alpha: the recipe.
        loss=dict(q3=1.5, beta=(0, 10, -2, -8), loss_weight=1 / 312)))
train_dataloader = dict(batch_size=8)
optim_wrapper = dict(optimizer=dict(lr=5e-5))
train_cfg = dict(max_epochs=10)
auto_scale_lr = dict(base_batch_size=8)
