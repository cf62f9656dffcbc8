# Demo: GR Loss (Chen et al., IJCAI 2024) on the single-positive demo data.
#   python tools/train.py configs/demo/gr.py
# Default hyperparameters (the paper's VOC setting); the schedules of
# (w, b) and (mu, sigma) run over the Runner's max_epochs. The loss is kept
# on the head's scale (sum over classes / N) so the demo learning rate
# carries over; loss_weight=1 / num_classes gives the official scale.
_base_ = './an.py'

model = dict(
    head=dict(
        loss=dict(
            _delete_=True,
            type='GRLoss',
            q2=0.01,
            q3=1.0,
            beta=(0, 2, -2, -2),
            alpha=(0.5, 2, 0.8, 0.5))))
