# Demo: the AN baseline with mmlml's ANLoss. On these single positive labels
# it computes the same loss as an.py (MMPretrain's sigmoid CrossEntropyLoss).
# All baseline demos keep the head's scale (sum over classes / batch size)
# and the schedule of an.py.
_base_ = './an.py'

model = dict(head=dict(loss=dict(_delete_=True, type='ANLoss')))
