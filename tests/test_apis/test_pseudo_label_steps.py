"""The two pseudo-labelling steps live in the package
(:mod:`mmlml.apis.pseudo_label`, :mod:`mmlml.apis.vl_pseudo_label`):
``python -m`` takes the tools' command line and writes the same file,
without the checkout's ``tools/``, and a Python caller gets typed
functions. The tools' own behaviour: tests/test_tools/test_pseudo_label.py
and test_vl_pseudo_label_tool.py, whose fixtures these reuse."""
import argparse
import os
import os.path as osp
import re
import subprocess
import sys

import numpy as np
import pytest
from conftest import ROOT

from mmlml.apis import pseudo_label as step
from mmlml.apis import vl_pseudo_label as vl_step

sys.path.insert(0, osp.join(ROOT, 'tests', 'test_tools'))
from test_vl_pseudo_label_tool import _model_labeller  # noqa: E402

#: The time of a line of MMEngine's logger (the checkpoint's loading).
TIMESTAMP = re.compile(r'^\d\d/\d\d \d\d:\d\d:\d\d ', re.M)

#: Each step: its module and its tool.
STEPS = {
    'pseudo_label': (step, 'tools/pseudo_label.py'),
    'vl_pseudo_label': (vl_step, 'tools/vl_pseudo_label.py'),
}


def _env():
    """The same environment for every run compared: a fixed help width,
    one thread (the same scores to the last bit)."""
    return dict(os.environ, COLUMNS='80', OMP_NUM_THREADS='1')


def _python(args, cwd):
    return subprocess.run([sys.executable, *args],
                          cwd=cwd,
                          env=_env(),
                          capture_output=True,
                          text=True,
                          timeout=600)


class _Parsed(Exception):

    def __init__(self, parser):
        super().__init__('parsed')
        self.parser = parser


def _parser(module, monkeypatch):
    """The parser that ``module.parse_args`` builds."""

    def capture(parser, *args, **kwargs):
        raise _Parsed(parser)

    monkeypatch.setattr(argparse.ArgumentParser, 'parse_known_args', capture)
    with pytest.raises(_Parsed) as parsed:
        module.parse_args([])
    monkeypatch.undo()
    return parsed.value.parser


