# Full-label oracle (BCE on every label), CUB-200-2011.
# Mirrors: Zhou et al. (ECCV 2022), Table 1, row "All P. & All N. / BCE loss",
#   CUB-200-2011: 30.90 +- 0.64 test mAP. Kim et al. (CVPR 2022, Table 1)
#   report 32.9 for their own run.
# The AN recipe on the full-label dataset base. Batch 8, lr 1e-4: the EM
#   authors' code. Recipe, sources and shared choices:
#   configs/_base_/methods/baseline_an.py.
_base_ = [
    '../_base_/datasets/cub_full_labels.py',
    '../_base_/methods/baseline_an.py',
]

model = dict(
    head=dict(
        num_classes={{_base_.num_classes}}, loss=dict(loss_weight=1 / 312)))

train_dataloader = dict(batch_size=8)

optim_wrapper = dict(optimizer=dict(lr=1e-4))

auto_scale_lr = dict(base_batch_size=8)
