"""mmlml.cli: the command line that every script in tools/ shares, defined
once (--cfg-options, the work directory, --launcher, the checkpoint
argument, the scoring options, --threads), and the tools that use it."""
import argparse
import glob
import os
import os.path as osp
import re

import pytest
from conftest import ROOT
from mmengine.config import Config

from mmlml import cli

TOOLS = sorted(
    glob.glob(osp.join(ROOT, 'tools', '*.py')) +
    glob.glob(osp.join(ROOT, 'tools', '*', '*.py')))


def _read(path):
    with open(path) as f:
        return f.read()


def test_tools_import_the_installed_package():
    edits = [
        osp.relpath(path, ROOT) for path in TOOLS
        if 'sys.path.insert' in _read(path)
    ]
    assert not edits, f'tools that edit sys.path: {edits}'


def test_cfg_options_is_declared_once():
    declared = re.compile(r"add_argument\(\s*'--cfg-options'")
    sources = TOOLS + glob.glob(
        osp.join(ROOT, 'mmlml', '**', '*.py'), recursive=True)
    found = [
        osp.relpath(path, ROOT) for path in sources
        if declared.search(_read(path))
    ]
    assert found == [osp.join('mmlml', 'cli', 'config_options.py')]


def test_cfg_options_parses_into_a_dict():
    parser = argparse.ArgumentParser()
    cli.add_cfg_options_argument(parser, 'override every run')
    args = parser.parse_args(
        ['--cfg-options', 'train_cfg.max_epochs=3', 'model.x=[1,2]'])
    assert args.cfg_options == {'train_cfg.max_epochs': 3, 'model.x': [1, 2]}
    assert parser.parse_args([]).cfg_options is None
    assert 'override every run' in parser.format_help()


def test_set_work_dir():
    cfg = Config(dict(work_dir='own'))
    cli.set_work_dir(cfg, 'given', 'configs/demo/an.py')
    assert cfg.work_dir == 'given'
    cfg = Config(dict(work_dir='own'))
    cli.set_work_dir(cfg, None, 'configs/demo/an.py')
    assert cfg.work_dir == 'own'
    cfg = Config(dict())
    cli.set_work_dir(cfg, None, 'configs/demo/an.py')
    assert cfg.work_dir == osp.join('./work_dirs', 'an')


def test_launcher_and_local_rank(monkeypatch):
    parser = argparse.ArgumentParser()
    cli.add_launcher_arguments(parser, local_rank=True)
    args = parser.parse_args(['--launcher', 'pytorch', '--local-rank', '3'])
    assert (args.launcher, args.local_rank) == ('pytorch', 3)
    with pytest.raises(SystemExit):
        parser.parse_args(['--launcher', 'ray'])
    monkeypatch.delenv('LOCAL_RANK', raising=False)
    cli.set_local_rank(args)
    assert os.environ['LOCAL_RANK'] == '3'
    monkeypatch.setenv('LOCAL_RANK', '1')  # torchrun's wins
    cli.set_local_rank(args)
    assert os.environ['LOCAL_RANK'] == '1'
    parser = argparse.ArgumentParser()
    cli.add_launcher_arguments(parser)
    assert not hasattr(parser.parse_args([]), 'local_rank')


def test_checkpoint_argument_names_its_sources():
    parser = argparse.ArgumentParser()
    cli.add_model_arguments(parser)
    args = parser.parse_args(['cfg.py', 'https://host/w.pth'])
    assert (args.config, args.checkpoint) == ('cfg.py', 'https://host/w.pth')
    assert 'open-mmlab://' in ' '.join(parser.format_help().split())


def _scoring_parser():
    parser = argparse.ArgumentParser()
    cli.add_model_arguments(parser)
    parser.add_argument('--out', required=True)
    cli.add_scoring_arguments(parser, 'val')
    return parser


