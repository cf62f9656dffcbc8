# AN (assume negative), single positive labels, PASCAL VOC 2012.
# Mirrors: Zhou et al. (ECCV 2022), Table 1, row "1 P. & 0 N. / AN loss",
#   PASCAL VOC 2012: 85.89 +- 0.38 test mAP. Cole et al. report 85.1 for their
#   own run (Kim et al., CVPR 2022, Table 1, end-to-end).
# Batch 8, lr 1e-5: the EM authors' code. Recipe, sources and shared choices:
#   configs/_base_/methods/baseline_an.py.
_base_ = [
    '../_base_/datasets/voc2012_single_positive.py',
    '../_base_/methods/baseline_an.py',
]

model = dict(
    head=dict(
        num_classes={{_base_.num_classes}}, loss=dict(loss_weight=1 / 20)))

train_dataloader = dict(batch_size=8)

optim_wrapper = dict(optimizer=dict(lr=1e-5))

auto_scale_lr = dict(base_batch_size=8)
