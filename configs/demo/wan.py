# Demo: weighted assume-negative (WAN) loss, assumed negatives weighted by
# 1 / (C - 1) (Cole et al., CVPR 2021). Set neg_weight for the tuned "DW"
# variant (0.1 for VOC, COCO and NUS-WIDE, 0.02 for CUB).
_base_ = './an.py'

model = dict(
    head=dict(loss=dict(_delete_=True, type='WANLoss', neg_weight=None)))
