# Demo: the "assume negative" (AN) baseline on single positive labels of the
# embedded SyntheticShapes dataset; a few minutes on a laptop CPU.
#   python tools/train.py configs/demo/an.py
# Other demo configs inherit this one and change `model.head.loss` only
# (the model's loss is BCE, MMPretrain's sigmoid CrossEntropyLoss).
_base_ = [
    '../_base_/datasets/synthetic_shapes_single_positive.py',
    '../_base_/models/resnet_cifar_tiny_multilabel.py',
    '../_base_/schedules/demo_sgd.py',
    '../_base_/default_runtime.py',
]

model = dict(head=dict(num_classes={{_base_.num_classes}}))

randomness = dict(seed=0, deterministic=False)
