# Focal margin + SPLC (Zhang et al., Hill / SPLC paper, ./zhang_common.py):
# what every dataset's SPLC config of configs/hill_splc/ shares.
# Loss: Focal margin + SPLC: focal loss (gamma 2) on both sides, the logits
# of observed positives lowered by m = 1; from the second epoch on (0-based
# epoch 1, Sec. IV-D), an unannotated label with p > tau = 0.6 counts as a
# positive for its batch (the official `SPLC()` defaults, and the paper's
# fixed tau = 0.6, Sec. IV-D; COCO-75% uses tau 0.65 after the official
# README, not the paper, set by that config); loss_weight = 128 and the
# recipe: ./zhang_common.py.
_base_ = './zhang_common.py'

model = dict(
    head=dict(
        loss=dict(
            type='SPLCLoss', tau=0.6, change_epoch=1, margin=1., gamma=2.)))
