# LL-Cp + BoostLU (Kim et al., CVPR 2023), single positive labels,
# PASCAL VOC 2012.
# Mirrors: Kim et al. (CVPR 2023), single-positive results table, row
#   "LL-Cp + BoostLU (Ours)", column VOC: 87.81 test mAP (LL-Cp alone in
#   the same table: 87.44); the table as the README of the official code
#   (youngwk/BridgeGapExplanationPAMC) shows it.
# The LL-Cp baseline (../baselines/ll-cp_resnet50_1xb16_voc2012-single.py)
#   with BoostLU's head (alpha 5) on the unpooled ResNet-50 map (neck=None) and
#   the official code's recipe: delta 0.1% per batch; Adam, lr 1e-5 (the
#   baseline: SGD, lr 5e-3). Recipe and sources: ./README.md.
_base_ = '../baselines/ll-cp_resnet50_1xb16_voc2012-single.py'

model = dict(
    neck=None,
    head=dict(type='BoostLUClsHead', alpha=5.0, loss=dict(delta_rel=0.001)))

optim_wrapper = dict(
    optimizer=dict(
        _delete_=True,
        type='Adam',
        lr=1e-5,
        betas=(0.9, 0.999),
        weight_decay=0.))
