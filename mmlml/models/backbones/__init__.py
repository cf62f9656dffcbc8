"""Backbones that MMPretrain lacks: EfficientNet-Lite0, for the ImageNet
weights of the digits benchmark domain."""
from .efficientnet_lite import EfficientNetLite

__all__ = ['EfficientNetLite']
