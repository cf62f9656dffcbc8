# Demo: BCE on positives, squared error p^2 on negatives (the MSE- ablation
# of the Hill paper, Zhang et al.).
_base_ = './an.py'

model = dict(head=dict(loss=dict(_delete_=True, type='NegativeMSELoss')))
