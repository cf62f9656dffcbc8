# WAN, weak assume negative (Cole et al., "Multi-Label Learning from Single
# Positive Labels", CVPR 2021): what every dataset's WAN config of
# configs/baselines/ shares. AN with the assumed negatives weighted by
# 1/(C-1) (neg_weight=None), so that the single observed positive weighs as
# much as all assumed negatives together. The configs mirror Cole et al.'s
# own numbers, as tabulated in Kim et al., CVPR 2022, Table 1, end-to-end.
# (The "WAN" row of the LASD paper, Table 2, repeats the numbers of Zhou et
# al.'s tuned "DW" baseline: see ./baseline_dw.py and the dw_* configs.)
# Protocol, optimiser, batch size and lr (chosen), model selection without
# early stopping, loss scale, seed: ./baseline_protocol.py.
_base_ = './baseline_protocol.py'

model = dict(
    head=dict(loss=dict(_delete_=True, type='WANLoss', neg_weight=None)))
