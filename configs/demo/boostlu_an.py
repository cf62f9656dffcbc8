# Demo: BoostLU (Kim et al., CVPR 2023) on the assume-negative baseline:
# the linear head applied to the unpooled feature map as a class activation
# map, its positive values multiplied by alpha = 5, then averaged into the
# logits, in training and at test time (no extra loss). The neck is
# removed so that the head sees the spatial map.
#   python tools/train.py configs/demo/boostlu_an.py
_base_ = './an.py'

model = dict(neck=None, head=dict(type='BoostLUClsHead', alpha=5.0))
