"""A misspelt ``type`` or setting in a config names the closest registered
names and the settings of the class that was built
(mmlml.compat.build_messages); a build that succeeds, and any other error,
are MMEngine's."""
import pytest
from mmengine.registry import MODELS as MMENGINE_MODELS
from mmengine.registry import DefaultScope, Registry
from mmpretrain.registry import MODELS

import mmlml  # noqa: F401  (applies the fixes)
from mmlml.compat.build_messages import (closest_names, settings_of,
                                         unknown_setting_message)


@pytest.fixture(autouse=True)
def mmpretrain_scope():
    """Builds under ``default_scope='mmpretrain'``, as a config's."""
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        yield


@pytest.mark.parametrize(
    'registry', [MODELS, MMENGINE_MODELS], ids=['mmpretrain', 'mmengine'])
@pytest.mark.parametrize('typo, closest', [('HilLoss', 'HillLoss'),
                                           ('hillloss', 'HillLoss'),
                                           ('ResNt', 'ResNet')])
def test_unknown_type_names_the_closest(registry, typo, closest):
    with pytest.raises(KeyError) as info:
        registry.build(dict(type=typo))
    message = info.value.args[0]
    assert message.startswith(f'{typo} is not in the mmpretrain::model '
                              f'registry: did you mean {closest}')
    assert 'custom_imports' in message and '\n' not in message


def test_unknown_type_without_a_close_name():
    with pytest.raises(KeyError, match='has no name close to it'):
        MODELS.build(dict(type='Zzzzqqqq'))


@pytest.mark.parametrize('cfg, owner, typo, guess', [
    (dict(type='HillLoss', lambd=1.5), 'HillLoss', 'lambd', 'lamb'),
    (dict(type='ResNet', depht=18), 'ResNet', 'depht', 'depth'),
])
def test_unknown_setting_names_the_class_and_its_settings(
        cfg, owner, typo, guess):
    """``lambd`` is reported against HillLoss (not the PartialLabelLoss base
    it passes its other settings to), with the closest and every setting."""
    with pytest.raises(TypeError) as info:
        MODELS.build(cfg)
    message = str(info.value)
    assert message.startswith(f"{owner} has no setting '{typo}': did you "
                              f"mean '{guess}'? its settings are ")
    assert 'PartialLabelLoss' not in message


def test_nested_build_is_explained_once():
    """The loss inside a head inside a classifier: the innermost build
    names the loss; the builds around it pass its error on."""
    cfg = dict(
        type='ImageClassifier',
        backbone=dict(type='ResNet', depth=18),
        head=dict(
            type='MultiLabelLinearClsHead',
            num_classes=3,
            in_channels=512,
            loss=dict(type='HillLoss', lambd=1)))
    with pytest.raises(TypeError, match=r"^HillLoss has no setting 'lambd'"):
        MODELS.build(cfg)
    cfg['head']['loss'] = dict(type='HilLoss')
    with pytest.raises(KeyError, match='did you mean HillLoss'):
        MODELS.build(cfg)


def test_other_errors_and_builds_are_unchanged():
    """A setting with a bad value keeps the class's own message; a
    successful build is MMEngine's; a registry of another project too."""
    with pytest.raises(ValueError, match=r'^lamb must lie in \[1, inf\]'):
        MODELS.build(dict(type='HillLoss', lamb=0.5))
    assert type(MODELS.build(dict(type='HillLoss'))).__name__ == 'HillLoss'
    things = Registry('things')

    @things.register_module()
    class Thing:

        def __init__(self, size=1):
            if size < 0:
                raise TypeError("got an unexpected keyword argument 'size'")

    # The class's own TypeError about a setting it does take: unchanged.
    with pytest.raises(TypeError, match='^got an unexpected keyword'):
        things.build(dict(type='Thing', size=-1))
    with pytest.raises(TypeError, match="Thing has no setting 'sizes'"):
        things.build(dict(type='Thing', sizes=2))


def test_helpers():
    assert closest_names('HilLoss', ['HillLoss', 'Other']) == ['HillLoss']
    assert closest_names('x', ['HillLoss']) == []
    assert settings_of(
        MODELS.get('HillLoss'))[:3] == ['lamb', 'margin', 'gamma']
    assert 'reduction' in settings_of(MODELS.get('HillLoss'))
    assert unknown_setting_message(dict, 'x').startswith('dict has no '
                                                         "setting 'x'")
