# NUS-WIDE (Cole et al.'s protocol and formatted arrays): 150,000
# training rows (120,000 train / 30,000 val after the split), tested on
# 60,260 rows; 81 concepts. About 22% of the rows have no positive (Cole
# et al. keep them). Layout: data/nuswide/formatted_{train,val}_*.npy
# and the images under data/nuswide/Flickr/.
_base_ = ['./single_positive_protocol.py']

dataset_type = 'NUSWide'
data_root = 'data/nuswide'
num_classes = 81
# The mean number of positives per image (EPR's and ROLE's expected label
# count, Cole et al.). The LASD configs set their own E, from the LASD
# paper's Table 1.
expected_positives = 1.9
# The training split (ROLE's label estimator has one row per sample).
num_train_samples = 120000

data_preprocessor = dict(num_classes=num_classes)

# The official training set: the training and validation splits are
# Cole et al.'s 80/20 split of it, so both wrap the same images.
train_images = dict(
    type=dataset_type, data_root=data_root, ann_format='cole', split='train')
train_dataloader = dict(dataset=dict(dataset=train_images))
val_dataloader = dict(dataset=dict(dataset=train_images))
# The official validation (test) set, with its full labels.
test_dataloader = dict(
    dataset=dict(
        type=dataset_type, data_root=data_root, ann_format='cole',
        split='val'))
