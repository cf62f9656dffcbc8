# Demo: a combined recipe, not from a paper: BoostLU's boosted
# class-activation-map head (Kim et al., CVPR 2023; alpha = 5) with the
# entropy-maximisation loss (configs/demo/em.py) instead of BoostLU's own
# large-loss rejection. The two act on different things: BoostLU sharpens
# which positions of the feature map a class's logit comes from, EM keeps
# the unannotated labels from being pushed to a hard 0. On the real-photo
# domain BoostLU led with full labels and EM in single positive.
#   python tools/train.py configs/demo/boostlu_em.py
_base_ = './em.py'

model = dict(neck=None, head=dict(type='BoostLUClsHead', alpha=5.0))
