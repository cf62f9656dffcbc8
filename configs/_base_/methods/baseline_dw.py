# DW, AN with down-weighted assumed negatives (Zhou et al., "Acknowledging
# the Unknown for Multi-label Learning with Single Positive Labels", ECCV
# 2022): what every dataset's DW config of configs/baselines/ shares. The
# WAN loss of Cole et al. (CVPR 2021, ./baseline_wan.py) with a negative
# weight tuned per dataset (each config's neg_weight) instead of 1/(C-1):
# Zhou et al., supplementary B.2, tuned it in {0.01, 0.02, 0.1, 0.2, 0.4,
# 0.9}: 0.1 for VOC, COCO and NUS-WIDE, 0.02 for CUB. The same numbers
# appear as "WAN" in the LASD paper, Table 2, and as "BCE+DW" in the OPML
# paper, Table II. The configs mirror Zhou et al.'s numbers, with their
# early stopping (./baseline_early_stopping.py); protocol, optimiser, batch
# size and lr (chosen), loss scale: ./baseline_protocol.py.
_base_ = './baseline_early_stopping.py'

model = dict(head=dict(loss=dict(_delete_=True, type='WANLoss')))
