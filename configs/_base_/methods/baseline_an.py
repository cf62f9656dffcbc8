# AN, assume negative (Cole et al., "Multi-Label Learning from Single
# Positive Labels", CVPR 2021): BCE with every unannotated label a negative.
# What every dataset's AN config of configs/baselines/ shares, and the
# full-label oracle's (bce_*: the same loss on the full-label dataset bases,
# where training uses every label of the training split). Both mirror Zhou et
# al.'s numbers, with their early stopping (./baseline_early_stopping.py);
# protocol, optimiser, batch size, lr and loss scale: ./baseline_protocol.py.
# - Batch size and lr (each config): the EM authors' official code
#   (Correr-Zhou/SPML-AckTheUnknown, main.py) trains this loss, on single
#   positive and on full labels, with these per-dataset values.
# - ANLoss equals MMPretrain's sigmoid CrossEntropyLoss on single positive
#   labels; on full labels it is BCE that reads the -1 targets of observed
#   negatives.
_base_ = './baseline_early_stopping.py'

model = dict(head=dict(loss=dict(_delete_=True, type='ANLoss')))
