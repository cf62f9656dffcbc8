# Demo: CRISP (Liu et al., "Can Class-Priors Help Single-Positive
# Multi-Label Learning?", arXiv:2309.13886): after an AN warm-up,
# ClassPriorHook estimates every class prior after each epoch (Eq. 2: the
# threshold on the class's score that minimises the ratio of all training
# images to observed positives above it, plus a confidence bound), and
# CRISPLoss trains the risk of Eq. (7) with those priors (the observed
# positives' term plus |mean prediction - prior| per class).
#   python tools/train.py configs/demo/crisp.py --work-dir work_dirs/crisp_demo
# The estimated priors against the true ones of the training split:
#   python tools/analysis/plot_class_priors.py configs/demo/crisp.py \
#       work_dirs/crisp_demo --out crisp_priors.png
# delta = tau = 0.01 as in the paper. The paper does not say how long its
# AN warm-up is: half of the demo's 10 epochs (as the EM + APL and OPML-SP
# demos). The priors come from a pass over the training set after each
# epoch (extra_pass=True, the paper's "trained model"). With one warm-up
# epoch and the training passes' scores instead, the first estimate comes
# from a barely trained, changing model, and classes estimated near 1 stay
# there (configs/crisp/README.md).
_base_ = './an.py'

model = dict(
    head=dict(
        type='PartialLabelLinearClsHead',
        loss=dict(_delete_=True, type='CRISPLoss', correction='abs')))

custom_hooks = [
    dict(
        type='ClassPriorHook',
        delta=0.01,
        tau=0.01,
        warmup_epochs=5,
        extra_pass=True)
]
