# Demo: OPML loss on the single-positive demo data.
#   python tools/train.py configs/demo/opml.py
# a = b = 1 is ZLPR (configs/demo/zlpr.py); tune a and b, or equivalently
# the thresholds pos_margin / neg_margin (a = exp(-pos_margin),
# b = exp(neg_margin)), on validation data.
_base_ = './an.py'

model = dict(
    head=dict(loss=dict(_delete_=True, type='OPMLLoss', a=1.0, b=1.0)))
