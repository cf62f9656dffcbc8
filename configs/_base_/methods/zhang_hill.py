# Hill (Zhang et al., Hill / SPLC paper, ./zhang_common.py): what every
# dataset's Hill config of configs/hill_splc/ shares.
# Loss: Hill: focal margin on observed positives (margin m = 1, gamma = 2;
# eq. 11, Sec. IV-D: m = 1 in all experiments), (lambda - p) p^2 on every
# other label with lambda = 1.5 (eq. 5); the official `Hill()` defaults;
# loss_weight = 128 and the recipe: ./zhang_common.py.
_base_ = './zhang_common.py'

model = dict(
    head=dict(loss=dict(type='HillLoss', lamb=1.5, margin=1., gamma=2.)))
