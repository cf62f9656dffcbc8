"""No script in tools/ replaces an existing file without --force, or writes
its output over one of its inputs (not even with --force); tools/test.py
refuses a checkpoint whose weights do not fit the model."""
import importlib
import os
import os.path as osp
import runpy
import sys

import pytest
import torch
from conftest import ROOT
from mmengine.config import Config
from mmengine.registry import DefaultScope
from mmpretrain.registry import MODELS

import mmlml  # noqa: F401
from mmlml.cli import check_config_output, check_output, config_input_files
from mmlml.compat.checkpoint_policy import hub_cache_file
from mmlml.utils.own_folders import (OWNER_MARKER, make_own_folder,
                                     remove_own_folder)

for folder in ('tools', 'tools/analysis', 'tools/model_converters',
               'tools/dataset_converters'):
    sys.path.insert(0, osp.join(ROOT, folder))


def tool(name):
    return importlib.import_module(name)


def test_check_output(tmp_path):
    existing = tmp_path / 'existing.json'
    existing.write_text('{}')
    check_output(None, ['x'])
    check_output(str(tmp_path / 'new.json'), [str(existing)])
    with pytest.raises(FileExistsError, match='--force'):
        check_output(str(existing))
    check_output(str(existing), force=True)
    for force in (False, True):
        with pytest.raises(ValueError, match='also an input'):
            check_output(str(existing), ['a', str(existing)], force)
    # The same file through another spelling of its path.
    other = str(tmp_path / '.' / 'existing.json')
    with pytest.raises(ValueError, match='also an input'):
        check_output(other, [str(existing)], True)


def test_config_input_files(tmp_path):
    """The files a config names, wherever (also under a data_root), are
    inputs an output is never written over; an excluded one (a tool's own
    output slot) is not."""
    labels = tmp_path / 'labels.npy'
    ann = tmp_path / 'data' / 'ann.json'
    ann.parent.mkdir()
    for path in (labels, ann):
        path.write_text('input')
    cfg = Config(
        dict(
            train_dataloader=dict(
                dataset=dict(
                    type='PartialLabelDataset',
                    label_file=str(labels),
                    dataset=dict(
                        data_root=str(tmp_path /
                                      'data'), ann_file='ann.json'))),
            custom_hooks=[dict(scores_file=str(tmp_path / 'new.npy'))]))
    found = config_input_files(cfg)
    assert found == [str(labels), str(ann)]
    assert config_input_files(cfg, exclude=[str(labels)]) == [str(ann)]
    for path in (labels, ann):
        with pytest.raises(ValueError, match='also an input'):
            check_config_output(str(path), cfg)
    check_config_output(str(tmp_path / 'new.npy'), cfg)


def test_own_folders(tmp_path):
    """A folder is made with a marker and deleted only with it: a folder
    of someone else's is never adopted nor deleted."""
    own = tmp_path / 'out.npy.parts'
    make_own_folder(str(own))
    make_own_folder(str(own))  # reused
    assert (own / OWNER_MARKER).is_file()
    assert remove_own_folder(str(own)) and not own.exists()
    foreign = tmp_path / 'mine'
    foreign.mkdir()
    (foreign / 'data.txt').write_text('mine')
    with pytest.raises(ValueError, match='not made by mmlml'):
        make_own_folder(str(foreign))
    assert not remove_own_folder(str(foreign))
    assert (foreign / 'data.txt').read_text() == 'mine'
    assert sorted(p.name for p in foreign.iterdir()) == ['data.txt']


