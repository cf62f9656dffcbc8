"""The README's environment, as a new user meets it: after the quick start,
the activation line it gives makes every ``python tools/...`` command of
"Getting started" work in a new shell (a clean environment: no PATH but
the system's, no PYTHONPATH); and a second clone reuses an existing
environment (``MMLML_VENV``) instead of installing it again."""
import os
import os.path as osp
import re
import shlex
import shutil
import subprocess
import time

import pytest
from conftest import ROOT
from test_custom_dataset_guide import write_custom_dataset
from test_docs_commands import PYTHON_NAMES, doc_commands, resolve

VENV = osp.join(ROOT, '.venv')

needs_venv = pytest.mark.skipif(
    not osp.exists(osp.join(VENV, '.mmlml-installed')),
    reason='the project environment .venv is not installed '
    '(bash tools/setup_venv.sh)')


def _readme_section(title):
    """The line numbers (1-based) of a ``## title`` section of the README."""
    with open(osp.join(ROOT, 'README.md')) as f:
        lines = f.read().split('\n')
    start = lines.index(f'## {title}') + 1
    end = next(
        (i for i in range(start, len(lines)) if lines[i].startswith('## ')),
        len(lines))
    return start + 1, end


def _activation_line():
    """The line of "Getting started" that activates the environment (the
    quick start keeps its two commands)."""
    first, last = _readme_section('Getting started')
    with open(osp.join(ROOT, 'README.md')) as f:
        text = '\n'.join(f.read().split('\n')[first - 1:last])
    found = re.findall(r'`(source [^`]+)`', text)
    assert len(found) == 1, 'Getting started names one activation line'
    return found[0]


def _clean_shell(script, cwd=ROOT, **env):
    """``bash -c script`` in a new user's environment."""
    clean = dict(
        HOME=os.environ.get('HOME', '/root'),
        PATH='/usr/bin:/bin',
        LANG='C.UTF-8',
        OMP_NUM_THREADS='1',
        **env)
    return subprocess.run(['bash', '-c', script],
                          cwd=cwd,
                          env=clean,
                          capture_output=True,
                          text=True,
                          timeout=600)


def test_getting_started_names_the_activation_line():
    assert _activation_line() == 'source .venv/bin/activate'


#: Runs each tool given as ``python TOOL --help`` would (its own
#: ``__main__``, its folder on ``sys.path``) in one interpreter, so that
#: the imports (torch, MMEngine, MMPretrain, mmlml) are paid once.
HELP_DRIVER = """
import os, runpy, sys
for tool in sys.argv[1:]:
    sys.argv = [tool, '--help']
    sys.path.insert(0, os.path.dirname(os.path.abspath(tool)))
    try:
        runpy.run_path(tool, run_name='__main__')
    except SystemExit as e:
        if e.code:
            print('FAILED', tool)
print(sys.executable)
"""


@needs_venv
@pytest.mark.slow
def test_getting_started_runs_after_the_activation_line():
    """Every Python tool of "Getting started" starts (its ``--help``, after
    its imports) under the ``python`` of a clean shell that ran the quick
    start's activation line; without the line, it does not."""
    first, last = _readme_section('Getting started')
    tools = []
    for page, number, _, tokens in doc_commands():
        if (page == 'README.md' and first <= number <= last
                and tokens[0] in PYTHON_NAMES):
            tool = resolve(tokens)[0]
            if tool not in tools:
                tools.append(tool)
    assert len(tools) >= 6, tools
    result = _clean_shell(
        f'{_activation_line()} && python -c '
        f'"$DRIVER" {" ".join(tools)} >/dev/null && '
        f'python -c "$DRIVER"',
        DRIVER=HELP_DRIVER)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    assert 'FAILED' not in result.stdout
    assert result.stdout.strip() == osp.join(VENV, 'bin', 'python')
    # Without the line, the system's Python has no mmengine (or there is
    # no python at all).
    bare = _clean_shell(f'python {tools[0]} --help')
    assert bare.returncode != 0


CUSTOM_CONFIG_PATH = 'configs/custom/partial_label_custom_dataset.py'

#: Where README's test and infer commands read the checkpoint of the
#: full training (ImageNet weights: a download, hours on a CPU), and where
#: the test reads the smoke training's instead.
FULL_RUN, SMOKE_RUN = ('work_dirs/partial_label_custom_dataset/',
                       'work_dirs/smoke/')


