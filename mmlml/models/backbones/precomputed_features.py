"""The identity as a backbone, for inputs that already are a backbone's
feature maps (the linear protocol's cached features)."""
from typing import Optional, Tuple

from mmpretrain.models.backbones.base_backbone import BaseBackbone
from torch import Tensor

from mmlml.registry import MODELS
from mmlml.utils.hyperparameters import Integer, check_settings

__all__ = ['PrecomputedFeatures']


@MODELS.register_module()
class PrecomputedFeatures(BaseBackbone):
    """A backbone that returns its input: the ``(N, C, h, w)`` feature maps
    of a frozen backbone, computed once by the dataset (e.g.
    :class:`~mmlml.datasets.PhotoCanvases` with ``features=...``), so that
    training updates only the neck and the head, in seconds (Cole et al.'s
    linear protocol). A pooling neck gives a linear head its features; a
    head that reads class activation maps (``BoostLUClsHead``, with
    ``neck=None``) gets the spatial maps.

    Args:
        in_channels (int, optional): The number of channels of the maps;
            checked on every batch when given (a feature cache of another
            backbone fails at once). Defaults to None.
        init_cfg (dict, optional): Unused (no weights); accepted like every
            backbone's. Defaults to None.

    Shape:
        - input: ``(N, C, h, w)``.
        - output: the tuple ``(input, )``.
    """

    hyperparameters = dict(in_channels=Integer(None, low=1, optional=True))

    def __init__(self,
                 *,
                 in_channels: Optional[int] = None,
                 init_cfg: Optional[dict] = None):
        super().__init__(init_cfg=init_cfg)
        self.in_channels = in_channels
        check_settings(self)

    def forward(self, x: Tensor) -> Tuple[Tensor]:
        if x.dim() != 4 or (self.in_channels is not None
                            and x.shape[1] != self.in_channels):
            raise ValueError(
                'PrecomputedFeatures takes (N, C, h, w) feature maps with '
                f'C = {self.in_channels}, got a tensor of shape '
                f'{tuple(x.shape)}: is the dataset giving images instead '
                'of its cached features (features=dict(...))?')
        return (x, )
