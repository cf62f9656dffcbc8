# PASCAL VOC 2012: the full-label variant of
# voc2012_single_positive.py: every training label observed (positives 1,
# negatives -1), the upper bound of the single-positive tables. Use an
# mmlml loss that reads -1 as a negative (`ANLoss`), not MMPretrain's
# `CrossEntropyLoss`, which expects 0/1 targets.
_base_ = ['./voc2012_single_positive.py']

train_dataloader = dict(dataset=dict(mode='full'))
