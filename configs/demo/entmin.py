# Demo: entropy minimisation on the unannotated labels (EntMin), the
# counter-example of the EM loss (Zhou et al., ECCV 2022); expected to train
# poorly. alpha 0.01 is their choice for VOC, which has the demo's 20
# classes (0.9 COCO, 0.4 NUS-WIDE and CUB).
_base_ = './an.py'

model = dict(
    head=dict(loss=dict(_delete_=True, type='EntMinLoss', alpha=0.01)))
