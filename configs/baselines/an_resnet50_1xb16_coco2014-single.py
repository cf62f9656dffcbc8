# AN (assume negative), single positive labels, MS-COCO 2014.
# Mirrors: Zhou et al. (ECCV 2022), Table 1, row "1 P. & 0 N. / AN loss",
#   MS-COCO 2014: 64.92 +- 0.19 test mAP. Cole et al. report 64.1 for their own
#   run (Kim et al., CVPR 2022, Table 1, end-to-end).
# Batch 16, lr 1e-5: the EM authors' code. Recipe, sources and shared choices:
#   configs/_base_/methods/baseline_an.py.
_base_ = [
    '../_base_/datasets/coco2014_single_positive.py',
    '../_base_/methods/baseline_an.py',
]

model = dict(
    head=dict(
        num_classes={{_base_.num_classes}}, loss=dict(loss_weight=1 / 80)))

train_dataloader = dict(batch_size=16)

optim_wrapper = dict(optimizer=dict(lr=1e-5))

auto_scale_lr = dict(base_batch_size=16)
