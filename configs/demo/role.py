# Demo: regularized online label estimation (ROLE, Cole et al., CVPR 2021):
# a learnable estimate of every training label (a logit per sample and
# class, part of the model), trained jointly with the classifier; each
# fits the other's detached probabilities, both fit the observed positives
# and both keep EPR's expected number of positives.
# The estimator holds one row per training sample: the demo's 2500
# training images minus the 20% validation split = 2000
# (LabelEstimatorHook checks it and initialises the estimates). As in the
# official code its learning rate is 10 times the network's, without
# weight decay (which would pull every estimate towards 0.5).
_base_ = './an.py'

model = dict(
    head=dict(
        type='PartialLabelLinearClsHead',
        loss=dict(
            _delete_=True,
            type='ROLELoss',
            expected_positives={{_base_.expected_positives}}),
        label_estimator=dict(
            type='ROLELabelEstimator',
            num_samples={{_base_.num_train_samples}},
            num_classes={{_base_.num_classes}})))

optim_wrapper = dict(
    paramwise_cfg=dict(
        custom_keys={'head.label_estimator': dict(lr_mult=10, decay_mult=0)}))

custom_hooks = [dict(type='LabelEstimatorHook')]
