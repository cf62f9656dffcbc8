"""BoostLU: a linear multi-label head that boosts the positive class
activations of the unpooled feature map before pooling them."""
from typing import Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor

from mmlml.registry import MODELS
from mmlml.utils.hyperparameters import Real, check_settings
from .partial_label_linear_cls_head import PartialLabelLinearClsHead

__all__ = ['BoostLUClsHead']


@MODELS.register_module()
class BoostLUClsHead(PartialLabelLinearClsHead):
    r"""BoostLU (Kim et al., "Bridging the Gap between Model Explanations in
    Partially Annotated Multi-label Classification", CVPR 2023).

    The linear classifier is applied at every position of the backbone's
    unpooled feature map, giving the class activation map (CAM); its
    positive values are multiplied by ``alpha`` (its negative values are
    kept), then the map is averaged over the positions:

    .. math::

        \mathrm{CAM}_c(h, w) = w_c^\top f_{hw} + b_c, \qquad
        \mathrm{logit}_c = \frac{1}{HW} \sum_{h, w}
        \mathrm{boost}(\mathrm{CAM}_c(h, w)),

    with :math:`\mathrm{boost}(z) = \alpha z` for :math:`z > 0`, else
    :math:`z`. This is the official code's forward
    (youngwk/BridgeGapExplanationPAMC, ``models.py``,
    ``ImageClassifier.forward``): a 1x1 convolution with bias, then
    ``torch.where(CAM > 0, CAM * alpha, CAM)``, then global average
    pooling. The bias is part of the CAM, so it is boosted with it (a bias
    added after pooling would give other logits wherever the CAM changes
    sign). The same forward is used in training and at test time, and
    there is no extra loss: BoostLU is combined with any loss (the paper
    pairs it with LL-R, LL-Ct and LL-Cp, ``LargeLoss``).

    With ``alpha=1`` the head is the linear head on the average-pooled
    features (the pooling and the classifier are both linear). The weights
    are those of ``PartialLabelLinearClsHead`` (``fc``, an ``(C, D)``
    ``nn.Linear``, initialised like the official ``nn.Conv2d(D, C, 1)``
    when ``init_cfg=None``), so checkpoints load into either head.

    The head needs the spatial map: configs set ``model.neck=None``, so
    that MMPretrain's ``ImageClassifier`` hands it the backbone's output
    tuple, whose last ``(N, D, H, W)`` map it classifies::

        model = dict(neck=None,
                     head=dict(type='BoostLUClsHead', alpha=5.0, ...))

    Per-sample state (LL-Cp's corrections, ...) reaches the loss as in
    :class:`~.PartialLabelLinearClsHead`.

    Args:
        alpha (float): The factor of the positive CAM values, > 0. The
            official default, 5, is used for every dataset.
        *args, **kwargs: The arguments of ``PartialLabelLinearClsHead``
            (``num_classes``, ``in_channels``, ``loss``, ...).
    """

    hyperparameters = dict(
        **PartialLabelLinearClsHead.hyperparameters,
        alpha=Real(5.0, low=0, low_open=True))

    def __init__(self,
                 *args,
                 label_estimator: Optional[dict] = None,
                 alpha: float = 5.0,
                 **kwargs):
        super().__init__(*args, label_estimator=label_estimator, **kwargs)
        self.alpha = alpha
        check_settings(self)

    def class_activation_map(self, feats: Tuple[Tensor]) -> Tensor:
        """The boosted class activation map ``(N, C, H, W)`` of the last
        feature map of ``feats``, before pooling."""
        x = self.pre_logits(feats)
        if x.dim() != 4:
            shape = tuple(x.shape)
            hint = (' (pooled features: set model.neck=None, so that the '
                    'neck does not pool the backbone\'s feature map)'
                    if x.dim() == 2 else '')
            raise ValueError(
                f'{type(self).__name__} needs the unpooled feature map '
                f'(N, C, H, W) of the backbone, got a tensor of shape '
                f'{shape}{hint}.')
        channels = self.fc.in_features
        if x.shape[1] != channels or x.shape[2] == 0 or x.shape[3] == 0:
            raise ValueError(
                f'{type(self).__name__} expects a feature map (N, '
                f'{channels}, H, W) with H, W >= 1, got {tuple(x.shape)}: '
                f'set the head\'s in_channels to the channels of the '
                'backbone\'s last feature map, and give images large enough '
                'for the backbone to keep a spatial position.')
        cam = F.conv2d(x, self.fc.weight[:, :, None, None], self.fc.bias)
        return torch.where(cam > 0, cam * self.alpha, cam)

    def forward(self, feats: Tuple[Tensor]) -> Tensor:
        """The logits ``(N, C)``: the boosted CAM averaged over positions."""
        return self.class_activation_map(feats).mean(dim=(2, 3))

    def extra_repr(self) -> str:
        return f'alpha={self.alpha:g}'
