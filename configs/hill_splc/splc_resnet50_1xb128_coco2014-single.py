# Focal margin + SPLC on MS-COCO 2014 with a single positive label per image
# (r = 1), ResNet-50.
# Mirrors: Zhang et al. (arXiv:2112.07368), Table III, row "Focal margin + SPLC
# (Ours)", column "single label": test mAP 73.18.
# As splc_resnet50_1xb128_coco2014-40left.py (loss, loss scale, recipe) with
# Zhang et al.'s file data/coco/coco_train_singlelabel.txt.
_base_ = ['./splc_resnet50_1xb128_coco2014-40left.py']

train_dataloader = dict(
    dataset=dict(label_file='data/coco/coco_train_singlelabel.txt'))
