# Focal margin + SPLC on MS-COCO 2014 with 40% of the labels left (missing
# ratio r = 0.8), ResNet-50.
# Mirrors: Zhang et al. (arXiv:2112.07368), Table III, row "Focal margin + SPLC
# (Ours)", column "40% labels left": test mAP 75.69.
# Also Table VII, row "Focal margin + SPLC", and Table VIII (tau 0.6, epoch 1).
# Labels: Zhang et al.'s released file data/coco/coco_train_0.4left.txt.
# The loss, its sources and the shared recipe:
# configs/_base_/methods/zhang_splc.py.
_base_ = [
    '../_base_/datasets/coco2014_missing_labels.py',
    '../_base_/methods/zhang_splc.py',
]

model = dict(head=dict(num_classes={{_base_.num_classes}}))
train_dataloader = dict(
    dataset=dict(label_file='data/coco/coco_train_0.4left.txt'))
