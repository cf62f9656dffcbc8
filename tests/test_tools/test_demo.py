"""tools/demo.py: a config that refuses to train does not end the
comparison of the others."""
import json
import os.path as osp
import sys

import pytest
from conftest import ROOT

sys.path.insert(0, osp.join(ROOT, 'tools'))


def test_a_refusing_config_is_reported_and_the_others_run(
        tiny_demo_config, tmp_path, capsys):
    import demo
    base = tiny_demo_config(max_epochs=2)
    refusing = tmp_path / 'refusing.py'
    refusing.write_text(f"""
_base_ = [{base!r}]
model = dict(head=dict(type='PartialLabelLinearClsHead',
                       loss=dict(_delete_=True, type='EMAPLLoss')))
custom_hooks = [dict(type='APLHook', warmup_epochs=5)]
""")
    good = tmp_path / 'good.py'
    good.write_text(f'_base_ = [{base!r}]\n')
    out = tmp_path / 'summary.json'
    with pytest.raises(SystemExit) as exit_info:
        demo.main([
            str(refusing),
            str(good), '--work-dir',
            str(tmp_path / 'demo'), '--out',
            str(out), '--cfg-options',
            'default_hooks.checkpoint.save_best=None'
        ])
    assert exit_info.value.code != 0
    assert 'refusing' in str(exit_info.value)
    table = capsys.readouterr().out.split('\n')
    row = [line for line in table if line.startswith('refusing')][-1]
    assert 'failed: ValueError: APLHook: warmup_epochs=5' in row
    assert any(line.startswith('good ') for line in table)  # trained
    written = json.loads(out.read_text())
    assert 'mAP' in written['good']
    assert written['refusing']['failed'].startswith('ValueError: APLHook')


def test_failure_reason_is_one_line():
    import demo
    assert demo.failure_reason(ValueError('first\nsecond')) == \
        'ValueError: first'
    assert demo.failure_reason(RuntimeError()) == 'RuntimeError'
