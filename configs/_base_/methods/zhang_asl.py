# ASL as Zhang et al. (Hill / SPLC paper, ./zhang_common.py) run it: what
# every dataset's ASL config of configs/hill_splc/ shares.
# Loss: ASL (Ridnik et al.) with unannotated labels assumed negative, the
# official `AsymmetricLoss(gamma_neg=4, gamma_pos=0, clip=0.05)` (ASL's
# recommended setting), focal weights excluded from the gradient;
# loss_weight = 128 and the recipe: ./zhang_common.py.
_base_ = './zhang_common.py'

model = dict(
    head=dict(
        loss=dict(
            type='PartialAsymmetricLoss',
            gamma_pos=0.,
            gamma_neg=4.,
            clip=0.05,
            detach_focal_weight=True)))
