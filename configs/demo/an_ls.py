# Demo: AN with label smoothing (AN-LS, Cole et al., CVPR 2021): targets
# 0.9 for observed positives, 0.1 for every other label.
_base_ = './an.py'

model = dict(
    head=dict(loss=dict(_delete_=True, type='ANLSLoss', smoothing=0.1)))
