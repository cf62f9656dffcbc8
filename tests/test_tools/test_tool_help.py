"""Every command-line argument of every python tool in tools/ says what it
is for in ``--help``, under the tool's description (its docstring's first
paragraph)."""
import argparse
import ast
import glob
import importlib.util
import os.path as osp
import subprocess
import sys

import pytest
from conftest import ROOT

FOLDERS = ('tools', 'tools/analysis', 'tools/dataset_converters',
           'tools/model_converters')
TOOLS = sorted(
    osp.relpath(path, ROOT) for folder in FOLDERS
    for path in glob.glob(osp.join(ROOT, folder, '*.py')))


class _Parsed(Exception):
    """Raised instead of parsing, with the parser the tool built."""

    def __init__(self, parser):
        super().__init__('parser captured')
        self.parser = parser


def built_parser(path: str) -> argparse.ArgumentParser:
    """The ``ArgumentParser`` that the tool at ``path`` builds, caught when
    its ``parse_args`` (else its ``main``) parses the command line."""
    name = 'tool_help_' + path.replace('/', '_')[:-3]
    spec = importlib.util.spec_from_file_location(name, osp.join(ROOT, path))
    module = importlib.util.module_from_spec(spec)
    # Its folder first on the path, as when it runs as a script (some tools
    # import their neighbours).
    sys.path.insert(0, osp.join(ROOT, osp.dirname(path)))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.pop(0)
    entry = getattr(module, 'parse_args', None) or module.main

    def capture(parser, *args, **kwargs):
        raise _Parsed(parser)

    original = argparse.ArgumentParser.parse_known_args
    argparse.ArgumentParser.parse_known_args = capture
    try:
        entry([])
    except _Parsed as parsed:
        return parsed.parser
    finally:
        argparse.ArgumentParser.parse_known_args = original
    raise AssertionError(f'{path} parsed no command line')


def test_every_tool_is_listed():
    assert 'tools/benchmark.py' in TOOLS and 'tools/train.py' in TOOLS
    assert len(TOOLS) >= 17


@pytest.mark.parametrize('path', TOOLS)
def test_every_argument_has_help(path):
    parser = built_parser(path)
    missing = [
        '/'.join(action.option_strings) or action.dest
        for action in parser._actions
        if not isinstance(action, argparse._HelpAction) and (
            action.help is None or not str(action.help).strip())
    ]
    assert not missing, f'{path}: arguments without help: {missing}'
    assert parser.format_help()  # every help string formats


@pytest.mark.parametrize('path', TOOLS)
def test_description_is_the_docstring(path):
    """``--help`` begins with what the module docstring says first, so the
    two cannot drift apart."""
    with open(osp.join(ROOT, path)) as f:
        doc = ast.get_docstring(ast.parse(f.read()), clean=False)
    first = ' '.join(doc.strip().split('\n\n')[0].split())
    description = built_parser(path).description
    assert description and description.rstrip('.') == first.replace(
        '``', '').rstrip(':.'), path


def test_help_prints_no_mmcv_lite_warning():
    """mmlml filters mmcv-lite's import-time warning about
    ``MultiScaleDeformableAttention`` (a module mmlml never uses) before
    mmcv is imported; other warnings still show."""
    code = ('import warnings; '
            'import mmlml, mmcv.cnn.bricks.transformer; '
            'warnings.warn("another warning")')
    result = subprocess.run([sys.executable, '-c', code],
                            cwd=ROOT,
                            capture_output=True,
                            text=True,
                            check=True)
    assert 'MultiScaleDeformableAttention' not in result.stderr
    assert 'another warning' in result.stderr
