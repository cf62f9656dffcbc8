# EPR, expected positive regularisation (Cole et al., "Multi-Label Learning
# from Single Positive Labels", CVPR 2021): what every dataset's EPR config
# of configs/baselines/ shares. The observed positives' log-loss only, plus
# a penalty keeping the batch's mean number of predicted positives near the
# dataset's mean label count k (each config's expected_positives, from its
# dataset base: Cole et al.'s 1.5 VOC, 2.9 COCO, 1.9 NUS-WIDE, 31.4 CUB).
# The configs mirror Cole et al.'s own numbers, as tabulated in Kim et al.,
# CVPR 2022, Table 1, end-to-end; the LASD paper (Table 2) reports its own
# runs of Cole et al.'s code. Protocol, optimiser, batch size and lr
# (chosen), model selection without early stopping, seed:
# ./baseline_protocol.py.
# - Loss scale (./baseline_protocol.py): the regulariser (mean predicted
#   positives - k)^2 / C^2 is added once, not averaged, as in the official
#   code (see EPRLoss).
_base_ = './baseline_protocol.py'

model = dict(head=dict(loss=dict(_delete_=True, type='EPRLoss')))
