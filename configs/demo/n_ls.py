# Demo: label smoothing on the assumed negatives only (N-LS, Zhou et al.,
# ECCV 2022); 0.3 is their choice for VOC, which has the demo's 20 classes
# (0.1 for COCO, NUS-WIDE and CUB).
_base_ = './an.py'

model = dict(
    head=dict(
        loss=dict(
            _delete_=True, type='ANLSLoss', smoothing=0.3,
            negatives_only=True)))
