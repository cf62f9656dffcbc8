# Demo: a combined recipe, not from a paper: VLPL's loss (vlpl.py) on the
# pseudo-labels of the entropy-maximisation model (em.py) instead of the
# assume-negative one. VLPL pseudo-labels with a frozen model's scores
# (CLIP in its paper, a classifier trained earlier in the demo); EM is the
# stronger single-positive model of the two on the demo domains, so its
# scores should hide fewer positives among the pseudo-negatives. The
# first stage is an ordinary em.py run; tools/benchmark.py uses that
# config's chosen run, as it does an.py's for vlpl.py.
#   python tools/train.py configs/demo/em.py --work-dir work_dirs/em
#   python tools/vl_pseudo_label.py configs/demo/vlpl_em.py \
#       --out work_dirs/em/scores.npy --labeller-options \
#       type=ModelPseudoLabeller config=configs/demo/em.py \
#       checkpoint=work_dirs/em/best_multi-label_mAP_epoch_10.pth
#   python tools/train.py configs/demo/vlpl_em.py
_base_ = './vlpl.py'

custom_hooks = [
    dict(
        type='VLPseudoLabelHook',
        scores_file='work_dirs/em/scores.npy',
        pos_thr=0.3)
]
# The first stage and where its scores go, for tools/benchmark.py.
first_stage = dict(config='./em.py', scores_hook='VLPseudoLabelHook')