# Every tool that writes a file: (module, the command line before the
# output, how the output is given, the input its output may not replace).
TOOLS = [
    ('test', ['CFG', 'CKPT'], '--out', 'CKPT', '.json'),
    ('infer', ['CFG', 'CKPT', 'IMG'], '--out', 'IMG', '.json'),
    ('pseudo_label', ['CFG', 'CKPT'], '--out', 'CKPT', '.npy'),
    ('demo', ['CFG'], '--out', 'CFG', '.json'),
    ('benchmark', ['CFG'], '--out', 'CFG', '.json'),
    ('benchmark', ['CFG'], '--markdown', 'CFG', '.md'),
    ('benchmark', ['CFG'], '--figure', 'CFG', '.png'),
    ('missing_label_scores', ['CFG', 'CKPT'], '--out', 'CKPT', '.npz'),
    ('plot_loss_gradients', [], '--out', None, '.png'),
    ('plot_loss_gradients', [], '--csv', None, '.csv'),
    ('plot_missing_label_curves', ['CFG'], '--out', 'CFG', '.png'),
    ('plot_class_priors', ['CFG', 'CKPT'], '--out', 'CFG', '.png'),
    ('extract_backbone', ['CKPT'], None, 'CKPT', '.pth'),
    ('openimages',
     ['--data-root', 'ROOT', '--split', 'validation', '--classes-file',
      'CFG'], '--out', 'CFG', '.npz'),
]


@pytest.mark.parametrize('name,before,option,input_name,ext', TOOLS)
def test_tools_refuse_to_overwrite(tmp_path, name, before, option, input_name,
                                   ext):
    inputs = {
        key: str(tmp_path / f'{key.lower()}{ext}')
        for key in ('CFG', 'CKPT', 'IMG', 'ROOT')
    }
    for path in inputs.values():
        with open(path, 'w') as f:
            f.write('input')
    argv = [inputs.get(arg, arg) for arg in before]
    out = tmp_path / f'out{ext}'
    out.write_text('not created by the tool')

    def run(target, *extra):
        given = [target] if option is None else [option, target]
        return tool(name).main(argv + given + list(extra))

    with pytest.raises(FileExistsError, match='--force'):
        run(str(out))
    assert out.read_text() == 'not created by the tool'
    if input_name is not None:
        for extra in ((), ('--force', )):
            with pytest.raises(ValueError, match='also an input'):
                run(inputs[input_name], *extra)
        assert open(inputs[input_name]).read() == 'input'


def test_plot_missing_label_figures_refuses_to_overwrite(tmp_path):
    scores = tmp_path / 'run.npz'
    scores.write_text('input')
    out_dir = tmp_path / 'figures'
    out_dir.mkdir()
    (out_dir / 'summary.json').write_text('{}')
    module = tool('plot_missing_label_figures')
    with pytest.raises(FileExistsError, match='summary.json.*--force'):
        module.main([str(scores), '--out-dir', str(out_dir)])
    with pytest.raises(ValueError, match='also an input'):
        module.main([
            str(tmp_path / 'histograms.png'), '--out-dir',
            str(tmp_path), '--force'
        ])


def test_extract_backbone_same_path_and_force(tmp_path):
    """`extract_backbone.py X X` leaves X whole; an existing output is
    replaced with --force only."""
    source = osp.join(ROOT, 'checkpoints/synthetic_shapes_source_backbone.pth')
    checkpoint = tmp_path / 'full.pth'
    model = torch.nn.Module()
    model.backbone = torch.nn.Linear(2, 2)
    model.head = torch.nn.Linear(2, 1)
    torch.save(dict(state_dict=model.state_dict(), meta={}), checkpoint)
    before = checkpoint.read_bytes()
    module = tool('extract_backbone')
    for extra in ([], ['--force']):
        with pytest.raises(ValueError, match='also an input'):
            module.main([str(checkpoint), str(checkpoint)] + extra)
    assert checkpoint.read_bytes() == before
    out = tmp_path / 'backbone.pth'
    module.main([str(checkpoint), str(out)])
    with pytest.raises(FileExistsError):
        module.main([str(checkpoint), str(out)])
    module.main([str(checkpoint), str(out), '--force'])
    assert osp.isfile(source)


