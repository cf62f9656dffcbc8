# BCE on MS-COCO 2014 with 40% of the labels left, Swin-S.
# Mirrors: Zhang et al. (arXiv:2112.07368), Table IX, row "BCE", column
# "Swin-transformer": test mAP 76.74.
# As bce_resnet50_1xb128_coco2014-40left.py (loss, loss scale, recipe,
# labels) with another backbone.
# Backbone: MMPretrain's Swin-S (window 7) at 448 x 448, with the official
# Swin ImageNet-1k weights as converted by MMPretrain
# (swin-small_3rdparty_in1k, top-1 83.21); the 224 weights load as they are
# (relative position biases depend on the window only, and 448 / 32 = 14 is a
# multiple of 7). The official code has only ResNets; the paper gives no
# Swin-specific setting, so the ResNet recipe is kept (Adam, no AdamW, no
# gradient clipping) and the drop-path rate is MMPretrain's default 0.1.
_base_ = ['./bce_resnet50_1xb128_coco2014-40left.py']

model = dict(
    backbone=dict(
        _delete_=True,
        type='SwinTransformer',
        arch='small',
        img_size=448,
        init_cfg=dict(
            type='Pretrained',
            checkpoint='https://download.openmmlab.com/mmclassification/v0/'
            'swin-transformer/convert/'
            'swin_small_patch4_window7_224-cc7a01c9.pth',
            prefix='backbone')),
    head=dict(in_channels=768))
