# What every domain of configs/_base_/domains/ shares: Cole et al.'s
# wrapping of a dataset generated in memory, and the metrics. Training keeps
# single positive labels, generated over all training images (seed 1200);
# validation is a held-out, fully labelled 20% of the training images; the
# test split is a separate, fully labelled sample of the same generator.
# A domain inherits this file and adds its images: the training images to
# both wrappers, its generator and the test split's size to the test
# dataset, e.g.
#   train_dataloader = dict(dataset=dict(dataset=train_images))
#   val_dataloader = dict(dataset=dict(dataset=train_images))
#   test_dataloader = dict(dataset=dict(**images, num_samples=2000))
partial_labels = dict(
    type='PartialLabelDataset', mode='single_positive', seed=1200)

# No loading transform: the dataset puts the image array in `img`. A
# domain that augments its training images replaces `train_pipeline` and
# the training dataset's `pipeline`.
train_pipeline = [dict(type='PackInputs')]
test_pipeline = [dict(type='PackInputs')]

# No worker processes (the images are made in memory), hence no
# persistent workers: MMPretrain's tools/train.py would turn them on
# by default, which PyTorch refuses without workers.
train_dataloader = dict(
    batch_size=32,
    num_workers=0,
    persistent_workers=False,
    dataset=dict(
        **partial_labels, dataset=dict(pipeline=train_pipeline),
        split='train'),
    sampler=dict(type='DefaultSampler', shuffle=True),
)

val_dataloader = dict(
    batch_size=256,
    num_workers=0,
    persistent_workers=False,
    dataset=dict(
        **partial_labels,
        dataset=dict(pipeline=test_pipeline),
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
    dataset=dict(split='test', seed=0, test_mode=True, pipeline=test_pipeline),
    sampler=dict(type='DefaultSampler', shuffle=False),
)
test_evaluator = val_evaluator
