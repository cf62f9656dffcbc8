# Zhang et al.'s missing-label protocol ("Simple and Robust Loss Design for
# Multi-Label Learning with Missing Labels", Table V) on OpenImages, single
# positive label: 567 classes, 1,742,125 training images and 37,306 test
# images in their copy (Table II; many image URLs had expired). Everything
# else (448 x 448 inputs, Cutout + RandAugment, no normalisation, batch
# 128, evaluators, validation = test) is inherited from
# missing_labels_protocol.py.
#
# What is not published, and what this file expects instead:
# - The 567 classes: Zhang et al.'s list is not published. Give yours as a
#   class-subset file, one MID per line, in class order:
#   data/openimages/annotations/classes_567.txt (docs/datasets.md,
#   "The class-subset file", shows how to make one, e.g. the 567 classes
#   with the most verified positives). Numbers on another subset are not
#   comparable with the paper's.
# - Their version and test split: the training set is V6's human-verified
#   image-level labels (`oidv6-train-annotations-human-imagelabels.csv`),
#   its rows the images with at least one verified positive of the
#   subset; the test set is V6's `test` split (125,436 images; the rows are
#   those with a verified positive of the subset), evaluated on verified
#   labels only (unverified ones ignored, OpenImages' protocol). Their
#   37,306 test images are fewer than either official split; how they
#   scored unverified labels is not said.
# - Their single positive: one verified positive per image, drawn here with
#   Cole et al.'s generator and seed (1200); their seed is unknown. The
#   verified negatives are not used (the paper's setting has no observed
#   negative).
# Reading the training CSV takes a minute or more per process; convert it
# once (tools/dataset_converters/openimages.py --split train
# --classes-file data/openimages/annotations/classes_567.txt
# --out data/openimages/annotations/train_567.npz) and set
# `train_dataloader.dataset.dataset.ann_file='annotations/train_567.npz'`.
# Layout: data/openimages/{annotations/,train/,test/} (docs/datasets.md).
_base_ = ['./missing_labels_protocol.py']

dataset_type = 'OpenImagesMultiLabel'
data_root = 'data/openimages'
num_classes = 567
# The mean number of positives per training image (Zhang et al., Table II).
expected_positives = 2.54
num_train_samples = 1742125
classes_file = 'annotations/classes_567.txt'

data_preprocessor = dict(num_classes=num_classes)

train_dataloader = dict(
    dataset=dict(
        mode='single_positive',
        seed=1200,
        dataset=dict(
            type=dataset_type,
            data_root=data_root,
            split='train',
            classes_file=classes_file)))
val_dataloader = dict(
    dataset=dict(
        type=dataset_type,
        data_root=data_root,
        split='test',
        classes_file=classes_file))
test_dataloader = val_dataloader
