# Demo: OPML-SP (OPML paper, Sec. III-E): the soft OPML loss, whose
# unobserved targets are eps_c * p with eps_c = AP_c ** rho (AP_c the
# class's training AP against the observed labels), plus the high-rank
# regulariser, with AP-based label correction: after each epoch from the
# warm-up on, the floor(delta * (1 - AP_c) * N_c) highest-scoring
# unobserved entries of class c become positives for good.
#   python tools/train.py configs/demo/opml_sp.py
# The paper's rho, delta and warm-up were lost with its equations: rho = 1
# and delta = 0.1 are untuned starting points, and the warm-up is half of
# the demo's 10 epochs (as APL's 5 of 10 in the EM + APL demo). The
# loss and the regulariser are those of configs/demo/opml.py and
# configs/demo/high_rank.py (a = b = 1, lambda = 1e-3).
_base_ = './an.py'

model = dict(
    head=dict(
        type='PartialLabelLinearClsHead',
        loss=dict(
            _delete_=True,
            type='LossSum',
            losses=[
                dict(type='OPMLSPLoss', a=1.0, b=1.0, rho=1.0),
                dict(type='HighRankRegularizer', loss_weight=1e-3, eps=1e-3),
            ])))

custom_hooks = [dict(type='ClassAPCorrectionHook', warmup_epochs=5, delta=0.1)]
