# Demo: the AN baseline plus the high-rank regulariser of the OPML paper,
# -lambda * log det(Y^T Y + eps I) on the batch predictions Y = sigmoid(S).
#   python tools/train.py configs/demo/high_rank.py
# The head takes one loss: LossSum adds the members' values.
_base_ = './an.py'

model = dict(
    head=dict(
        loss=dict(
            _delete_=True,
            type='LossSum',
            losses=[
                dict(type='CrossEntropyLoss', use_sigmoid=True),
                dict(type='HighRankRegularizer', loss_weight=1e-3, eps=1e-3),
            ])))
