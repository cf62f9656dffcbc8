# Demo: GPR Loss of AEVLP (Tran et al., ICCV 2025): GR Loss on the
# unannotated labels, a weighted cross-entropy on CLIP's pseudo-positives
# (weight 1 - v, v clipped to [1 - lam1, 1 - lam2]) and pseudo-negatives,
# and the expected-positive regulariser; the pseudo-labels are read from
# the label store of a PartialLabelLinearClsHead. VOC's settings of the
# code (configs/pascal.json); the schedules run over the Runner's
# max_epochs. The loss is kept on the head's scale (sum over classes / N)
# so the demo learning rate carries over; loss_weight=1 / num_classes
# gives the official scale.
# The embedded demo has no CLIP weights: the scores come from a classifier
# trained earlier (configs/demo/an.py) through the same pseudo-labeller
# interface (ModelPseudoLabeller), pseudo-positive at 0.3 like VLPL's
# threshold. From the repository root:
#   python tools/train.py configs/demo/an.py --work-dir work_dirs/an
#   python tools/vl_pseudo_label.py configs/demo/gpr.py \
#       --out work_dirs/an/scores.npy --labeller-options \
#       type=ModelPseudoLabeller config=configs/demo/an.py \
#       checkpoint=work_dirs/an/best_multi-label_mAP_epoch_10.pth
#   python tools/train.py configs/demo/gpr.py
# (tools/benchmark.py makes the scores from its own first stage.) With
# CLIP: configs/aevlp/README.md and docs/pseudo_labels.md.
_base_ = './an.py'

model = dict(
    head=dict(
        type='PartialLabelLinearClsHead',
        loss=dict(
            _delete_=True,
            type='GPRLoss',
            q2=0.01,
            q3=1.0,
            beta=(0, 2, -2, -2),
            alpha=(0.5, 2, 0.8, 0.5),
            rho=0.9,
            lam=(0.7, 0.4),
            reg=0.05,
            expected_positives={{_base_.expected_positives}})))

custom_hooks = [
    dict(
        type='VLPseudoLabelHook',
        scores_file='work_dirs/an/scores.npy',
        pos_thr=0.3)
]
# The first stage and where its scores go, for tools/benchmark.py.
first_stage = dict(config='./an.py', scores_hook='VLPseudoLabelHook')
