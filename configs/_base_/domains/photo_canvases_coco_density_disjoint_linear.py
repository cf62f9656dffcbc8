# The instance-disjoint variant (photo_canvases_coco_density_disjoint.py)
# in the linear protocol: the frozen EfficientNet-Lite0's last feature
# maps (7x7x1280), cached, and the head alone.
_base_ = ['./photo_canvases_coco_density_disjoint.py']

linear_features = dict(features=dict(backbone=dict(out_indices=(6, ))))

# The identity on the cached maps replaces the backbone.
model = dict(
    backbone=dict(_delete_=True, type='PrecomputedFeatures', in_channels=1280))

train_dataloader = dict(dataset=dict(dataset=linear_features))
val_dataloader = dict(dataset=dict(dataset=linear_features))
test_dataloader = dict(dataset=linear_features)
