# AN-LS, assume negative with label smoothing (Cole et al., "Multi-Label
# Learning from Single Positive Labels", CVPR 2021): what every dataset's
# AN-LS config of configs/baselines/ shares. AN with the targets of every
# label smoothed, 0.9 for the observed positive and 0.1 for the others
# (smoothing 0.1: Cole et al.'s code; Zhou et al., supplementary B.2, select
# 0.1 on all four datasets). The configs mirror Zhou et al.'s numbers, with
# their early stopping (./baseline_early_stopping.py); protocol, optimiser,
# batch size and lr (chosen), loss scale: ./baseline_protocol.py.
_base_ = './baseline_early_stopping.py'

model = dict(
    head=dict(loss=dict(_delete_=True, type='ANLSLoss', smoothing=0.1)))
