# Demo: ZLPR loss (Su et al., 2022) on the single-positive demo data.
#   python tools/train.py configs/demo/zlpr.py
_base_ = './an.py'

model = dict(head=dict(loss=dict(_delete_=True, type='ZLPRLoss')))
