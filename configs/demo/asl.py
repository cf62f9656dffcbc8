# Demo: asymmetric loss (ASL, Ridnik et al., ICCV 2021) with unannotated
# labels assumed negative, official configuration: gamma+ 0, gamma- 4,
# probability shift 0.05 ("ASL-PS" in the LASD paper; clip=0 is its "ASL"),
# focal weights detached. The official code sums over the batch; the demo
# keeps the head's mean over samples.
_base_ = './an.py'

model = dict(
    head=dict(
        loss=dict(
            _delete_=True,
            type='PartialAsymmetricLoss',
            gamma_pos=0.0,
            gamma_neg=4.0,
            clip=0.05,
            detach_focal_weight=True)))
