# BCE on MS-COCO 2014 with 40% of the labels left, MobileNetV3-Large.
# Mirrors: Zhang et al. (arXiv:2112.07368), Table IX, row "BCE", column
# "MobilenetV3": test mAP 68.45.
# As bce_resnet50_1xb128_coco2014-40left.py (loss, loss scale, recipe,
# labels) with another backbone.
# Backbone: MMPretrain's MobileNetV3-Large with torchvision's ImageNet
# weights as converted by MMPretrain (mobilenet-v3-large_3rdparty_in1k, top-1
# 74.04), its 960-channel last feature map pooled into the linear head.
# torchvision's and timm's classifiers put a 960 -> 1280 layer before the
# classes; the paper does not say which model it used (the official code has
# only ResNets), so the head reads the 960 pooled features directly.
_base_ = ['./bce_resnet50_1xb128_coco2014-40left.py']

model = dict(
    backbone=dict(
        _delete_=True,
        type='MobileNetV3',
        arch='large',
        init_cfg=dict(
            type='Pretrained',
            checkpoint='https://download.openmmlab.com/mmclassification/v0/'
            'mobilenet_v3/convert/mobilenet_v3_large-3ea3c186.pth',
            prefix='backbone')),
    head=dict(in_channels=960))
