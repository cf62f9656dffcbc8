"""The tools print none of mmcv-lite's import warnings: ``import mmlml``
filters its ``MultiScaleDeformableAttention`` warning, so every tool
imports mmlml before anything that imports mmcv (MMPretrain)."""
import ast
import glob
import os.path as osp
import subprocess
import sys

import pytest
from conftest import ROOT

TOOLS = sorted(
    glob.glob(osp.join(ROOT, 'tools', '*.py')) +
    glob.glob(osp.join(ROOT, 'tools', '*', '*.py')))


def _first_import(tree, packages):
    """The line of the first module-level import of one of ``packages``."""
    for node in tree.body:
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names = [node.module or '']
        if any(name.split('.')[0] in packages for name in names):
            return node.lineno
    return None


@pytest.mark.parametrize(
    'path', TOOLS, ids=[osp.relpath(p, ROOT) for p in TOOLS])
def test_mmlml_is_imported_before_mmpretrain(path):
    with open(path) as f:
        tree = ast.parse(f.read())
    stack = _first_import(tree, ('mmpretrain', 'mmcv'))
    if stack is None:
        return
    first = _first_import(tree, ('mmlml', ))
    assert first is not None and first < stack, (
        f'{osp.relpath(path, ROOT)} imports MMPretrain (line {stack}) before '
        'mmlml: mmcv-lite then warns about MultiScaleDeformableAttention')


def test_infer_prints_no_mmcv_warning():
    out = subprocess.run(
        [sys.executable,
         osp.join(ROOT, 'tools', 'infer.py'), '--help'],
        capture_output=True,
        text=True,
        timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert 'MultiScaleDeformableAttention' not in out.stderr
