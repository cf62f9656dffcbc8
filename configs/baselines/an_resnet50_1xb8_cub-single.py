# AN (assume negative), single positive labels, CUB-200-2011.
# Mirrors: Zhou et al. (ECCV 2022), Table 1, row "1 P. & 0 N. / AN loss",
#   CUB-200-2011: 18.31 +- 0.47 test mAP. Cole et al. report 19.1 for their own
#   run (Kim et al., CVPR 2022, Table 1, end-to-end).
# Batch 8, lr 1e-4: the EM authors' code. Recipe, sources and shared choices:
#   configs/_base_/methods/baseline_an.py.
_base_ = [
    '../_base_/datasets/cub_single_positive.py',
    '../_base_/methods/baseline_an.py',
]

model = dict(
    head=dict(
        num_classes={{_base_.num_classes}}, loss=dict(loss_weight=1 / 312)))

train_dataloader = dict(batch_size=8)

optim_wrapper = dict(optimizer=dict(lr=1e-4))

auto_scale_lr = dict(base_batch_size=8)
