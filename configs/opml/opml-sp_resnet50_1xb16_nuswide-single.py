# OPML-SP (Li, Wang and Chen, arXiv:2302.14695, 2023) on NUS-WIDE with single
# positive labels. Mirrors Table II, row "OPML-SP (Ours)", column NUS: test mAP
# 50.14 (0.09), mean (std) of three runs (the same number is the last row of
# the Table IV ablation: OPML + high-rank + smoothing + correction).
# Batch 16: chosen, the value the GR and EM papers use on NUS (see the recipe).
# The recipe, sources and shared choices: configs/_base_/methods/opml_sp.py.
_base_ = [
    '../_base_/datasets/nus_wide_single_positive.py',
    '../_base_/methods/opml_sp.py',
]

model = dict(head=dict(num_classes={{_base_.num_classes}}))
train_dataloader = dict(batch_size=16)
auto_scale_lr = dict(base_batch_size=16)
