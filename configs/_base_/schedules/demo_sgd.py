# A short SGD schedule for the CPU demo: one linear warm-up epoch, then
# cosine annealing to the end of training; validation after every epoch.
# CosineAnnealingToEndLR is MMEngine's CosineAnnealingLR that also builds
# in a run of one epoch (where the annealing never starts), so that
# MMPretrain's own tools/train.py runs a one-epoch smoke test as well.
optim_wrapper = dict(
    optimizer=dict(
        type='SGD', lr=0.05, momentum=0.9, weight_decay=5e-4, nesterov=True))

param_scheduler = [
    dict(
        type='LinearLR',
        start_factor=0.1,
        by_epoch=True,
        begin=0,
        end=1,
        convert_to_iter_based=True),
    dict(
        type='CosineAnnealingToEndLR',
        by_epoch=True,
        begin=1,
        eta_min=0.,
        convert_to_iter_based=True),
]

train_cfg = dict(by_epoch=True, max_epochs=20, val_interval=1)
val_cfg = dict()
test_cfg = dict()