def _runnable_getting_started():
    """README's Getting-started commands on the custom config that run
    offline in seconds on a few generated images, as written: the
    preparation check, the smoke training, the test and the inference (on
    the smoke's checkpoint) and the loss's gradient figure. Left to other
    tests: the method selection (its smoke command by
    test_readme_method_selection_runs_on_a_custom_dataset), the full
    training, a VOC config's figures."""
    first, last = _readme_section('Getting started')
    commands = []
    for page, number, _, tokens in doc_commands():
        if not (page == 'README.md' and first <= number <= last and tokens[0]
                in PYTHON_NAMES and CUSTOM_CONFIG_PATH in ' '.join(tokens)):
            continue
        tool = resolve(tokens)[0]
        if tool == 'tools/select_method.py' or (tool == 'tools/train.py'
                                                and '--smoke' not in tokens):
            continue
        words = [t.replace(FULL_RUN, SMOKE_RUN) for t in tokens]
        commands.append(' '.join(w if '*' in w else shlex.quote(w)
                                 for w in words))  # the shell's globs
    return commands


@needs_venv
@pytest.mark.slow
def test_getting_started_commands_run_as_written(tmp_path):
    """The Getting-started steps on one's own data, from a checkout's root
    in a clean shell after the activation line: without the data the
    preparation check says which file is missing in one line; with the
    guide's layout in data/mine (a few generated images with observed
    negatives), every runnable command of the README works as written."""
    commands = _runnable_getting_started()
    tools = [resolve(shlex.split(c))[0] for c in commands]
    assert tools == [
        'tools/dataset_converters/dataset_summary.py', 'tools/train.py',
        'tools/test.py', 'tools/infer.py',
        'tools/analysis/plot_loss_gradients.py'
    ]
    for name in ('configs', 'tools', '.venv', 'checkpoints'):
        (tmp_path / name).symlink_to(osp.join(ROOT, name))
    check = _clean_shell(
        f'{_activation_line()} && {commands[0]}', cwd=tmp_path)
    assert check.returncode == 1
    said = check.stderr.strip().splitlines()
    assert len(said) == 1 and 'data/mine/train.json' in said[0], said
    write_custom_dataset(tmp_path / 'data' / 'mine', num_train=10, num_test=4)
    result = _clean_shell(
        ' && '.join([_activation_line()] + commands), cwd=tmp_path)
    assert result.returncode == 0, (
        result.stdout[-2000:] + result.stderr[-3000:])
    assert (tmp_path / 'work_dirs' / 'predictions.csv').is_file()
    assert (tmp_path / 'gradients.png').is_file()
    assert (tmp_path / SMOKE_RUN / 'test_metrics.json').is_file()


@needs_venv
@pytest.mark.slow
def test_a_second_clone_reuses_the_environment(tmp_path):
    """``MMLML_VENV`` layers the clone's ``.venv`` on an installed one: in
    seconds and a few megabytes, with the other environment's packages
    and this clone's mmlml, activated by the same line."""
    clone = tmp_path / 'clone'
    (clone / 'tools').mkdir(parents=True)
    for name in ('requirements.txt', 'setup.py', 'README.md'):
        shutil.copy(osp.join(ROOT, name), clone / name)
    for name in ('setup_venv.sh', 'launch_env.sh'):
        shutil.copy(osp.join(ROOT, 'tools', name), clone / 'tools' / name)
    shutil.copytree(
        osp.join(ROOT, 'mmlml'),
        clone / 'mmlml',
        ignore=shutil.ignore_patterns('__pycache__', '.mim',
                                      'EDITABLE_INSTALL.txt'))
    start = time.monotonic()
    setup = _clean_shell(
        'bash tools/setup_venv.sh', cwd=clone, MMLML_VENV=VENV)
    seconds = time.monotonic() - start
    assert setup.returncode == 0, setup.stdout + setup.stderr[-3000:]
    assert 'on the packages of' in setup.stdout
    assert seconds < 180, f'{seconds:.0f} s to reuse an environment'
    size = sum(
        osp.getsize(osp.join(d, f)) for d, _, files in os.walk(clone / '.venv')
        for f in files if not osp.islink(osp.join(d, f)))
    assert size < 200e6, f'{size / 1e6:.0f} MB'
    used = _clean_shell(
        f'{_activation_line()} && python -c "from importlib.util import '
        'find_spec as f; print(f(\'mmlml\').origin, f(\'mmengine\').origin)"'
        ' && pytest --version',
        cwd=clone)
    assert used.returncode == 0, used.stderr[-3000:]
    mmlml_file, mmengine_file = used.stdout.split()[:2]
    assert mmlml_file == str(clone / 'mmlml' / '__init__.py')
    assert mmengine_file.startswith(VENV + os.sep)
    # A second setup finds it installed.
    again = _clean_shell('bash tools/setup_venv.sh', cwd=clone)
    assert again.returncode == 0 and not re.search('install|creat',
                                                   again.stdout)
