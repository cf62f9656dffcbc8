# The real-photo domain in the linear protocol (Cole et al.'s "linear"):
# EfficientNet-Lite0 frozen at 224 px, its last feature maps (7x7x1280)
# computed once per split and cached, the head trained alone (seconds per
# run). The spatial maps are kept, so BoostLU's class-activation head runs
# too.
#   MMLML_DEMO_DOMAIN=photo_canvases_linear \
#       python tools/train.py configs/demo/hill.py
# Everything else is photo_canvases.py's.
_base_ = ['./photo_canvases.py']

linear_features = dict(features=dict(backbone=dict(out_indices=(6, ))))

# The identity on the cached maps replaces the backbone.
model = dict(
    backbone=dict(_delete_=True, type='PrecomputedFeatures', in_channels=1280))

train_dataloader = dict(dataset=dict(dataset=linear_features))
val_dataloader = dict(dataset=dict(dataset=linear_features))
test_dataloader = dict(dataset=linear_features)
