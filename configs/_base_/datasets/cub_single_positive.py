# CUB-200-2011 attributes (Cole et al.'s protocol): the 5,994 official
# training images (4,795 train / 1,199 val after the split), tested on the
# 5,794 test images; 312 binary attributes (`is_present`). Layout: the
# extracted CUB_200_2011.tgz under data/cub (attributes.txt beside the
# CUB_200_2011/ folder).
_base_ = ['./single_positive_protocol.py']

dataset_type = 'CUBAttributes'
data_root = 'data/cub/CUB_200_2011'
num_classes = 312
# The mean number of positives per image (EPR's and ROLE's expected label
# count, Cole et al.). The LASD configs set their own E, from the LASD
# paper's Table 1.
expected_positives = 31.4
# The training split (ROLE's label estimator has one row per sample).
num_train_samples = 4795

data_preprocessor = dict(num_classes=num_classes)

# The official training set: the training and validation splits are
# Cole et al.'s 80/20 split of it, so both wrap the same images.
train_images = dict(type=dataset_type, data_root=data_root, split='train')
train_dataloader = dict(dataset=dict(dataset=train_images))
val_dataloader = dict(dataset=dict(dataset=train_images))
# The official validation (test) set, with its full labels.
test_dataloader = dict(
    dataset=dict(type=dataset_type, data_root=data_root, split='test'))
