# LL-Ct + BoostLU (Kim et al., CVPR 2023), single positive labels,
# NUS-WIDE.
# Mirrors: Kim et al. (CVPR 2023), single-positive results table, row
#   "LL-Ct + BoostLU (Ours)", column NUS: 48.37 test mAP (LL-Ct alone in
#   the same table: 48.08); the table as the README of the official code
#   (youngwk/BridgeGapExplanationPAMC) shows it.
# The LL-Ct baseline (../baselines/ll-ct_resnet50_1xb16_nuswide-single.py)
#   with BoostLU's head (alpha 5) on the unpooled ResNet-50 map (neck=None) and
#   the official code's recipe: delta 0.2% per epoch; Adam, lr 1e-5. Recipe and
#   sources: ./README.md.
_base_ = '../baselines/ll-ct_resnet50_1xb16_nuswide-single.py'

model = dict(
    neck=None,
    head=dict(type='BoostLUClsHead', alpha=5.0, loss=dict(delta_rel=0.002)))

optim_wrapper = dict(
    optimizer=dict(
        _delete_=True,
        type='Adam',
        lr=1e-5,
        betas=(0.9, 0.999),
        weight_decay=0.))
