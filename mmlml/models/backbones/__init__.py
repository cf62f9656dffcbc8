"""Backbones that MMPretrain lacks: EfficientNet-Lite0, for the ImageNet
weights of the real-image benchmark domains, and the identity on cached
feature maps, for their linear protocol."""
from .efficientnet_lite import EfficientNetLite
from .precomputed_features import PrecomputedFeatures

__all__ = ['EfficientNetLite', 'PrecomputedFeatures']
