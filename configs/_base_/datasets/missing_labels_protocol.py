# The missing-label protocol of Zhang et al. ("Simple and Robust Loss
# Design for Multi-Label Learning with Missing Labels", Hill / SPLC; code
# xinyu1205/robust-loss-mlml, built on ASL's): what its four datasets
# share. coco2014_missing_labels.py, voc2012_missing_labels.py,
# nus_wide_missing_labels.py and openimages_missing_labels.py fill in the
# images and the observed labels (`train_dataloader.dataset.mode` and
# `label_file`, the wrapped dataset, the test set).
#
# Model selection: the official code evaluates on the test set (val2014)
# after every epoch and reports the best epoch's mAP, so the published
# numbers are the best TEST mAP over the 31 epochs. This config does the
# same (validation set = test set) to mirror the tables; such numbers are
# optimistic. To select the epoch on held-out training images instead (20%
# of train2014 with its full labels, Cole et al.'s 80/20 split), override
# the two loaders in a config that inherits a method's config:
#   train_dataloader = dict(dataset=dict(split='train'))
#   val_dataloader = dict(dataset=dict(
#       _delete_=True, type='PartialLabelDataset', mode='file',
#       label_file='data/coco/coco_train_0.4left.txt', split='val',
#       val_labels='clean',
#       dataset=dict(type='CocoMultiLabel', data_root='data/coco',
#                    split='train', pipeline={{_base_.test_pipeline}})))
# (the same label file as training), and test the best checkpoint on
# val2014 with tools/test.py.
#
# Images: Resize to 448 x 448 (aspect ratio not kept; PIL bilinear, as
# torchvision's Resize on PIL images), then for training Cutout and
# RandAugment (below). No mean/std normalisation: the official code feeds
# ToTensor()'s [0, 1] images to the ImageNet-pretrained ResNet, so the
# preprocessor only divides by 255.
data_preprocessor = dict(
    mean=[0., 0., 0.],
    std=[255., 255., 255.],
    to_rgb=True,
    to_onehot=True,
)

# The official training augmentation is ASL's: CutoutPIL(cutout_factor=0.5)
# then `RandAugment()` of the PyPI package `randaugment` (1.0.2).
#
# CutoutPIL fills one rectangle of half the image's width and height
# (224 x 224 at 448), centred uniformly at random and clipped at the
# borders, with a random RGB colour, on every image. MMPretrain's Cutout
# cuts a 224 x 224 square with a fixed grey (128, the random colour's
# mean), also on every image; its box is shifted rather than clipped at the
# top and left borders. (The size is in pixels: halve it with the input.)
#
# The package's RandAugment applies two operations drawn uniformly (with
# replacement) from the 15 below, each with probability 0.5 and a magnitude
# index drawn uniformly from 1..9 of 10 levels spanning each range; signed
# operations take a random sign, Rotate turns counter-clockwise only.
# Here: the same operations, ranges, probabilities and fill values, with a
# magnitude drawn uniformly from the whole range (continuous, MMPretrain's
# `magnitude_std='inf'`) instead of from the 9 upper levels.
rand_augment_policies = [
    dict(type='Invert'),
    # Pixels; the package fills with RGB (125, 122, 113), BGR here.
    dict(type='Cutout', magnitude_range=(0, 20), pad_val=(113, 122, 125)),
    dict(type='Sharpness', magnitude_range=(0, 0.9)),
    dict(type='AutoContrast'),
    # Bits kept, from 8 down to 4.
    dict(type='Posterize', magnitude_range=(8, 4)),
    dict(type='Shear', magnitude_range=(0, 0.3), direction='horizontal'),
    dict(
        type='Translate',
        magnitude_range=(0, 150 / 331),
        direction='horizontal'),
    dict(
        type='Translate', magnitude_range=(0, 150 / 331),
        direction='vertical'),
    dict(type='Shear', magnitude_range=(0, 0.3), direction='vertical'),
    # Degrees; negative angles are counter-clockwise in MMPretrain.
    dict(type='Rotate', magnitude_range=(0, -30), random_negative_prob=0.),
    dict(type='Equalize'),
    dict(type='Contrast', magnitude_range=(0, 0.9)),
    dict(type='ColorTransform', magnitude_range=(0, 0.9)),
    dict(type='Solarize', magnitude_range=(256, 0)),
    dict(type='Brightness', magnitude_range=(0, 0.9)),
]

train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(
        type='Resize',
        scale=(448, 448),
        backend='pillow',
        interpolation='bilinear'),
    dict(type='Cutout', shape=224, pad_val=128, prob=1.0),
    dict(
        type='RandAugment',
        policies=rand_augment_policies,
        num_policies=2,
        magnitude_level=9,
        magnitude_std='inf',
        total_level=9,
        hparams=dict(pad_val=128)),
    dict(type='PackInputs'),
]
test_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(
        type='Resize',
        scale=(448, 448),
        backend='pillow',
        interpolation='bilinear'),
    dict(type='PackInputs'),
]

# Every training image, with the observed labels each dataset config
# names (no validation split).
train_dataloader = dict(
    batch_size=128,
    num_workers=16,
    persistent_workers=True,
    sampler=dict(type='DefaultSampler', shuffle=True),
    dataset=dict(
        type='PartialLabelDataset', dataset=dict(pipeline=train_pipeline)),
)
# Validation = test: the official test set with its full labels (see
# above).
val_dataloader = dict(
    batch_size=128,
    num_workers=16,
    persistent_workers=True,
    sampler=dict(type='DefaultSampler', shuffle=False),
    dataset=dict(test_mode=True, pipeline=test_pipeline),
)
test_dataloader = val_dataloader

# mAP (the papers' figure; the official code's AP breaks ties by sort order,
# as MMPretrain's does), then MMPretrain's per-class (CP, CR, mean of
# per-class F1, which is the official code's CF1) and overall (OP, OR, OF1)
# metrics at 0.5 (the official code predicts p > 0.5, MMPretrain
# p >= 0.5), then CF1 = 2 CP CR / (CP + CR).
val_evaluator = [
    dict(type='PartialLabelAveragePrecision'),
    dict(type='MultiLabelMetric', thr=0.5),
    dict(type='MultiLabelMetric', thr=0.5, average='micro'),
    dict(type='MultiLabelF1Metric', thr=0.5),
]
test_evaluator = val_evaluator
