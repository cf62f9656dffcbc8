# PASCAL VOC 2012 (Cole et al.'s protocol): the 5,717 images of
# `ImageSets/Main/train.txt` (4,574 train / 1,143 val after the split),
# tested on the 5,823 images of `val.txt`; 20 classes. A class present
# only as difficult objects is a negative, as in Cole et al.'s labels.
# Layout: data/VOCdevkit/VOC2012/{JPEGImages,Annotations,ImageSets}.
_base_ = ['./single_positive_protocol.py']

dataset_type = 'VOCMultiLabel'
data_root = 'data/VOCdevkit/VOC2012'
num_classes = 20
# The mean number of positives per image (EPR's and ROLE's expected label
# count, Cole et al.). The LASD configs set their own E, from the LASD
# paper's Table 1.
expected_positives = 1.5
# The training split (ROLE's label estimator has one row per sample).
num_train_samples = 4574

data_preprocessor = dict(num_classes=num_classes)

# The official training set: the training and validation splits are
# Cole et al.'s 80/20 split of it, so both wrap the same images.
train_images = dict(type=dataset_type, data_root=data_root, split='train')
train_dataloader = dict(dataset=dict(dataset=train_images))
val_dataloader = dict(dataset=dict(dataset=train_images))
# The official validation (test) set, with its full labels.
test_dataloader = dict(
    dataset=dict(type=dataset_type, data_root=data_root, split='val'))
