# Full-label oracle (BCE on every label), PASCAL VOC 2012.
# Mirrors: Zhou et al. (ECCV 2022), Table 1, row "All P. & All N. / BCE loss",
#   PASCAL VOC 2012: 89.42 +- 0.27 test mAP. Kim et al. (CVPR 2022, Table 1)
#   report 90.2 for their own run.
# The AN recipe on the full-label dataset base. Batch 8, lr 1e-5: the EM
#   authors' code. Recipe, sources and shared choices:
#   configs/_base_/methods/baseline_an.py.
_base_ = [
    '../_base_/datasets/voc2012_full_labels.py',
    '../_base_/methods/baseline_an.py',
]

model = dict(
    head=dict(
        num_classes={{_base_.num_classes}}, loss=dict(loss_weight=1 / 20)))

train_dataloader = dict(batch_size=8)

optim_wrapper = dict(optimizer=dict(lr=1e-5))

auto_scale_lr = dict(base_batch_size=8)
