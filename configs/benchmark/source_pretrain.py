# The source task of the embedded benchmark, the analogue of ImageNet
# before COCO: fully labelled SyntheticShapes images whose 44 classes are
# the (shape, colour) pairs that are NOT demo classes; the 20 demo pairs
# appear in the images but are never labelled. The demo and benchmark
# configs fine-tune its backbone on the demo's partial labels. It trains
# with the demo's schedule (SGD lr 0.05, batch 32, 20 epochs: about 3
# minutes on 2 CPU cores; source test mAP 86.2), then the backbone of the
# best checkpoint becomes checkpoints/synthetic_shapes_source_backbone.pth:
#   python tools/train.py configs/benchmark/source_pretrain.py \
#       --work-dir work_dirs/source_pretrain
#   python tools/model_converters/extract_backbone.py \
#       work_dirs/source_pretrain/best_multi-label_mAP_epoch_20.pth \
#       checkpoints/synthetic_shapes_source_backbone.pth
# (a longer source training, 8000 images and 25 epochs at lr 0.1 for a
# source mAP of 97.7, made little difference to the target task.)
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
    dataset=dict(
        _delete_=True,
        **source,
        split='train',
        num_samples=5000,
        pipeline={{_base_.train_pipeline}}))
val_dataloader = dict(
    dataset=dict(
        _delete_=True,
        **source,
        split='test',
        num_samples=1000,
        test_mode=True,
        pipeline={{_base_.test_pipeline}}))
val_evaluator = dict(_delete_=True, type='PartialLabelAveragePrecision')
test_dataloader = val_dataloader
test_evaluator = val_evaluator

randomness = dict(seed=0, deterministic=False)
