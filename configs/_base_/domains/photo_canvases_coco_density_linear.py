# The real-photo domain at COCO's label density
# (photo_canvases_coco_density.py) in the linear protocol, as
# photo_canvases_heldout_linear.py is photo_canvases_heldout.py's: the
# frozen EfficientNet-Lite0's last feature maps (7x7x1280), cached, and the
# head alone.
#   MMLML_DEMO_DOMAIN=photo_canvases_coco_density_linear \
#       python tools/train.py configs/demo/hill.py
_base_ = ['./photo_canvases_coco_density.py']

linear_features = dict(features=dict(backbone=dict(out_indices=(6, ))))

# The identity on the cached maps replaces the backbone.
model = dict(
    backbone=dict(_delete_=True, type='PrecomputedFeatures', in_channels=1280))

train_dataloader = dict(dataset=dict(dataset=linear_features))
val_dataloader = dict(dataset=dict(dataset=linear_features))
test_dataloader = dict(dataset=linear_features)
