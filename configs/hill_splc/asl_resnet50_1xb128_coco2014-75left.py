# ASL on MS-COCO 2014 with 75% of the labels left (missing ratio r = 0.5),
# ResNet-50.
# Mirrors: Zhang et al. (arXiv:2112.07368), Table III, row "ASL [26]", column
# "75% labels left": test mAP 77.97.
# As asl_resnet50_1xb128_coco2014-40left.py (loss, loss scale, recipe) with
# Zhang et al.'s file data/coco/coco_train_0.75left.txt.
_base_ = ['./asl_resnet50_1xb128_coco2014-40left.py']

train_dataloader = dict(
    dataset=dict(label_file='data/coco/coco_train_0.75left.txt'))
