# MS-COCO 2014 (Cole et al.'s protocol): the 82,081 train2014 images
# with at least one annotation (65,665 train / 16,416 val after the
# split), tested on the 40,137 such images of val2014; 80 classes.
# Layout: data/coco/{annotations,train2014,val2014}.
_base_ = ['./single_positive_protocol.py']

dataset_type = 'CocoMultiLabel'
data_root = 'data/coco'
num_classes = 80
# The mean number of positives per image (EPR's and ROLE's expected label
# count, Cole et al.). The LASD configs set their own E, from the LASD
# paper's Table 1.
expected_positives = 2.9
# The training split (ROLE's label estimator has one row per sample).
num_train_samples = 65665

data_preprocessor = dict(num_classes=num_classes)

# The official training set: the training and validation splits are
# Cole et al.'s 80/20 split of it, so both wrap the same images.
train_images = dict(type=dataset_type, data_root=data_root, split='train')
train_dataloader = dict(dataset=dict(dataset=train_images))
val_dataloader = dict(dataset=dict(dataset=train_images))
# The official validation (test) set, with its full labels.
test_dataloader = dict(
    dataset=dict(type=dataset_type, data_root=data_root, split='val'))
