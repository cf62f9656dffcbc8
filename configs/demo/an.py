# Demo: the "assume negative" (AN) baseline on single positive labels of the
# embedded SyntheticShapes dataset, in the papers' regime: a backbone
# pretrained on other classes (configs/benchmark/source_pretrain.py, the
# analogue of ImageNet), fine-tuned end to end for 10 epochs; about a
# minute on a laptop CPU.
#   python tools/train.py configs/demo/an.py
# Other demo configs inherit this one and change `model.head.loss` only
# (the model's loss is BCE, MMPretrain's sigmoid CrossEntropyLoss).
# The domain (dataset, pretrained model and their variables) is one file of
# configs/_base_/domains/, chosen by the environment variable
# MMLML_DEMO_DOMAIN (default synthetic_shapes), e.g. real digits and an
# ImageNet-pretrained EfficientNet-Lite0:
#   MMLML_DEMO_DOMAIN=digit_canvases python tools/train.py configs/demo/an.py
_base_ = [
    '../_base_/domains/{{$MMLML_DEMO_DOMAIN:synthetic_shapes}}.py',
    '../_base_/schedules/demo_sgd.py',
    '../_base_/default_runtime.py',
]

# Fine-tuning: a fifth of the from-scratch learning rate, half the epochs.
optim_wrapper = dict(optimizer=dict(lr=0.01))
train_cfg = dict(max_epochs=10)

randomness = dict(seed=0, deterministic=False)
