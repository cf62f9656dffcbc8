# Demo: BoostLU (Kim et al., CVPR 2023) with Large Loss rejection (LL-R),
# the combination the paper reports first: configs/demo/ll_r.py with the
# boosted class-activation-map head (alpha = 5) instead of the pooled
# linear head.
#   python tools/train.py configs/demo/boostlu_ll_r.py
_base_ = './ll_r.py'

model = dict(neck=None, head=dict(type='BoostLUClsHead', alpha=5.0))
