# LL-R + BoostLU (Kim et al., CVPR 2023), single positive labels,
# NUS-WIDE.
# Mirrors: Kim et al. (CVPR 2023), single-positive results table, row
#   "LL-R + BoostLU (Ours)", column NUS: 49.59 test mAP (LL-R alone in
#   the same table: 48.76); the table as the README of the official code
#   (youngwk/BridgeGapExplanationPAMC) shows it.
# The LL-R baseline (../baselines/ll-r_resnet50_1xb16_nuswide-single.py)
#   with BoostLU's head (alpha 5) on the unpooled ResNet-50 map (neck=None) and
#   the official code's recipe: delta 0.5% per epoch; Adam, lr 1e-5 (the
#   baseline: delta 0.4%). Recipe and sources: ./README.md.
_base_ = '../baselines/ll-r_resnet50_1xb16_nuswide-single.py'

model = dict(
    neck=None,
    head=dict(type='BoostLUClsHead', alpha=5.0, loss=dict(delta_rel=0.005)))

optim_wrapper = dict(
    optimizer=dict(
        _delete_=True,
        type='Adam',
        lr=1e-5,
        betas=(0.9, 0.999),
        weight_decay=0.))
