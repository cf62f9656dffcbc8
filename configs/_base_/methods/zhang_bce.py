# BCE as Zhang et al. (Hill / SPLC paper, ./zhang_common.py) run it: what
# every dataset's BCE config of configs/hill_splc/ shares.
# Loss: binary cross-entropy, unannotated labels assumed negative (the
# official `AsymmetricLoss(gamma_neg=0, gamma_pos=0, clip=0)`);
# loss_weight = 128 and the recipe: ./zhang_common.py.
_base_ = './zhang_common.py'

model = dict(head=dict(loss=dict(type='ANLoss')))
