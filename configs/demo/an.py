# Demo: the "assume negative" (AN) baseline on single positive labels of the
# embedded SyntheticShapes dataset; a few minutes on a laptop CPU.
#   python tools/train.py configs/demo/an.py
# Other demo configs inherit this one and change `model.head.loss` only.
_base_ = [
    '../_base_/datasets/synthetic_shapes_single_positive.py',
    '../_base_/models/resnet_cifar_tiny_multilabel.py',
    '../_base_/schedules/demo_sgd.py',
    '../_base_/default_runtime.py',
]

num_classes = 20
# Mean number of positives per image of the dataset (for losses that need
# the expected label count, e.g. EPR and ROLE).
expected_positives = 2.49

model = dict(
    head=dict(
        num_classes=num_classes,
        loss=dict(type='CrossEntropyLoss', use_sigmoid=True)))

randomness = dict(seed=0, deterministic=False)
