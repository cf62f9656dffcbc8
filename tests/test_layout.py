"""The package's layout (docs/architecture.md): the root holds only
``__init__``, ``registry`` and ``version``; the import graph of
``mmlml/`` has no cycle and no arrow from a lower layer up to a higher
one; ``import mmlml`` leaves the tools' code unimported."""
import ast
import os
import os.path as osp
import subprocess
import sys
from typing import Dict, List, Set

from conftest import ROOT

PACKAGE = osp.join(ROOT, 'mmlml')

#: The layers of ``mmlml``, lowest first. Each layer holds parts that are
#: independent of each other (no import between two parts of a layer); a
#: part is a list of module prefixes (``mmlml.hooks`` is the subpackage
#: and every module in it), the longest matching prefix placing a module.
#: A module imports its own part and the parts of lower layers only.
#: ``mmlml`` is the root ``__init__`` alone (it imports every registered
#: component). Imports inside functions count as well: a deferred import
#: is still an arrow.
LAYERS: List[Dict[str, List[str]]] = [
    {
        'registry': ['mmlml.registry'],
        'version': ['mmlml.version']
    },
    {
        'utils': ['mmlml.utils']
    },
    {
        'compat': ['mmlml.compat'],
        'structures': ['mmlml.structures']
    },
    {
        'apis': ['mmlml.apis'],
        'datasets': ['mmlml.datasets'],
        'evaluation': ['mmlml.evaluation'],
        'models': ['mmlml.models'],
        'schedulers': ['mmlml.schedulers']
    },
    {
        'pseudo_labellers': ['mmlml.pseudo_labellers']
    },
    {
        'hooks': ['mmlml.hooks'],
        # The sweep's part that runs inside a training run
        # (mmlml/benchmark/training/): the pruning hook (registered by
        # ``import mmlml``), the pruning component that builds its pruner
        # from the sweep's spec, its pruner, the storage, the config keys
        # that the pruner reads and the trial's record that the hook and
        # the trainer write.
        'sweep in training': ['mmlml.benchmark.training']
    },
    {
        'root': ['mmlml']
    },
    {
        'analysis': ['mmlml.analysis'],
        'cli': ['mmlml.cli']
    },
    {
        # The pseudo-labelling steps of the tools (tools/pseudo_label.py,
        # tools/vl_pseudo_label.py, also ``python -m``): above the command
        # line they share; mmlml.apis itself does not import them.
        'apis steps': [
            'mmlml.apis.pseudo_label', 'mmlml.apis.vl_pseudo_label',
            'mmlml.apis.trial_training'
        ]
    },
    {
        # The sweep (mmlml/benchmark/sweep/): its definition, trial queue
        # and planning, the worker, the trainer and the executors.
        'sweep': ['mmlml.benchmark.sweep']
    },
    {
        # What a sweep reports (mmlml/benchmark/reports/): results,
        # oracle, claims, the record and the check of the docs.
        'reports': ['mmlml.benchmark.reports']
    },
    {
        # The tools' command line over all of them.
        'benchmark': ['mmlml.benchmark']
    },
]


def _modules() -> Dict[str, str]:
    """Every module of ``mmlml/`` -> its file (a package is its
    ``__init__.py``)."""
    modules = {}
    for folder, _, files in os.walk(PACKAGE):
        for name in files:
            if name.endswith('.py'):
                path = osp.join(folder, name)
                parts = osp.relpath(path, ROOT)[:-3].split(os.sep)
                if parts[-1] == '__init__':
                    parts.pop()
                modules['.'.join(parts)] = path
    return modules


