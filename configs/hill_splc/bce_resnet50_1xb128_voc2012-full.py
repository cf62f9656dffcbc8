# BCE on PASCAL VOC 2012 with full labels (every training label observed),
# ResNet-50: the upper bound.
# Mirrors: Zhang et al. (arXiv:2112.07368), Table IV, row "BCE (full labels)"
# (column "VOC-single", its only entry in Table IV): test mAP 89.04.
# As bce_resnet50_1xb128_voc2012-single.py (loss, loss scale, recipe) with
# every label of the training images observed (positives 1, negatives -1;
# `ANLoss` reads -1 as a negative).
_base_ = ['./bce_resnet50_1xb128_voc2012-single.py']

train_dataloader = dict(dataset=dict(mode='full', label_file=None))
