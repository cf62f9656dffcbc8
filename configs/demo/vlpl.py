# Demo: VLPL (Xing et al., CVPR 2024 Workshops): entropy maximisation on
# the unannotated labels, and a weighted, label-smoothed cross-entropy on
# the pseudo-labels a frozen CLIP model gives the training images (in the
# paper: pseudo-positive where CLIP's score is above 0.3), read from the
# label store of a PartialLabelLinearClsHead. VOC's alpha, the code's
# beta_pos = 0.7 and beta_neg = 0. The loss is kept on the head's scale
# (sum over classes / N) so the demo learning rate carries over;
# loss_weight=1 / num_classes gives the official scale.
# The embedded demo has no CLIP weights: the scores come from a classifier
# trained earlier (configs/demo/an.py) through the same pseudo-labeller
# interface (ModelPseudoLabeller), pseudo-positive at 0.3 like VLPL's
# threshold. From the repository root:
#   python tools/train.py configs/demo/an.py --work-dir work_dirs/an
#   python tools/vl_pseudo_label.py configs/demo/vlpl.py \
#       --out work_dirs/an/scores.npy --labeller-options \
#       type=ModelPseudoLabeller config=configs/demo/an.py \
#       checkpoint=work_dirs/an/best_multi-label_mAP_epoch_10.pth
#   python tools/train.py configs/demo/vlpl.py
# (tools/benchmark.py makes the scores from its own first stage.) With
# CLIP: configs/vlpl/README.md and docs/pseudo_labels.md.
_base_ = './an.py'

model = dict(
    head=dict(
        type='PartialLabelLinearClsHead',
        loss=dict(
            _delete_=True,
            type='VLPLLoss',
            alpha=0.2,
            beta_pos=0.7,
            beta_neg=0.0,
            smoothing=0.1)))

custom_hooks = [
    dict(
        type='VLPseudoLabelHook',
        scores_file='work_dirs/an/scores.npy',
        pos_thr=0.3)
]
# The first stage and where its scores go, for tools/benchmark.py.
first_stage = dict(config='./an.py', scores_hook='VLPseudoLabelHook')
