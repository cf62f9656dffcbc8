# ROLE, regularized online label estimation (Cole et al., "Multi-Label
# Learning from Single Positive Labels", CVPR 2021): what every dataset's
# ROLE config of configs/baselines/ shares. A learnable estimate of every
# training label (ROLELabelEstimator, one logit per training sample and
# class, initialised by LabelEstimatorHook) trained jointly with the
# classifier; each fits the other's detached probabilities, both fit the
# observed positives and keep EPR's expected number of positives
# (expected_positives, num_train_samples: each config, from its dataset
# base). The configs mirror Zhou et al.'s numbers, with their early stopping
# (./baseline_early_stopping.py); protocol, optimiser, batch size and lr
# (chosen): ./baseline_protocol.py.
# - End-to-end training from the ImageNet weights (not "LinearInit").
# - The label estimator's learning rate is 10 times the network's (lr_mult
#   10 in Cole et al.'s code), without weight decay.
# - Zhou et al. (supplementary B.2) follow "the hyperparameters in [Cole et
#   al.]", which we do not have.
# - Loss scale (./baseline_protocol.py): both halves' regularisers are added
#   once, as in the official code (see ROLELoss).
_base_ = './baseline_early_stopping.py'

model = dict(
    head=dict(
        type='PartialLabelLinearClsHead',
        loss=dict(_delete_=True, type='ROLELoss'),
        label_estimator=dict(type='ROLELabelEstimator'),
    ))

optim_wrapper = dict(
    paramwise_cfg=dict(
        custom_keys={'head.label_estimator': dict(lr_mult=10, decay_mult=0)}))

# The estimator's hook, then the base's early stopping (`_base_` is the
# merged base config here, as MMEngine evaluates a config).
custom_hooks = [dict(type='LabelEstimatorHook'), *_base_.custom_hooks]
