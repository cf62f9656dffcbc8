# Demo: leveraged asymmetric loss with disambiguation (LASD), without the
# multi-view consistency term: gamma+ 0, gamma- 4, the VOC values of the
# paper's Table 4 (lambda+ 0.1, tau 0.9; 20 classes like the demo data),
# lambda- from Theorem 5.4 with the dataset's mean label count and the
# number of classes of the logits.
_base_ = './an.py'

model = dict(
    head=dict(
        loss=dict(
            _delete_=True,
            type='LASDLoss',
            lambda_pos=0.1,
            tau=0.9,
            gamma_pos=0.0,
            gamma_neg=4.0,
            expected_positives={{_base_.expected_positives}})))
