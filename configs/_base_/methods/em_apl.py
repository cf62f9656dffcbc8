# EM loss + APL (Zhou et al., "Acknowledging the Unknown for Multi-label
# Learning with Single Positive Labels", ECCV 2022): what every dataset's
# EM + APL config of configs/em_apl/ shares. Each config adds its dataset
# base (Cole et al.'s single-positive protocol) and its values of alpha,
# beta, T_w, batch size and lr.
#
# Everything but the method is the EM recipe (./em_loss.py), which this one
# inherits (see its comments for the sources): ResNet-50, 448x448, flip,
# Adam, 10 epochs, early stopping, best epoch by validation mAP, the metrics
# at 0.75, loss_weight = 1 / num_classes (the official mean over N x C);
# each config takes the batch size and lr of the EM config of its dataset.
# The method (paper Sec. 3.3, Algorithm 1, Eq. 8; code main.py and
# losses.py):
# - alpha, beta, T_w (each config) and theta = 90% (all four datasets):
#   paper Table 6 (Appendix B.2) and code.
# - After each epoch e >= T_w (1-based), for every class, the
#   int(theta * Z_c / (T - T_w)) unannotated entries with the lowest
#   probability (Z_c: unannotated entries of the class in the initial
#   labels) become soft negative pseudo-labels s = p, fitted with
#   beta * BCE(p, s): APLHook + EMAPLLoss. Each config's `custom_hooks`
#   lists EM's early stopping and the APLHook with its T_w
#   (`warmup_epochs`).
# - The probabilities come from a separate pass over the training set with
#   the model in eval mode and the training augmentation, as in the code
#   (`aysmmetric_pseudo_labeling` in main.py): `extra_pass=True`. mmlml's
#   default (extra_pass=False) would reuse the training forward pass
#   (train-mode BatchNorm, weights changing during the epoch) and save
#   that pass; the official one costs one forward pass over the training
#   set per epoch from T_w on. It works on one GPU and under DDP (every
#   rank scores its shard, the label store gathers them).
# - The code also pseudo-labels after the last epoch, which trains
#   nothing; APLHook skips that call.
_base_ = './em_loss.py'

model = dict(
    head=dict(
        type='PartialLabelLinearClsHead',
        loss=dict(_delete_=True, type='EMAPLLoss')))
