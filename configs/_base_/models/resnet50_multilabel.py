# ResNet-50 with ImageNet weights (torchvision's IMAGENET1K_V1, the
# `pretrained=True` weights every paper of this field starts from),
# global average pooling and a multi-label linear head, for 448x448 inputs.
# The loss is plain BCE, which treats every unannotated label as a
# negative (the "assume negative" baseline); each method's config
# replaces `model.head.loss` (and `model.head.type` where the method keeps
# per-sample state). `num_classes` comes from the dataset config.
#
# Any MMPretrain backbone goes in its place: replace `model.backbone`
# (with `_delete_=True`) and set `model.head.in_channels` to its output
# width; see configs/hill_splc/README.md for examples.
model = dict(
    type='ImageClassifier',
    backbone=dict(
        type='ResNet',
        depth=50,
        num_stages=4,
        out_indices=(3, ),
        style='pytorch',
        # torchvision://resnet50 is torchvision's resnet50-0676ba61.pth,
        # the V1 weights (torchvision's "DEFAULT" would be V2).
        init_cfg=dict(type='Pretrained', checkpoint='torchvision://resnet50')),
    neck=dict(type='GlobalAveragePooling'),
    head=dict(
        type='MultiLabelLinearClsHead',
        in_channels=2048,
        # PyTorch's default nn.Linear initialisation, as in the papers'
        # code (a torchvision ResNet whose fc layer is replaced);
        # MMPretrain's head would draw normal(std=0.01) weights.
        init_cfg=None,
        loss=dict(type='CrossEntropyLoss', use_sigmoid=True)),
)
