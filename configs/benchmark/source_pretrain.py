# The source task of the planned pretrained-regime benchmark, the analogue
# of ImageNet before COCO: fully labelled SyntheticShapes images whose 44
# classes are the (shape, colour) pairs that are NOT demo classes; the 20
# demo pairs appear in the images but are never labelled. Its backbone is
# meant to be fine-tuned on the demo's partial labels (25 epochs, about 5
# minutes on 2 CPU cores, test mAP 97.7 on the source classes):
#   python tools/train.py configs/benchmark/source_pretrain.py \
#       --work-dir work_dirs/source_pretrain
_base_ = [
    '../_base_/datasets/synthetic_shapes_single_positive.py',
    '../_base_/models/resnet_cifar_tiny_multilabel.py',
    '../_base_/schedules/demo_sgd.py',
    '../_base_/default_runtime.py',
]

# The demo's image statistics and pipelines; other images and classes.
source = dict(
    type='SyntheticShapes',
    num_classes=64,
    source_for=20,
    img_size=32,
    seed=100)
num_source_classes = 44

model = dict(head=dict(num_classes=num_source_classes))
data_preprocessor = dict(num_classes=num_source_classes)

train_dataloader = dict(
    batch_size=64,
    dataset=dict(
        _delete_=True,
        **source,
        split='train',
        num_samples=8000,
        pipeline={{_base_.train_pipeline}}))
val_dataloader = dict(
    dataset=dict(
        _delete_=True,
        **source,
        split='test',
        num_samples=1000,
        test_mode=True,
        pipeline={{_base_.test_pipeline}}))
val_evaluator = dict(_delete_=True, type='AveragePrecision')
test_dataloader = val_dataloader
test_evaluator = val_evaluator

optim_wrapper = dict(optimizer=dict(lr=0.1))
train_cfg = dict(max_epochs=25)
randomness = dict(seed=0, deterministic=False)
