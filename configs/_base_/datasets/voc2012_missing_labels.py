# Zhang et al.'s missing-label protocol ("Simple and Robust Loss Design for
# Multi-Label Learning with Missing Labels", Table IV) on PASCAL VOC 2012:
# the 5,717 images of `ImageSets/Main/train.txt` for training (no
# validation split), tested on the 5,823 images of `val.txt` with their
# full labels; 20 classes. Everything else (448 x 448 inputs, Cutout +
# RandAugment, no normalisation, batch 128, evaluators, validation = test)
# is inherited from missing_labels_protocol.py.
#
# Observed labels: one positive per image ("VOC-single label", r = 1).
# Zhang et al. released no VOC file, nor their seed; their paper calls
# r = 1 "the same setting as" Cole et al. (CVPR 2021), so the labels are
# drawn with Cole et al.'s generator and seed (1200), over all 5,717
# training images. A class present only as difficult objects is a negative
# (as in Cole et al.'s labels); the paper does not say how it treats them.
# Layout: data/VOCdevkit/VOC2012/{JPEGImages,Annotations,ImageSets}.
_base_ = ['./missing_labels_protocol.py']

dataset_type = 'VOCMultiLabel'
data_root = 'data/VOCdevkit/VOC2012'
num_classes = 20
# The mean number of positives per image (Cole et al.).
expected_positives = 1.5
num_train_samples = 5717

data_preprocessor = dict(num_classes=num_classes)

train_dataloader = dict(
    dataset=dict(
        mode='single_positive',
        seed=1200,
        dataset=dict(type=dataset_type, data_root=data_root, split='train')))
val_dataloader = dict(
    dataset=dict(type=dataset_type, data_root=data_root, split='val'))
test_dataloader = val_dataloader
