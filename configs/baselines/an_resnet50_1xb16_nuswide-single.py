# AN (assume negative), single positive labels, NUS-WIDE.
# Mirrors: Zhou et al. (ECCV 2022), Table 1, row "1 P. & 0 N. / AN loss",
#   NUS-WIDE: 42.27 +- 0.56 test mAP. Cole et al. report 42.0 for their own run
#   (Kim et al., CVPR 2022, Table 1, end-to-end).
# Batch 16, lr 1e-5: the EM authors' code. NUS-WIDE: Zhou et al. used the
#   official NUS-WIDE images (their footnote 7), not the 2020 re-crawl behind
#   Cole et al.'s formatted arrays that the dataset base reads, so their test
#   set differs from this config's. Recipe, sources and shared choices:
#   configs/_base_/methods/baseline_an.py.
_base_ = [
    '../_base_/datasets/nus_wide_single_positive.py',
    '../_base_/methods/baseline_an.py',
]

model = dict(
    head=dict(
        num_classes={{_base_.num_classes}}, loss=dict(loss_weight=1 / 81)))

train_dataloader = dict(batch_size=16)

optim_wrapper = dict(optimizer=dict(lr=1e-5))

auto_scale_lr = dict(base_batch_size=16)
