# Demo: Focal margin + SPLC (Zhang et al., "Simple and Robust Loss Design
# for Multi-Label Learning with Missing Labels"): from the second epoch
# (0-based epoch 1) on, an unannotated label with probability above 0.6 is
# a positive for the batch. Official defaults; the epoch comes from the
# Runner's MessageHub. The official code sums over the batch; the demo
# keeps the head's mean over samples.
_base_ = './an.py'

model = dict(
    head=dict(
        loss=dict(
            _delete_=True,
            type='SPLCLoss',
            tau=0.6,
            change_epoch=1,
            margin=1.0,
            gamma=2.0)))

# The values tools/benchmark.py --tune tries (SPLC's threshold, which the
# paper tunes).
tuning = {'model.head.loss.tau': [0.6, 0.7, 0.8]}
