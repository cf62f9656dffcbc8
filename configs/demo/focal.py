# Demo: focal loss with unannotated labels assumed negative (gamma 2,
# alpha 0.75 on positives and 0.25 on negatives, as selected by Zhou et
# al., ECCV 2022).
_base_ = './an.py'

model = dict(
    head=dict(
        loss=dict(
            _delete_=True, type='PartialFocalLoss', gamma=2.0, alpha=0.75)))
