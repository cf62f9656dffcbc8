# Demo: the full-label oracle, trained on every label of the training images
# (same data, model and schedule as the AN baseline), the upper bound that
# the partial-label methods try to approach.
_base_ = './an.py'

train_dataloader = dict(dataset=dict(mode='full'))

# Every label is observed: positives are 1 and negatives -1. `ANLoss` is the
# same binary cross-entropy as the baseline's, and reads the -1 states as
# negatives (MMPretrain's `CrossEntropyLoss` expects 0/1 targets).
model = dict(head=dict(loss=dict(_delete_=True, type='ANLoss')))
