"""The compile benchmark times the eager and the compiled train_step of a
Runner built with ``compile``."""
import os.path as osp
import sys

import pytest
from conftest import ROOT

sys.path.insert(0, osp.join(ROOT, 'tools', 'analysis'))
import benchmark_compile  # noqa: E402


def test_benchmark_runs_a_tiny_demo(tiny_demo_config, tmp_path, capsys):
    config = tmp_path / 'one_stage.py'
    # One residual stage of the demo backbone: quicker to trace.
    config.write_text(
        f'_base_ = [{tiny_demo_config(loss=dict(type="HillLoss"))!r}]\n'
        'model = dict(backbone=dict(num_stages=1, strides=(1, ), '
        'dilations=(1, ), out_indices=(0, ), '
        'init_cfg=None), head=dict(in_channels=8))\n')
    config = str(config)
    benchmark_compile.main([
        config, '--backend', 'eager', '--rounds', '1', '--warmup', '0',
        '--batches', '1', '--batch', '4', '--epochs', '1'
    ])
    lines = capsys.readouterr().out.splitlines()
    first = [line.startswith('Training iteration') for line in lines]
    title, header, row = lines[first.index(True):][:3]
    assert 'compile=True (eager), cpu, 1 thread(s)' in title
    assert header.split()[:3] == ['config', 'batch', 'eager']
    row = row.split()
    assert row[0].endswith('one_stage.py') and row[1] == '4'
    assert float(row[2]) > 0 and float(row[3]) > 0
    assert row[5:7] == ['-', '-']  # the epochs compiled the step
    assert int(row[7]) > 0  # compiled graphs
    first = [line.startswith('Training epoch') for line in lines]
    title, header, row = lines[first.index(True):][:3]
    assert 'medians of 1 epochs' in title
    assert header.split() == [
        'config', 'batches', 'eager', 's', 'compiled', 's', 'compile', 's'
    ]
    row = row.split()
    # 51 training images in batches of 4, the last of 3.
    assert row[1] == '13' and float(row[2]) > 0 and float(row[3]) > 0


@pytest.mark.parametrize(
    'argv', [['--rounds', '0'], ['--warmup', '-1'], ['--batch', '0']])
def test_bad_arguments_are_refused(argv):
    with pytest.raises(SystemExit):
        benchmark_compile.main(argv)
