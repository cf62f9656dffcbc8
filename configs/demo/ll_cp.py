# Demo: Large Loss Matters, permanent correction (LL-Cp, Kim et al., CVPR
# 2022): from the second epoch, the largest assumed-negative losses of each
# batch (ceil(0.1% of the batch's entries), VOC's LL-Cp setting) are
# treated as positives, and LargeLossCorrectionHook keeps them positive for
# the rest of training. delta_rel is not scaled for the demo's 10 epochs:
# with 32 x 20 entries per batch it corrects one entry per batch, as the
# paper's VOC setting (8 x 20 entries) does.
#   python tools/train.py configs/demo/ll_cp.py
_base_ = './an.py'

model = dict(
    head=dict(
        type='PartialLabelLinearClsHead',
        loss=dict(
            _delete_=True, type='LargeLoss', mode='permanent',
            delta_rel=0.001)))

custom_hooks = [dict(type='LargeLossCorrectionHook')]

# The values tools/benchmark.py --tune tries (the paper's relabelling rate).
tuning = {'model.head.loss.delta_rel': [0.001, 0.002]}
