# Focal as Zhang et al. (Hill / SPLC paper, ./zhang_common.py) run it: what
# every dataset's Focal config of configs/hill_splc/ shares.
# Loss: focal loss, gamma 2 on both sides, no alpha, unannotated labels
# assumed negative: the official `AsymmetricLoss(gamma_neg=2, gamma_pos=2,
# clip=0)`, whose focal weights are excluded from the gradient
# (`disable_torch_grad_focal_loss=True`); the paper's eq. 3 names alpha
# weights, the code has none. The same class as ASL (./zhang_asl.py) with
# other exponents and no clipping; loss_weight = 128 and the recipe:
# ./zhang_common.py.
_base_ = './zhang_asl.py'

model = dict(head=dict(loss=dict(gamma_pos=2., gamma_neg=2., clip=0.)))
