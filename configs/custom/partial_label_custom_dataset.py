# Your own partially labelled data (docs/custom_dataset.md) trained with GR
# Loss on the single-positive protocol of Cole et al.: ResNet-50 with
# ImageNet weights, 448 x 448 inputs, Adam, an 80/20 split of your training
# images, the checkpoint with the best validation mAP kept.
#
# The recipe comes from a paper config
# (configs/gr_loss/gr_resnet50_1xb8_voc2012-single.py); this file replaces
# its data. A base config's variables (`data_root`, `num_classes`) are read
# when the base is parsed, so setting them here changes nothing by itself:
# every place that uses them is overridden below.
#
# Layout (the annotation JSON of docs/custom_dataset.md, section 2):
#   data/mine/images/*.jpg
#   data/mine/train.json   training images: positives (`gt_label`),
#                          observed negatives (`gt_label_negative`), the
#                          rest unknown
#   data/mine/test.json    test images, fully labelled (`gt_label` lists
#                          every positive; the rest are negatives)
#
# Check the preparation, then train and test:
#   python tools/dataset_converters/dataset_summary.py \
#       configs/custom/partial_label_custom_dataset.py --split train
#   python tools/train.py configs/custom/partial_label_custom_dataset.py
_base_ = ['../gr_loss/gr_resnet50_1xb8_voc2012-single.py']

# The imports every mmlml config needs (already in the base's runtime,
# repeated here so that the file states them).
custom_imports = dict(imports=['mmlml'], allow_failed_imports=False)

data_root = 'data/mine/'
num_classes = 4  # the length of `metainfo.classes` in train.json
image_size = 448
batch_size = 8

# The head, the data preprocessor and the loss scale all depend on the
# number of classes (GR's official loss averages over the N x C entries of
# a batch: loss_weight = 1 / num_classes).
model = dict(
    head=dict(num_classes=num_classes, loss=dict(loss_weight=1 / num_classes)))
data_preprocessor = dict(num_classes=num_classes)

train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='Resize', scale=(image_size, image_size), backend='pillow'),
    dict(type='RandomFlip', prob=0.5, direction='horizontal'),
    dict(type='PackInputs'),
]
test_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='Resize', scale=(image_size, image_size), backend='pillow'),
    dict(type='PackInputs'),
]

# The images of train.json; `unlisted='unknown'`: a class listed neither as
# a positive nor as a negative of an image is unknown.
images = dict(
    type='CustomMultiLabelDataset',
    data_root=data_root,
    ann_file='train.json',
    data_prefix='images/',
    unlisted='unknown')

# The base wraps VOCMultiLabel (with its own `split`): `_delete_=True`
# replaces the wrapped dataset instead of merging VOC's arguments into it.
# `mode='annotated'` trains on the annotation as it is (1 / -1 / 0); the
# wrapper's `split` keeps 80% of the images for training and validates on
# the other 20% with their observed labels.
train_dataloader = dict(
    batch_size=batch_size,
    dataset=dict(
        mode='annotated',
        dataset=dict(_delete_=True, **images, pipeline=train_pipeline)))
val_dataloader = dict(
    batch_size=batch_size,
    dataset=dict(
        mode='annotated',
        val_labels='observed',
        dataset=dict(_delete_=True, **images, pipeline=test_pipeline)))
# The test set is fully labelled: `unlisted='negative'` (a class not in
# `gt_label` is a negative). A partially labelled test file takes
# `unlisted='unknown'` and lists its observed negatives in
# `gt_label_negative` (evaluated on its known labels); one with no negative
# at all is refused, since every predictor would score 100 on it.
test_dataloader = dict(
    batch_size=batch_size,
    dataset=dict(
        _delete_=True,
        type='CustomMultiLabelDataset',
        data_root=data_root,
        ann_file='test.json',
        data_prefix='images/',
        unlisted='negative',
        test_mode=True,
        pipeline=test_pipeline))

# The paper's learning rate is for its batch of 8 on one GPU; with
# `--auto-scale-lr` it is scaled to the batch actually used.
auto_scale_lr = dict(base_batch_size=8)

# A fixed seed: the paper configs leave it unset (`randomness.seed=None`,
# as the papers' code), so that without this line every run of this file
# would draw another seed (another initialisation of the head, shuffle and
# augmentation) and two runs could not be compared.
randomness = dict(seed=0, deterministic=False)
