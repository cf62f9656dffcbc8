# Demo: entropy maximisation with asymmetric pseudo-labelling (EM + APL,
# Zhou et al., ECCV 2022). After each epoch from the warm-up on, APLHook
# turns the lowest-scoring unannotated entries of every class into soft
# negative pseudo-labels (their probability at that moment), which the
# loss fits with weight beta. The demo fine-tunes for the paper's 10
# epochs, with VOC's warm-up of 5, alpha and beta (Table 6).
# The scores come from the training forward pass; APLHook(extra_pass=True)
# runs the official separate pass instead.
_base_ = './an.py'

model = dict(
    head=dict(
        type='PartialLabelLinearClsHead',
        loss=dict(_delete_=True, type='EMAPLLoss', alpha=0.2, beta=0.02)))

custom_hooks = [dict(type='APLHook', warmup_epochs=5, theta=0.9)]

# The values tools/benchmark.py --tune tries (the weight of the entropy
# term, which the EM paper tunes).
tuning = {'model.head.loss.alpha': [0.2, 0.1]}
