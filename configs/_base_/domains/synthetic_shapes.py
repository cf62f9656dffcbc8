# The embedded synthetic domain, the default of the demo configs
# (configs/demo/an.py): SyntheticShapes with single positive labels, and the
# small CIFAR ResNet-18 pretrained on the source task
# (configs/benchmark/source_pretrain.py, the analogue of ImageNet).
# Besides the dataset and the model, a domain defines `num_classes`,
# `expected_positives` (EPR, LASD) and `num_train_samples` (ROLE).
_base_ = [
    '../datasets/synthetic_shapes_single_positive.py',
    '../models/resnet_cifar_tiny_multilabel.py',
]

model = dict(
    backbone=dict(
        init_cfg=dict(
            type='Pretrained',
            checkpoint='{{ fileDirname }}/../../../checkpoints/'
            'synthetic_shapes_source_backbone.pth',
            prefix='backbone')),
    head=dict(num_classes={{_base_.num_classes}}))