def test_tools_test_command_line_errors_are_one_line(tmp_path, monkeypatch):
    """The command line of tools/test.py prints an existing --out (and how
    to replace it), an --out that is an input and a missing checkpoint in
    one line, not a traceback."""
    config, ckpt = tmp_path / 'config.py', tmp_path / 'model.pth'
    config.write_text('')
    ckpt.write_text('input')
    out = tmp_path / 'metrics.json'
    out.write_text('{}')
    missing = str(tmp_path / 'missing.pth')
    for argv, message in [
        ([str(ckpt), '--out', str(out)],
         f"--out '{out}' exists already: pass --force to replace it"),
        ([str(ckpt), '--out', str(ckpt), '--force'], 'is also an input'),
        ([str(ckpt), '--out',
          str(tmp_path / 'metrics.txt')], 'must be a .json file'),
        ([missing], f'Checkpoint not found: {missing}'),
    ]:
        monkeypatch.setattr(sys, 'argv', ['test.py', str(config)] + argv)
        with pytest.raises(SystemExit) as info:
            runpy.run_path(
                osp.join(ROOT, 'tools/test.py'), run_name='__main__')
        assert isinstance(info.value.code, str)
        assert info.value.code.startswith('test.py: error: ')
        assert message in info.value.code and '\n' not in info.value.code
    assert out.read_text() == '{}'


def test_extract_backbone_reads_a_url(torch_home, tmp_path):
    """A checkpoint URL goes to the loading policy (here served from
    torch.hub's cache, so no network), as in tools/test.py, instead of
    being refused as a missing file; a missing local file still is."""
    url = 'https://example.invalid/models/classifier-0123abcd.pth'
    cached = hub_cache_file(url)
    os.makedirs(osp.dirname(cached))
    model = torch.nn.Module()
    model.backbone = torch.nn.Linear(2, 2)
    model.head = torch.nn.Linear(2, 1)
    torch.save(dict(state_dict=model.state_dict(), meta={}), cached)
    out = tmp_path / 'backbone.pth'
    module = tool('extract_backbone')
    module.main([url, str(out)])
    result = torch.load(str(out))
    assert set(result['state_dict']) == {'backbone.weight', 'backbone.bias'}
    assert result['meta']['extracted_from'] == 'classifier-0123abcd.pth'
    missing = str(tmp_path / 'missing.pth')
    with pytest.raises(FileNotFoundError, match='Checkpoint not found'):
        module.main([missing, str(tmp_path / 'other.pth')])


# ----------------------------------------------- tools/test.py key check


def _save_model_weights(config, path, edit):
    cfg = Config.fromfile(config)
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        model = MODELS.build(cfg.model)
    state = edit(model.state_dict())
    torch.save(dict(state_dict=state, meta={}), str(path))
    return str(path)


@pytest.mark.parametrize('edit', ['missing', 'renamed'])
def test_tools_test_refuses_missing_head(tiny_demo_config, tmp_path, edit):
    config = tiny_demo_config()

    def change(state):
        head = [k for k in state if k.startswith('head.')]
        assert head
        for key in head:
            value = state.pop(key)
            if edit == 'renamed':
                state[key.replace('head.', 'head.old_')] = value
        return state

    ckpt = _save_model_weights(config, tmp_path / 'no_head.pth', change)
    with pytest.raises(ValueError) as info:
        tool('test').main([config, ckpt])
    message = str(info.value)
    assert 'missing keys' in message and 'head.fc.weight' in message
    assert 'random initial values' in message
    if edit == 'renamed':
        assert 'head.old_fc.weight' in message


def test_tools_test_accepts_a_fitting_checkpoint(tiny_demo_config, tmp_path):
    config = tiny_demo_config()
    ckpt = _save_model_weights(config, tmp_path / 'full.pth', lambda s: s)
    metrics = tool('test').main([config, ckpt])
    assert 'multi-label/mAP' in metrics