@pytest.mark.parametrize('name', sorted(STEPS))
def test_python_m_help(name, tmp_path, monkeypatch):
    """``python -m mmlml.apis.<step> --help``, run outside the checkout,
    prints the tool's help (its description is the docstring's head) and
    exits 0, without runpy's warning about a module imported twice."""
    module, tool = STEPS[name]
    result = _python(['-m', f'mmlml.apis.{name}', '--help'], tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert 'RuntimeWarning' not in result.stderr
    monkeypatch.setenv('COLUMNS', '80')
    parser = _parser(module, monkeypatch)
    parser.prog = f'{name}.py'  # what python -m and the tool print
    assert result.stdout == parser.format_help()
    assert result.stdout.startswith(f'usage: {name}.py [-h] --out OUT')
    with open(osp.join(ROOT, tool)) as f:
        assert f'mmlml.apis.{name}' in f.read()


def _same_run(args, tool, module, tmp_path):
    """Run ``tool`` and ``python -m module`` with ``args`` and ``--out``
    in two folders (outside the checkout): their output files, and their
    stdout but for the output path, are the same. The two outputs."""
    outs = []
    printed = []
    for i, command in enumerate([[osp.join(ROOT, tool)], ['-m', module]]):
        out = tmp_path / f'run{i}' / 'out.npy'
        result = _python(command + args + ['--out', str(out)], tmp_path)
        assert result.returncode == 0, result.stderr[-3000:]
        outs.append(out)
        printed.append(
            re.sub(TIMESTAMP, '', result.stdout.replace(str(out), 'OUT')))
    assert outs[0].read_bytes() == outs[1].read_bytes()
    assert printed[0] == printed[1] and 'written to OUT' in printed[0]
    return outs


def test_python_m_pseudo_label_writes_the_tools_file(tiny_demo_config,
                                                     tmp_path):
    config = tiny_demo_config()
    _model_labeller(config, tmp_path)  # writes the model's checkpoint
    checkpoint = str(tmp_path / 'demo.pth')
    out, _ = _same_run([
        config, checkpoint, '--thr', '0.5', '--batch-size', '16', '--device',
        'cpu'
    ], 'tools/pseudo_label.py', 'mmlml.apis.pseudo_label', tmp_path)
    labels = np.load(out)
    assert labels.shape == (64, 20) and labels.dtype == np.int8

    # The same exit status as the tool's: an existing --out without
    # --force is refused (1), a bad command line is argparse's 2.
    before = out.read_bytes()
    result = _python([
        '-m', 'mmlml.apis.pseudo_label', config, checkpoint, '--out',
        str(out)
    ], tmp_path)
    assert result.returncode == 1
    assert 'FileExistsError' in result.stderr and '--force' in result.stderr
    assert out.read_bytes() == before
    result = _python([
        '-m', 'mmlml.apis.pseudo_label', config, checkpoint, '--out',
        str(tmp_path / 'x.npy'), '--thr', '2'
    ], tmp_path)
    assert result.returncode == 2
    assert '--thr must lie in [0, 1], got 2.0' in result.stderr


def test_python_m_vl_pseudo_label_writes_the_tools_file(
        tiny_demo_config, tmp_path):
    config = tiny_demo_config()
    out, _ = _same_run(
        [config, '--chunk-size', '16'] + _model_labeller(config, tmp_path),
        'tools/vl_pseudo_label.py', 'mmlml.apis.vl_pseudo_label', tmp_path)
    scores = np.load(out)
    assert scores.shape == (64, 20) and scores.dtype == np.float32
    assert (~np.isnan(scores).any(1)).sum() == 51
    assert not osp.exists(f'{out}.parts')


def test_relabel_training_set(tiny_demo_config, tmp_path, capsys):
    """The typed function: the file, the labels, the summaries and the
    text it prints; the command line's checks without it."""
    config = tiny_demo_config()
    _model_labeller(config, tmp_path)
    checkpoint = str(tmp_path / 'demo.pth')
    out = str(tmp_path / 'labels.npy')
    result = step.relabel_training_set(
        config, checkpoint, out, 0.5, batch_size=16, device='cpu')
    assert result.out == out
    np.testing.assert_array_equal(np.load(out), result.labels)
    assert sorted(result.summary) == ['all', 'train']
    assert result.summary['all']['num_images'] == 64
    assert result.summary['train']['num_images'] == 51
    assert capsys.readouterr().out == result.text + '\n'
    assert result.text.startswith(
        f'Pseudo-labels (p > 0.5) written to {out}: 64 x 20, int8.')
    with pytest.raises(FileExistsError, match='--force'):
        step.relabel_training_set(config, checkpoint, out)
    with pytest.raises(ValueError, match=r'--thr must lie in \[0, 1\]'):
        step.relabel_training_set(config, checkpoint, out, 2., force=True)
    with pytest.raises(ValueError, match='also an input'):
        step.relabel_training_set(config, checkpoint, checkpoint, force=True)


def test_score_training_images(tiny_demo_config, tmp_path, capsys):
    config = tiny_demo_config()
    options = _model_labeller(config, tmp_path)
    labeller = dict(o.split('=', 1) for o in options if '=' in o)
    out = str(tmp_path / 'scores.npy')
    result = vl_step.score_training_images(
        config, out, labeller_options=labeller, chunk_size=16, device='cpu')
    assert result.out == out and result.num_scored == 51
    np.testing.assert_array_equal(np.load(out), result.scores)
    assert result.text in capsys.readouterr().out
    assert result.text.startswith('Scores of 51 of the 64 images (train '
                                  'rows; pipeline of')
    with pytest.raises(FileExistsError, match='--force'):
        vl_step.score_training_images(config, out, labeller_options=labeller)
    with pytest.raises(ValueError, match='--split must be one of'):
        vl_step.score_training_images(
            config, out, labeller_options=labeller, split='val', force=True)
