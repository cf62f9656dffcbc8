# Focal margin + SPLC on MS-COCO 2014 with 75% of the labels left (missing
# ratio r = 0.5), ResNet-50.
# Mirrors: Zhang et al. (arXiv:2112.07368), Table III, row "Focal margin + SPLC
# (Ours)", column "75% labels left": test mAP 78.44.
# As splc_resnet50_1xb128_coco2014-40left.py (loss, loss scale, recipe) with
# Zhang et al.'s file data/coco/coco_train_0.75left.txt.
# tau = 0.65: the official README ("Note that when SPLC is used on COCO-75%
# labels left, the threshold is set 0.65, and the hyperparameters in other
# cases are set by default."), the setting of the official code for this
# result, kept here. The paper instead states one tau for all settings
# (Sec. IV-D: "We set the threshold tau to a fixed high value of 0.6").
_base_ = ['./splc_resnet50_1xb128_coco2014-40left.py']

train_dataloader = dict(
    dataset=dict(label_file='data/coco/coco_train_0.75left.txt'))

model = dict(head=dict(loss=dict(tau=0.65)))
