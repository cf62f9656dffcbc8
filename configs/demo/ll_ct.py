# Demo: Large Loss Matters, temporary correction (LL-Ct, Kim et al., CVPR
# 2022): from the second epoch, the largest assumed-negative losses of each
# batch are treated as positives for that batch, 0.2% more of the batch's
# entries per epoch (VOC's setting).
_base_ = './an.py'

model = dict(
    head=dict(
        loss=dict(
            _delete_=True, type='LargeLoss', mode='temporary',
            delta_rel=0.002)))

# The values tools/benchmark.py --tune tries (the paper's relabelling rate).
tuning = {'model.head.loss.delta_rel': [0.002, 0.001, 0.004]}
