"""``default_hooks.<name>=None`` turns off the default hooks that mmlml's
configs add (MMEngine asserts on None for names it does not know): in
every Runner once mmlml is imported, and tools/train.py adds back none of
them."""
import os.path as osp

import pytest
from conftest import load_train_tool
from mmengine.config import Config
from mmengine.hooks import IterTimerHook
from mmengine.runner import Runner

from mmlml.hooks import ResumeCheckHook, TrainingSetupCheckHook
from mmlml.hooks.default_hooks import (disabled_default_hooks,
                                       split_disabled_default_hooks)


def _config(tiny_demo_config, hooks):
    cfg = Config.fromfile(tiny_demo_config())
    cfg.merge_from_dict({f'default_hooks.{name}': None for name in hooks})
    return cfg


def test_mmengine_asserts_on_none_of_other_names(tiny_demo_config):
    """Why it exists: MMEngine's own register_hooks (the one mmlml extends)
    stops with a bare AssertionError."""
    runner = Runner.from_cfg(_config(tiny_demo_config, []))
    with pytest.raises(AssertionError):
        Runner.register_hooks.__wrapped__(runner, dict(resume_check=None))


def test_none_turns_a_default_hook_off(tiny_demo_config):
    cfg = _config(tiny_demo_config, ['resume_check', 'setup_check', 'timer'])
    assert disabled_default_hooks(cfg) == [
        'timer', 'setup_check', 'resume_check'
    ]
    kept, _ = split_disabled_default_hooks(dict(cfg.default_hooks))
    assert 'resume_check' not in kept
    assert kept['timer'] is None  # MMEngine removes its own
    runner = Runner.from_cfg(cfg)  # not only in mmlml's tools
    kinds = {type(hook) for hook in runner.hooks}
    assert not kinds & {ResumeCheckHook, TrainingSetupCheckHook, IterTimerHook}


def test_train_tool_does_not_add_back_a_disabled_resume_check(
        tiny_demo_config, tmp_path, monkeypatch):
    """tools/train.py adds a ResumeCheckHook to a config without one, but
    not to one that sets ``default_hooks.resume_check=None`` (it warns)."""
    tool = load_train_tool()
    runners = []
    monkeypatch.setattr(Runner, 'train', lambda runner: runners.append(runner))
    config = tmp_path / 'no_resume_check.py'
    config.write_text(f'_base_ = [{tiny_demo_config()!r}]\n'
                      'default_hooks = dict(resume_check=None)\n')
    tool.main([str(config)])
    assert not any(isinstance(h, ResumeCheckHook) for h in runners[0].hooks)
    runner = runners[0]
    with open(osp.join(runner.log_dir, f'{runner.timestamp}.log')) as f:
        assert 'default_hooks.resume_check=None' in f.read()
    tool.main([tiny_demo_config()])
    assert sum(isinstance(h, ResumeCheckHook) for h in runners[1].hooks) == 1
