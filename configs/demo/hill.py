# Demo: Hill loss (Zhang et al., "Simple and Robust Loss Design for
# Multi-Label Learning with Missing Labels"): focal margin on observed
# positives (m 1, gamma 2), (1.5 - p) p^2 on every other label. The
# official code sums over the batch; the demo keeps the head's mean over
# samples.
_base_ = './an.py'

model = dict(
    head=dict(
        loss=dict(
            _delete_=True, type='HillLoss', lamb=1.5, margin=1.0, gamma=2.0)))
