# Focal margin+ on MS-COCO 2014 with 40% of the labels left (missing ratio r =
# 0.8), ResNet-50.
# Mirrors: Zhang et al. (arXiv:2112.07368), Table VI, row "Focal margin+
# (Ours)", column "COCO-40% labels left": test mAP 71.50.
# Loss: BCE with its positive term replaced by the focal margin loss (m = 1,
# gamma = 2; Table VI modifies one side of BCE per row), so unannotated labels
# keep BCE's negative term: the focal margin recipe with `gamma_neg=0.`.
# Labels: Zhang et al.'s released file data/coco/coco_train_0.4left.txt.
# The loss, its sources and the shared recipe:
# configs/_base_/methods/zhang_focal_margin.py.
_base_ = [
    '../_base_/datasets/coco2014_missing_labels.py',
    '../_base_/methods/zhang_focal_margin.py',
]

model = dict(
    head=dict(num_classes={{_base_.num_classes}}, loss=dict(gamma_neg=0.)))
train_dataloader = dict(
    dataset=dict(label_file='data/coco/coco_train_0.4left.txt'))
