# The embedded demo dataset (SyntheticShapes, generated in memory): 20
# long-tailed classes of coloured sprites on 32x32 canvases, wrapped like
# every domain (generated_domain.py): single positive labels for training,
# a fully labelled 20% of the training images for validation, a separate
# fully labelled test split.
_base_ = ['./generated_domain.py']

dataset_type = 'SyntheticShapes'
num_classes = 20
# Mean number of positives per image (for the losses that take the expected
# label count, EPR and LASD).
expected_positives = 2.46
synthetic = dict(type=dataset_type, num_classes=num_classes, img_size=32)
# The generated training images: the training and validation splits are
# Cole et al.'s 80/20 split of them, so both must wrap the same images.
train_images = dict(**synthetic, split='train', num_samples=2500, seed=0)
# The training split: 80% of them (the rest validates).
num_train_samples = 2000

data_preprocessor = dict(
    num_classes=num_classes,
    # Statistics of the generated images (RGB, after `to_rgb`).
    mean=[42., 45., 43.],
    std=[39., 41., 39.],
    # The images are stored BGR, like `LoadImageFromFile` output.
    to_rgb=True,
    to_onehot=True,
)

# A random horizontal flip for training.
train_pipeline = [
    dict(type='RandomFlip', prob=0.5, direction='horizontal'),
    dict(type='PackInputs'),
]

train_dataloader = dict(
    dataset=dict(dataset=dict(**train_images, pipeline=train_pipeline)))
val_dataloader = dict(dataset=dict(dataset=train_images))
test_dataloader = dict(dataset=dict(**synthetic, num_samples=2000))
