# The consistency regulariser of LASD ("Leveraged Asymmetric Loss with
# Disambiguation for Multi-Label Recognition with One-Positive
# Annotations", ICLR 2023 submission, OpenReview JFf-bPQu5RB; "paper"
# below): the views that every LASD-CR config of configs/lasd/ shares.
# A LASD-CR config inherits the LASD config of its dataset (the loss and
# the recipe: ./lasd.py) and this file, and makes the full LASD objective
# (eq. 8): the LASD loss (eq. 6) on the original image plus alpha times the
# consistency regulariser (eq. 7), the squared distances between the
# predicted probabilities of the original image and two random
# augmentations of it. What a recipe cannot hold (MMEngine forbids two
# bases to define the same key, and these keys are the LASD config's) is in
# each config: the model (`ConsistencyClassifier` with its alpha); the data
# preprocessor `MultiViewClsDataPreprocessor`, which hands the views over
# to the model as a list of (N, C, H, W) tensors (validation and test
# batches, one view, are processed as usual); and the training pipeline,
# whose `MultiView` transform makes the views below, written into the
# wrapped dataset of `train_dataloader` too (the dataset base wrote its
# pipeline there; lists are replaced, not merged).
#
# - alpha: Table 4, the column of each config's dataset.
# - Views: the paper (Sec. 4.3) names no augmentation. Chosen: the
#   original view is the test pipeline (448x448 resize, no flip); each of
#   the two augmented views is a random resized crop of 50-100% of the
#   image area (aspect 3/4-4/3) resized to 448x448, then a random
#   horizontal flip. The mild crop keeps most annotated objects in view,
#   so that asking for the same prediction is sound.
# - Regulariser scale: eq. 7 sums over the classes; ConsistencyClassifier
#   averages it over the images of the batch, like the head's loss, so
#   alpha weighs the two terms per image as eq. 8 writes them (the paper
#   does not say how it reduces over a batch).
# - Each iteration runs the network on 3 x 8 images (batch-norm
#   statistics over all views); the loss term sees the original view only.

# View 0: the original image; views 1 and 2: random augmentations of it.
original_view = [dict(type='Resize', scale=(448, 448))]
augmented_view = [
    dict(type='RandomResizedCrop', scale=448, crop_ratio_range=(0.5, 1.0)),
    dict(type='RandomFlip', prob=0.5, direction='horizontal'),
]
