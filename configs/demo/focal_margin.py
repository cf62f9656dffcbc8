# Demo: focal margin loss (Zhang et al., "Simple and Robust Loss Design for
# Multi-Label Learning with Missing Labels", Table VI "Focal margin+"):
# focal loss of the logit minus a margin (m 1, gamma 2) on observed
# positives, BCE on unannotated labels assumed negative.
_base_ = './an.py'

model = dict(
    head=dict(
        loss=dict(
            _delete_=True,
            type='FocalMarginLoss',
            margin=1.0,
            gamma=2.0,
            gamma_neg=0.0)))
