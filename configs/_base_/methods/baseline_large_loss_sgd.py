# LL-R, LL-Ct and LL-Cp (Kim et al., CVPR 2022) on PASCAL VOC 2012: the Large
# Loss recipe (./baseline_large_loss.py) with its VOC optimiser. SGD (lr
# 5e-3 in each config: METHODS.md "Baselines", Kim et al.'s VOC setting),
# momentum 0.9 and weight decay 1e-3 on every parameter
# (snucml/LargeLossMatters, train.py), constant learning rate.
_base_ = './baseline_large_loss.py'

optim_wrapper = dict(
    optimizer=dict(_delete_=True, type='SGD', momentum=0.9, weight_decay=1e-3))
