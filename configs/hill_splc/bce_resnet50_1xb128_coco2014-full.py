# BCE on MS-COCO 2014 with full labels (every training label observed),
# ResNet-50: the upper bound.
# Mirrors: Zhang et al. (arXiv:2112.07368), Table III, row "BCE (full labels)"
# (column "75% labels left", its only entry in Table III): test mAP 80.32.
# As bce_resnet50_1xb128_coco2014-40left.py (loss, loss scale, recipe) with
# every label of the training images observed (positives 1, negatives -1;
# `ANLoss` reads -1 as a negative).
# Equals Zhang et al.'s coco_train_full.txt.
_base_ = ['./bce_resnet50_1xb128_coco2014-40left.py']

train_dataloader = dict(dataset=dict(mode='full', label_file=None))