def test_scoring_arguments(tmp_path):
    parser = _scoring_parser()
    config, out = str(tmp_path / 'cfg.py'), str(tmp_path / 'scores.npy')
    args = parser.parse_args([config, 'w.pth', '--out', out])
    assert (args.pipeline, args.force, args.cfg_options) == ('val', False,
                                                             None)
    cli.check_scoring_arguments(parser, args, (config, 'w.pth'), '.npy')
    with pytest.raises(SystemExit):  # parser.error: one line, exit 2
        cli.check_scoring_arguments(parser, args, (config, 'w.pth'), '.npz')
    for option in (['--batch-size', '0'], ['--num-workers', '-1']):
        args = parser.parse_args([config, 'w.pth', '--out', out, *option])
        with pytest.raises(SystemExit):
            cli.check_scoring_arguments(parser, args, (config, ), '.npy')
    args = parser.parse_args([config, 'w.pth', '--out', config, '--force'])
    with pytest.raises(ValueError, match='also an input'):
        cli.check_scoring_arguments(parser, args, (config, ), '.py')
    open(out, 'w').close()
    args = parser.parse_args([config, 'w.pth', '--out', out])
    with pytest.raises(FileExistsError, match='--force'):
        cli.check_scoring_arguments(parser, args, (config, ), '.npy')


def test_rounds_arguments():
    parser = argparse.ArgumentParser()
    cli.add_rounds_arguments(parser, 'one step each')
    args = parser.parse_args([])
    assert (args.rounds, args.warmup) == (20, 3)
    assert 'timed rounds (one step each)' in parser.format_help()


def test_device_arguments():
    parser = argparse.ArgumentParser()
    cli.add_device_arguments(parser, 'bf16 autocast')
    args = parser.parse_args([])
    assert (args.device, args.amp) == ('cpu', False)
    args = parser.parse_args(['--device', 'cuda', '--amp'])
    assert (args.device, args.amp) == ('cuda', True)
    assert 'bf16 autocast' in parser.format_help()


def test_threads_argument():
    parser = argparse.ArgumentParser()
    cli.add_threads_argument(parser)
    assert parser.parse_args([]).threads == 1
    parser = argparse.ArgumentParser()
    cli.add_threads_argument(parser, default=None)
    assert parser.parse_args([]).threads is None
    assert parser.parse_args(['--threads', '4']).threads == 4


def test_tool_parser_takes_the_docstring_head():
    doc = """Plot the ``scores`` of
    a run::

        python tools/x.py RUN

    More text.
    """
    parser = cli.tool_parser(doc, epilog='after')
    assert parser.description == 'Plot the scores of a run.'
    assert parser.epilog == 'after'
    for missing in (None, '', '  \n'):
        with pytest.raises(ValueError, match='needs a docstring'):
            cli.tool_parser(missing)


def test_dataloader_workers_are_capped_to_the_usable_cores(monkeypatch):
    """A paper config's 4 workers on a 2-core machine: train.py
    caps every loader to the cores of this process's affinity mask, and
    says so in one line per loader; fewer workers are left alone."""
    from conftest import load_train_tool
    monkeypatch.setattr(os, 'sched_getaffinity', lambda pid: {0, 1})
    assert cli.usable_cores() == 2
    cfg = Config(
        dict(
            train_dataloader=dict(num_workers=8),
            val_dataloader=dict(num_workers=1),
            test_dataloader=dict(num_workers=0)))
    notes = cli.cap_dataloader_workers(cfg)
    assert notes == [
        'train_dataloader.num_workers: 8 -> 2 (the cores this '
        'process may use)'
    ]
    assert [
        cfg[name].num_workers
        for name in ('train_dataloader', 'val_dataloader', 'test_dataloader')
    ] == [2, 1, 0]
    tool = load_train_tool()
    config = osp.join(ROOT, 'configs', 'baselines',
                      'an_resnet50_1xb16_coco2014-single.py')
    cfg = tool.merge_args(Config.fromfile(config), tool.parse_args([config]))
    assert cfg.train_dataloader.num_workers == 2
    assert cfg.val_dataloader.num_workers <= 2
