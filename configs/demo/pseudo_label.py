# Demo: the two-stage "BCE + pseudo label" baseline of the Hill/SPLC paper
# (Zhang et al.): train with BCE (configs/demo/an.py), relabel the training
# set with that model (unannotated labels with a probability > thr become
# positives), then train BCE again on the new labels. This config is the
# second stage; the three commands, from the repository root:
#   python tools/train.py configs/demo/an.py --work-dir work_dirs/an
#   python tools/pseudo_label.py configs/demo/an.py \
#       work_dirs/an/best_multi-label_mAP_epoch_*.pth \
#       --out work_dirs/an/pseudo_labels.npy --thr 0.5
#   python tools/train.py configs/demo/pseudo_label.py
# The label file holds the observed labels of all 2500 training images
# (training and validation rows, before the split), so the split and the
# clean validation labels are those of an.py.
# Another label file: --cfg-options train_dataloader.dataset.label_file=PATH
_base_ = ['./an.py']

# The first stage and the threshold, for tools/benchmark.py, which makes
# the label file itself.
first_stage = dict(config='./an.py', thr=0.5)

train_dataloader = dict(
    dataset=dict(mode='file', label_file='work_dirs/an/pseudo_labels.npy'))
