# Demo: the "assume negative" (AN) baseline on single positive labels of the
# embedded SyntheticShapes dataset, in the papers' regime: a backbone
# pretrained on other classes (configs/benchmark/source_pretrain.py, the
# analogue of ImageNet), fine-tuned end to end for 10 epochs; about a
# minute on a laptop CPU.
#   python tools/train.py configs/demo/an.py
# Other demo configs inherit this one and change `model.head.loss` only
# (the model's loss is BCE, MMPretrain's sigmoid CrossEntropyLoss).
_base_ = [
    '../_base_/datasets/synthetic_shapes_single_positive.py',
    '../_base_/models/resnet_cifar_tiny_multilabel.py',
    '../_base_/schedules/demo_sgd.py',
    '../_base_/default_runtime.py',
]

model = dict(
    backbone=dict(
        init_cfg=dict(
            type='Pretrained',
            checkpoint='{{ fileDirname }}/../../checkpoints/'
            'synthetic_shapes_source_backbone.pth',
            prefix='backbone')),
    head=dict(num_classes={{_base_.num_classes}}))

# Fine-tuning: a fifth of the from-scratch learning rate, half the epochs.
optim_wrapper = dict(optimizer=dict(lr=0.01))
train_cfg = dict(max_epochs=10)

randomness = dict(seed=0, deterministic=False)