def import_graph() -> Dict[str, Set[str]]:
    """Every module of ``mmlml/`` -> the modules of ``mmlml/`` it imports
    anywhere in its file (``from a import b`` imports the module ``a.b``
    where there is one, else ``a``)."""
    modules = _modules()
    graph = {}
    for module, path in modules.items():
        package = module if path.endswith('__init__.py') else \
            module.rpartition('.')[0]
        with open(path) as f:
            tree = ast.parse(f.read(), path)
        imported = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ''
                if node.level:
                    parts = package.split('.')
                    parts = parts[:len(parts) - node.level + 1]
                    base = '.'.join(parts + [base] if base else parts)
                names = [
                    f'{base}.{alias.name}'
                    if f'{base}.{alias.name}' in modules else base
                    for alias in node.names
                ]
            else:
                continue
            for name in names:
                while name not in modules and '.' in name:
                    name = name.rpartition('.')[0]
                if name in modules and name != module:
                    imported.add(name)
        graph[module] = imported
    return graph


def _part(module: str) -> str:
    """The part of :data:`LAYERS` that holds ``module``."""
    best, best_prefix = None, ''
    for layer in LAYERS:
        for part, prefixes in layer.items():
            for prefix in prefixes:
                matches = module == prefix or (prefix != 'mmlml' and
                                               module.startswith(prefix + '.'))
                if matches and len(prefix) > len(best_prefix):
                    best, best_prefix = part, prefix
    assert best is not None, (
        f'{module} is in no layer: add it to LAYERS in {__file__} and to '
        'the layout of docs/architecture.md')
    return best


def _level(part: str) -> int:
    return next(i for i, layer in enumerate(LAYERS) if part in layer)


def test_the_root_holds_only_init_registry_and_version():
    assert sorted(
        name for name in os.listdir(PACKAGE) if name.endswith('.py')) == [
            '__init__.py', 'registry.py', 'version.py'
        ]


def test_no_import_from_a_lower_layer_into_a_higher_one():
    arrows = []
    for module, imported in sorted(import_graph().items()):
        part = _part(module)
        for other in sorted(imported):
            other_part = _part(other)
            if other_part != part and _level(other_part) >= _level(part):
                arrows.append(f'{module} ({part}) imports {other} '
                              f'({other_part})')
    assert not arrows, '\n'.join(arrows)


def test_the_import_graph_has_no_cycle():
    graph = import_graph()
    done: Set[str] = set()

    def visit(module: str, path: List[str]) -> None:
        if module in path:
            cycle = path[path.index(module):] + [module]
            raise AssertionError('import cycle: ' + ' -> '.join(cycle))
        if module in done:
            return
        for other in sorted(graph[module]):
            visit(other, path + [module])
        done.add(module)

    for module in sorted(graph):
        visit(module, [])


def test_the_graph_sees_deferred_and_relative_imports():
    """Guards the two tests above against passing for an empty graph."""
    graph = import_graph()
    # Relative, at the top of the file.
    assert 'mmlml.compat.checkpoint_policy' in graph[
        'mmlml.compat.stack_repairs']
    # Relative, inside a method.
    assert 'mmlml.benchmark.training.pruning' in graph[
        'mmlml.benchmark.training.optuna_pruning_hook']
    # Absolute, inside a function.
    assert 'mmlml.cli.smoke_config' in graph[
        'mmlml.benchmark.sweep.method_presets']


def test_import_mmlml_leaves_the_tools_and_the_sweep_unimported():
    """``import mmlml`` (every hook, pseudo-labeller, loss, dataset) and
    :mod:`mmlml.apis` import neither the analysis maths nor the tools'
    command line, and of the sweep only its pruning hook, which they
    register, without Optuna."""
    script = ('import sys, mmlml, mmlml.apis\n'
              'from mmlml.registry import HOOKS\n'
              "print(HOOKS.get('OptunaPruningHook').__module__)\n"
              "print(sorted(m for m in sys.modules if m.startswith(("
              "'mmlml.analysis', 'mmlml.cli', 'mmlml.benchmark', "
              "'optuna'))))")
    out = subprocess.run([sys.executable, '-c', script],
                         capture_output=True,
                         text=True,
                         check=True)
    assert out.stdout.strip().splitlines()[-2:] == [
        'mmlml.benchmark.training.optuna_pruning_hook',
        "['mmlml.benchmark', 'mmlml.benchmark.training', "
        "'mmlml.benchmark.training.optuna_pruning_hook']"
    ]
