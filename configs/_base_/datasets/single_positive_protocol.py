# What the four single-positive benchmarks share, in the protocol of Cole
# et al. (CVPR 2021), which the EM + APL, Large Loss, GR, LASD and OPML
# papers reuse: images resized to 448x448 (aspect ratio not kept; with
# Pillow's bilinear filter, as torchvision's `Resize` on the PIL images of
# their code), a random horizontal flip for training, ImageNet
# normalisation. The observed labels are generated over the official
# training set (one random positive per image, numpy RandomState(1200)),
# then 20% of it is held out for validation, with its clean (full) labels;
# the official validation set is the test set. Each dataset config (voc2012_*,
# coco2014_*, nus_wide_*, cub_*) fills in the dataset.
data_preprocessor = dict(
    # ImageNet mean and std (RGB), as torchvision's pretrained weights
    # expect.
    mean=[123.675, 116.28, 103.53],
    std=[58.395, 57.12, 57.375],
    to_rgb=True,
    to_onehot=True,
)

train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='Resize', scale=(448, 448), backend='pillow'),
    dict(type='RandomFlip', prob=0.5, direction='horizontal'),
    dict(type='PackInputs'),
]
test_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='Resize', scale=(448, 448), backend='pillow'),
    dict(type='PackInputs'),
]

# The observed labels and the 80/20 split of Cole et al.: labels drawn over
# all official training images (seed 1200), then the split (seed 1200);
# the training and validation sets wrap the same images. Validation uses
# the clean labels of its images (`val_labels='clean'`).
partial_labels = dict(
    type='PartialLabelDataset',
    mode='single_positive',
    seed=1200,
    val_frac=0.2,
    split_seed=1200)

train_dataloader = dict(
    batch_size=8,
    num_workers=4,
    persistent_workers=True,
    sampler=dict(type='DefaultSampler', shuffle=True),
    dataset=dict(
        **partial_labels, split='train',
        dataset=dict(pipeline=train_pipeline)),
)
val_dataloader = dict(
    batch_size=32,
    num_workers=4,
    persistent_workers=True,
    sampler=dict(type='DefaultSampler', shuffle=False),
    dataset=dict(
        **partial_labels,
        split='val',
        val_labels='clean',
        dataset=dict(pipeline=test_pipeline)),
)
test_dataloader = dict(
    batch_size=32,
    num_workers=4,
    persistent_workers=True,
    sampler=dict(type='DefaultSampler', shuffle=False),
    dataset=dict(test_mode=True, pipeline=test_pipeline),
)

# mAP (the papers' figure), then MMPretrain's per-class (CP, CR, mean of
# per-class F1) and overall (OP, OR, OF1) metrics at 0.5, then the papers'
# CF1 = 2 CP CR / (CP + CR).
val_evaluator = [
    dict(type='PartialLabelAveragePrecision'),
    dict(type='MultiLabelMetric', thr=0.5),
    dict(type='MultiLabelMetric', thr=0.5, average='micro'),
    dict(type='MultiLabelF1Metric', thr=0.5),
]
test_evaluator = val_evaluator
