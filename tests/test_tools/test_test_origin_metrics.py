"""tools/test.py --out keeps the regular model's metrics (``*_origin``)
beside the EMA model's when an EMA hook evaluates both, as the log does."""
import importlib.util
import json
import os.path as osp

import torch
from conftest import ROOT
from mmengine.config import Config
from mmengine.registry import DefaultScope
from mmpretrain.registry import MODELS

import mmlml  # noqa: F401


def load_test_tool():
    spec = importlib.util.spec_from_file_location(
        'mmlml_test_tool', osp.join(ROOT, 'tools', 'test.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _weights(config, seed):
    cfg = Config.fromfile(config)
    torch.manual_seed(seed)
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        model = MODELS.build(cfg.model)
    return model.state_dict()


def test_out_keeps_origin_metrics(tiny_demo_config, tmp_path):
    config = tiny_demo_config()
    ema_config = tmp_path / 'tiny_ema.py'
    ema_config.write_text(f"""
_base_ = [{config!r}]
custom_hooks = [
    dict(type='EMAHook', momentum=0.0003, update_buffers=True,
         evaluate_on_ema=True, evaluate_on_origin=True,
         priority='ABOVE_NORMAL')
]
""")
    regular, ema = _weights(config, 0), _weights(config, 1)
    # A checkpoint as an EMA run saves it: `state_dict` holds the EMA
    # weights, `ema_state_dict` the regular model's (EMAHook swaps them
    # back when it loads the checkpoint).
    ema_ckpt = tmp_path / 'ema.pth'
    ema_state = {f'module.{k}': v for k, v in regular.items()}
    ema_state['steps'] = torch.tensor(10)
    torch.save(
        dict(state_dict=ema, ema_state_dict=ema_state, meta={}), str(ema_ckpt))
    regular_ckpt = tmp_path / 'regular.pth'
    torch.save(dict(state_dict=regular, meta={}), str(regular_ckpt))

    tool = load_test_tool()
    out = tmp_path / 'metrics.json'
    returned = tool.main([
        str(ema_config),
        str(ema_ckpt), '--out',
        str(out), '--work-dir',
        str(tmp_path / 'work_ema')
    ])
    written = json.loads(out.read_text())
    assert written == {k: float(v) for k, v in returned.items()}
    main_keys = sorted(k for k in written if not k.endswith('_origin'))
    origin_keys = sorted(k for k in written if k.endswith('_origin'))
    assert 'multi-label/mAP' in main_keys
    assert origin_keys == sorted(f'{k}_origin' for k in main_keys)

    # The `_origin` metrics are those of the regular model alone.
    plain = tool.main([
        config,
        str(regular_ckpt), '--work-dir',
        str(tmp_path / 'work_plain')
    ])
    assert not any(k.endswith('_origin') for k in plain)
    for key in main_keys:
        assert written[f'{key}_origin'] == float(plain[key]), key
    assert written['multi-label/mAP'] != written['multi-label/mAP_origin']
