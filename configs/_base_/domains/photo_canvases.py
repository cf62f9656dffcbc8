# The real-photo domain of the demo configs: cut-out photographs of real
# objects (Debian's tuxpaint-stamps-default, GPL-2, read where it is
# installed, never copied) on real photographic backgrounds, and
# EfficientNet-Lite0 with its ImageNet weights at its native 224 px.
#   python tools/dataset_converters/tuxpaint_stamps.py   # once, no root
#   MMLML_DEMO_DOMAIN=photo_canvases python tools/train.py configs/demo/hill.py
# (tools/benchmark.py --domain photo_canvases makes what is missing.)
# PhotoCanvases pastes 1 to 3 objects of distinct classes (probabilities
# 0.4, 0.4, 0.2; 1.63 positives per image, about VOC's density) at 50% to
# 80% of the canvas side on crops of the photographs that scikit-image and
# scikit-learn bundle: 18 classes, exact full labels.
# It is an embedded stand-in that ranks methods on real photographs, not
# PASCAL VOC: its numbers are not VOC numbers.
#
# Two protocols, as Cole et al. report them:
# - 'finetune' (this file): the last stage of the backbone (layer 6, the
#   1x1 convolution to 1280 channels) is trained with the head, on the
#   output of layer 5 (7x7x320) computed once per split and cached. A
#   whole fine-tune of Lite0 at 224 px costs about 30 s per batch of 32 on
#   a 2-core CPU, the last stage 0.2 s; at 112 px, where a whole
#   fine-tune would fit, the frozen features lose most of their transfer
#   (docs/benchmark.md).
# - 'linear' (photo_canvases_linear.py, what `--modes linear` runs): the
#   frozen backbone's last feature maps, cached, and the head alone.
# The labels are wrapped like the other domains': single positive labels
# for training, a fully labelled 20% of the training canvases for
# validation, a separate fully labelled test split.
_base_ = ['../datasets/generated_domain.py']

dataset_type = 'PhotoCanvases'
num_classes = 18
# Mean number of positives per image (EPR, LASD): 1.63 on the 1000
# training canvases.
expected_positives = 1.63
checkpoint = ('{{ fileDirname }}/../../../checkpoints/'
              'efficientnet_lite0_imagenet.pth')
# The frozen part's outputs, computed once per split and backbone.
feature_cache = '{{ fileDirname }}/../../../work_dirs/feature_cache'
# The first layer trained; the dataset gives the output of the one before.
input_layer = 6
photos = dict(
    type=dataset_type,
    img_size=224,
    features=dict(
        backbone=dict(
            type='EfficientNetLite',
            arch='lite0',
            out_indices=(input_layer - 1, )),
        checkpoint=checkpoint,
        cache_dir=feature_cache))
# Cole et al.'s 80/20 split of the training canvases.
train_val_split = dict(val_frac=0.2, split_seed=1200)
train_images = dict(
    **photos, **train_val_split, split='train', num_samples=1000, seed=0)
# The training split: 80% of them (the rest validates).
num_train_samples = 800
# Single positive labels, generated over all training canvases (seed 1200,
# generated_domain.py), on this split.
partial_labels = train_val_split

# Made by tools/benchmark.py (--domain photo_canvases) when missing.
prepare_command = [
    'python tools/dataset_converters/tuxpaint_stamps.py',
    'python tools/model_converters/efficientnet_lite0.py '
    'checkpoints/efficientnet_lite0_imagenet.pth',
]
prepare_creates = [
    'data/tuxpaint-stamps',
    'checkpoints/efficientnet_lite0_imagenet.pth',
]
# The domain file of the linear protocol (tools/benchmark.py --modes linear).
linear_domain = 'photo_canvases_linear'

model = dict(
    type='ImageClassifier',
    backbone=dict(
        type='EfficientNetLite',
        arch='lite0',
        input_layer=input_layer,
        init_cfg=dict(
            type='Pretrained', checkpoint=checkpoint, prefix='backbone')),
    neck=dict(type='GlobalAveragePooling'),
    head=dict(
        type='MultiLabelLinearClsHead',
        num_classes=num_classes,
        in_channels=1280,
        loss=dict(type='CrossEntropyLoss', use_sigmoid=True)),
)

# The inputs are cached feature maps: no normalisation, no colour order.
data_preprocessor = dict(
    num_classes=num_classes,
    mean=None,
    std=None,
    to_rgb=False,
    to_onehot=True,
)

# The shared wrapping and metrics (generated_domain.py) on these canvases.
# The dataset puts the (h, w, C) feature map in `img`; the shared
# pipelines' PackInputs makes it the (C, h, w) input.
train_dataloader = dict(dataset=dict(**train_val_split, dataset=train_images))
val_dataloader = dict(dataset=dict(**train_val_split, dataset=train_images))
test_dataloader = dict(dataset=dict(**photos, num_samples=1000))
