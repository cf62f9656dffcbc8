# The missing-label protocol of Zhang et al. ("Simple and Robust Loss
# Design for Multi-Label Learning with Missing Labels", Table III) on
# MS-COCO 2014; what the protocol's datasets share (model selection on the
# test set, 448 x 448 inputs, Cutout + RandAugment, no normalisation, batch
# 128, evaluators) is in missing_labels_protocol.py.
#
# Data: the 82,081 train2014 images with at least one annotation (all
# 82,081 for training, no validation split), tested on the 40,137 such
# images of val2014 with their full labels; 80 classes. The observed labels
# are Zhang et al.'s released files, one line "<file name>,<class indices>"
# per training image, matched to the images by file name:
#   coco_train_0.75left.txt   missing ratio r = 0.5 (75% of labels left)
#   coco_train_0.4left.txt    r = 0.8 (40% left)
#   coco_train_singlelabel.txt  r = 1 (one positive per image)
#   coco_train_full.txt       every positive (= mode='full')
# (`dataset/` folder of the official repository; put them in data/coco/).
# They keep k = floor(n (1 - r)) + 1 of an image's n positives, a uniform
# random subset, with an unknown seed: `mode='ratio', ratio=0.5` (or 0.8,
# 1.0) with any `seed` draws new labels by the same rule (the kept counts
# match the files exactly, the kept classes do not).
# Layout: data/coco/{annotations,train2014,val2014,coco_train_*.txt}.
#
_base_ = ['./missing_labels_protocol.py']

dataset_type = 'CocoMultiLabel'
data_root = 'data/coco'
num_classes = 80
# The mean number of positives per training image (Zhang et al., Table II).
expected_positives = 2.9
# The training set (every official training image).
num_train_samples = 82081

data_preprocessor = dict(num_classes=num_classes)

train_dataloader = dict(
    dataset=dict(
        mode='file',
        label_file='data/coco/coco_train_0.4left.txt',
        dataset=dict(type=dataset_type, data_root=data_root, split='train')))
# Validation = test: val2014 with its full labels.
val_dataloader = dict(
    dataset=dict(type=dataset_type, data_root=data_root, split='val'))
test_dataloader = val_dataloader
