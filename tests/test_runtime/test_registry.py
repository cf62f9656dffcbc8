"""A stock config with custom_imports builds mmlml types through
MMPretrain's registries, in a fresh interpreter (nothing pre-imported)."""
import subprocess
import sys
import textwrap

import pytest

CONFIG = """
custom_imports = dict(imports=['mmlml'], allow_failed_imports=False)
default_scope = 'mmpretrain'
loss = dict(type='HillLoss')
baseline = dict(type='ANLoss')
dataset = dict(
    type='PartialLabelDataset',
    dataset=dict(type='SyntheticShapes', num_samples=16),
    mode='single_positive')
hook = dict(type='MissingLabelDiagnosticsHook')
metric = dict(type='MultiLabelF1Metric')
"""


@pytest.fixture(scope='module')
def fresh_builds(tmp_path_factory):
    """What one fresh interpreter prints when it builds a loss from a config
    without ``custom_imports``, then mmlml components from the same config
    with them (one interpreter for both tests: a start costs seconds)."""
    folder = tmp_path_factory.mktemp('registry')
    cfg, unused = folder / 'cfg.py', folder / 'unused.py'
    cfg.write_text(CONFIG)
    unused.write_text(CONFIG.replace('custom_imports', '_unused'))
    script = textwrap.dedent(f"""
        import sys
        from mmengine.config import Config
        from mmengine.registry import DefaultScope
        cfg = Config.fromfile({str(unused)!r})
        DefaultScope.get_instance('test', scope_name='mmpretrain')
        from mmpretrain.registry import DATASETS, HOOKS, METRICS, MODELS
        try:
            MODELS.build(cfg.loss)
        except KeyError as e:
            print('KeyError')
        cfg = Config.fromfile({str(cfg)!r})  # runs custom_imports
        assert 'mmlml' in sys.modules
        DefaultScope.get_instance('test2', scope_name=cfg.default_scope)
        print('built', type(MODELS.build(cfg.loss)).__name__)
        print('built', type(MODELS.build(cfg.baseline)).__name__)
        print('built', type(DATASETS.build(cfg.dataset)).__name__)
        print('built', type(HOOKS.build(cfg.hook)).__name__)
        print('built', type(METRICS.build(cfg.metric)).__name__)
        """)
    out = subprocess.run([sys.executable, '-c', script],
                         capture_output=True,
                         text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def test_config_builds_through_mmpretrain_registries(fresh_builds):
    built = [
        line.split()[1] for line in fresh_builds.splitlines()
        if line.startswith('built ')
    ]
    assert built == [
        'HillLoss', 'ANLoss', 'PartialLabelDataset',
        'MissingLabelDiagnosticsHook', 'MultiLabelF1Metric'
    ]


def test_without_custom_imports_mmlml_types_are_unknown(fresh_builds):
    """The failure custom_imports prevents (guards against the test above
    passing for the wrong reason)."""
    assert 'KeyError' in fresh_builds
