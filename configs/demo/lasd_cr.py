# Demo: the full LASD objective (eq. 8): the LASD loss on the original
# image plus alpha times the consistency regulariser (eq. 7), the squared
# distances between the predictions for the image and two random
# augmentations of it. VOC's values of the paper's Table 4 (lambda+ 0.10,
# tau 0.90, alpha 0.70; 20 classes like the demo data). Each training
# iteration runs the network on three views of every image.
_base_ = './lasd.py'

model = dict(
    type='ConsistencyClassifier',
    consistency_weight=0.7,
    head=dict(loss=dict(lambda_pos=0.1, tau=0.9)))

# The views, one list of images per view after collation.
data_preprocessor = dict(type='MultiViewClsDataPreprocessor')

# View 0 is the original image: the deterministic pipeline, empty here
# (the dataset already gives 32x32 arrays). Views 1 and 2 are random
# augmentations that keep the sprites recognisable: a horizontal flip and
# a mild random resized crop (70-100% of the area) back to 32x32. The
# paper does not name its augmentations.
original_view = []
augmented_view = [
    dict(type='RandomFlip', prob=0.5, direction='horizontal'),
    dict(type='RandomResizedCrop', scale=32, crop_ratio_range=(0.7, 1.0)),
]
train_pipeline = [
    dict(
        type='MultiView',
        num_views=[1, 2],
        transforms=[original_view, augmented_view]),
    dict(type='PackInputs'),
]
# The base config writes its pipeline into the dataset (lists are replaced,
# not merged): override it there.
train_dataloader = dict(dataset=dict(dataset=dict(pipeline=train_pipeline)))
