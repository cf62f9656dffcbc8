# The embedded demo dataset (SyntheticShapes, generated in memory): 20
# long-tailed classes of coloured sprites on 32x32 canvases. Training keeps
# one random positive per image (single positive labels); validation is a
# held-out, fully labelled 20% of the training images; the test split is a
# separate, fully labelled sample of the same generator.
dataset_type = 'SyntheticShapes'
num_classes = 20
# Mean number of positives per image (for the losses that take the expected
# label count, EPR and LASD).
expected_positives = 2.46
synthetic = dict(type=dataset_type, num_classes=num_classes, img_size=32)
# The generated training images: the training and validation splits are
# Cole et al.'s 80/20 split of them, so both must wrap the same images.
train_images = dict(**synthetic, split='train', num_samples=2500, seed=0)
# The training split: 80% of them (the rest validates).
num_train_samples = 2000
# Single positive labels, generated over all training images (seed 1200).
partial_labels = dict(
    type='PartialLabelDataset', mode='single_positive', seed=1200)

data_preprocessor = dict(
    num_classes=num_classes,
    # Statistics of the generated images (RGB, after `to_rgb`).
    mean=[42., 45., 43.],
    std=[39., 41., 39.],
    # The images are stored BGR, like `LoadImageFromFile` output.
    to_rgb=True,
    to_onehot=True,
)

# No loading transform: the dataset puts the image array in `img`.
train_pipeline = [
    dict(type='RandomFlip', prob=0.5, direction='horizontal'),
    dict(type='PackInputs'),
]
test_pipeline = [dict(type='PackInputs')]

# No worker processes (the images are made in memory), hence no
# persistent workers: MMPretrain's tools/train.py would turn them on
# by default, which PyTorch refuses without workers.
train_dataloader = dict(
    batch_size=32,
    num_workers=0,
    persistent_workers=False,
    dataset=dict(
        **partial_labels,
        dataset=dict(**train_images, pipeline=train_pipeline),
        split='train'),
    sampler=dict(type='DefaultSampler', shuffle=True),
)

val_dataloader = dict(
    batch_size=256,
    num_workers=0,
    persistent_workers=False,
    dataset=dict(
        **partial_labels,
        dataset=dict(**train_images, pipeline=test_pipeline),
        split='val',
        # The full labels of the validation images (Cole et al.'s default);
        # 'observed': as partial as the training labels.
        val_labels='clean'),
    sampler=dict(type='DefaultSampler', shuffle=False),
)
# mAP, then MMPretrain's per-class (CP, CR, mean of per-class F1) and
# overall (OP, OR, OF1) metrics, then the papers' CF1 = 2 CP CR / (CP + CR).
val_evaluator = [
    dict(type='PartialLabelAveragePrecision'),
    dict(type='MultiLabelMetric', thr=0.5),
    dict(type='MultiLabelMetric', thr=0.5, average='micro'),
    dict(type='MultiLabelF1Metric', thr=0.5),
]

test_dataloader = dict(
    batch_size=256,
    num_workers=0,
    persistent_workers=False,
    dataset=dict(
        **synthetic,
        split='test',
        num_samples=2000,
        seed=0,
        test_mode=True,
        pipeline=test_pipeline),
    sampler=dict(type='DefaultSampler', shuffle=False),
)
test_evaluator = val_evaluator
