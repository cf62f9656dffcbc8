# Demo: entropy-maximisation loss (Zhou et al., ECCV 2022) on the
# single-positive demo data.
#   python tools/train.py configs/demo/em.py
# The loss is kept on the head's scale (sum over classes / N) so the demo
# learning rate carries over; loss_weight=1 / num_classes gives the official
# scale.
_base_ = './an.py'

model = dict(head=dict(loss=dict(_delete_=True, type='EMLoss', alpha=0.1)))

# The values tools/benchmark.py --tune tries (the weight of the entropy
# term, which the EM paper tunes).
tuning = {'model.head.loss.alpha': [0.1, 0.05, 0.2]}
