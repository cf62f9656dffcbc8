# Demo: the full-label oracle, trained on every label of the training images
# (same data, model and schedule as the AN baseline).
_base_ = './an.py'

train_dataloader = dict(dataset=dict(mode='ratio', ratio=0.0))
