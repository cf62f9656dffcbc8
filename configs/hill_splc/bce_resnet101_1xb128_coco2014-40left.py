# BCE on MS-COCO 2014 with 40% of the labels left, ResNet-101.
# Mirrors: Zhang et al. (arXiv:2112.07368), Table IX, row "BCE", column
# "Resnet101": test mAP 71.92.
# As bce_resnet50_1xb128_coco2014-40left.py (loss, loss scale, recipe,
# labels) with another backbone.
# Backbone: ResNet-101 with torchvision's V1 ImageNet weights, as the
# official code loads (`--model-name resnet101`, resnet101-5d3b4d8f.pth;
# MMPretrain's own resnet101_8xb32_in1k weights are
# https://download.openmmlab.com/mmclassification/v0/resnet/
# resnet101_8xb32_in1k_20210831-539c63f8.pth).
_base_ = ['./bce_resnet50_1xb128_coco2014-40left.py']

model = dict(
    backbone=dict(
        depth=101,
        init_cfg=dict(type='Pretrained',
                      checkpoint='torchvision://resnet101')))
