# ASL on PASCAL VOC 2012 with a single positive label per image (r = 1),
# ResNet-50.
# Mirrors: Zhang et al. (arXiv:2112.07368), Table IV, row "ASL [26]", column
# "VOC-single": test mAP 87.33.
# Data and labels: voc2012_missing_labels.py (what is unpublished and what was
# chosen instead); not in the official code, so the COCO recipe is assumed (see
# the recipe).
# The loss, its sources and the shared recipe:
# configs/_base_/methods/zhang_asl.py.
_base_ = [
    '../_base_/datasets/voc2012_missing_labels.py',
    '../_base_/methods/zhang_asl.py',
]

model = dict(head=dict(num_classes={{_base_.num_classes}}))
