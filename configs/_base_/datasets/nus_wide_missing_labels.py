# Zhang et al.'s missing-label protocol ("Simple and Robust Loss Design for
# Multi-Label Learning with Missing Labels", Table IV) on NUS-WIDE, in the
# re-crawl that ASL (Ridnik et al.) distributes: `nus_wid_data.csv` and
# its `images/` folder, 119,103 training images (no validation split) and
# 50,720 test images in Zhang et al.'s copy, every one with at least one of
# the 81 concepts. This is NOT the image set of Cole et al.'s NUS-WIDE
# (150,000 / 60,260, nus_wide_single_positive.py): numbers of the two are
# not comparable. Everything else (448 x 448 inputs, Cutout + RandAugment,
# no normalisation, batch 128, evaluators, validation = test) is inherited
# from missing_labels_protocol.py.
#
# Observed labels: Zhang et al.'s file of one positive per training image,
# `nus_train_singlelabel.txt` ("<file name>,<class indices>" lines, matched
# to the CSV's images by file name; `dataset/` folder of the official
# repository, 119,103 lines per its README; put it in data/nuswide/). It
# was not checked here: its content is missing from the stored copy of the
# repository. Without it, `mode='single_positive', seed=1200,
# label_file=None` draws one positive per image (another draw than
# theirs). The test labels are the CSV's; the official code reads the same
# images' labels from its `nus_val.txt`.
# Layout: data/nuswide/{nus_wid_data.csv,images/,nus_train_singlelabel.txt}.
_base_ = ['./missing_labels_protocol.py']

dataset_type = 'NUSWide'
data_root = 'data/nuswide'
num_classes = 81
# The mean number of positives per training image (Zhang et al., Table II).
expected_positives = 2.4
num_train_samples = 119103

data_preprocessor = dict(num_classes=num_classes)

train_dataloader = dict(
    dataset=dict(
        mode='file',
        label_file='data/nuswide/nus_train_singlelabel.txt',
        dataset=dict(
            type=dataset_type,
            data_root=data_root,
            ann_format='csv',
            split='train')))
val_dataloader = dict(
    dataset=dict(
        type=dataset_type, data_root=data_root, ann_format='csv', split='val'))
test_dataloader = val_dataloader
