# Demo: expected positive regularisation (EPR, Cole et al., CVPR 2021):
# observed positives only, plus a penalty keeping the batch's mean number
# of predicted positives near the dataset's mean label count.
_base_ = './an.py'

model = dict(
    head=dict(
        loss=dict(
            _delete_=True,
            type='EPRLoss',
            expected_positives={{_base_.expected_positives}})))
