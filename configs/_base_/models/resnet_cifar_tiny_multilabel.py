# A small CIFAR-style ResNet-18 (8 base channels, 0.18 M parameters) for
# 32x32 inputs (from scratch unless a config initialises the backbone, as
# the demo configs do), with a multi-label linear head. The
# loss is plain BCE, which treats every unannotated label as a negative
# (the "assume negative" baseline); partial-label methods replace
# `model.head.loss`.
model = dict(
    type='ImageClassifier',
    backbone=dict(
        type='ResNet_CIFAR',
        depth=18,
        stem_channels=8,
        base_channels=8,
        num_stages=4,
        out_indices=(3, ),
        style='pytorch',
        # Zero-initialising the last BN of each residual block slows down
        # this short schedule from scratch.
        zero_init_residual=False),
    neck=dict(type='GlobalAveragePooling'),
    head=dict(
        type='MultiLabelLinearClsHead',
        # num_classes: set by the config that picks the dataset.
        in_channels=64,
        loss=dict(type='CrossEntropyLoss', use_sigmoid=True)),
)
