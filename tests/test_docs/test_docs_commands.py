"""The commands of README.md and docs/*.md stay true to the repository.

Every command line of a fenced ``bash`` / ``shell`` / ``sh`` block (and every
``$ `` line of a ``text`` / ``console`` block) is checked for what can be
checked without running it: the script it runs exists, every config and
repository file it names exists, every ``--option`` it passes is accepted by
the tool (read from the tool's ``--help``; a shell wrapper's options are
those of the Python tool it launches), the environment variables it sets
are read by the wrapper, and every ``--cfg-options`` key exists in the
config it names. A few cheap commands are run for real. Renaming a tool, an
option or a config named in the docs fails here.

The README's length, the relative links of every page and the index of
docs/ are checked too, and the README's config snippets are parsed.
"""
import glob
import itertools
import json
import os
import os.path as osp
import re
import shlex
import subprocess
import sys

import pytest
from conftest import ROOT
from test_custom_dataset_guide import CUSTOM_CONFIG, write_custom_dataset

#: The pages whose commands and links are checked.
PAGES = ['README.md'] + sorted(
    osp.relpath(p, ROOT) for p in glob.glob(osp.join(ROOT, 'docs', '*.md')))

#: The README is the front door: short.
README_MAX_LINES = 300

PYTHON = osp.join(ROOT, '.venv', 'bin', 'python')
if not osp.exists(PYTHON):
    PYTHON = sys.executable

SHELL_LANGUAGES = {'bash', 'shell', 'sh'}
#: Blocks of these languages hold output; their ``$ `` lines are commands.
TRANSCRIPT_LANGUAGES = {'text', 'console', 'shell-session'}

#: How the docs invoke Python.
PYTHON_NAMES = {'python', 'python3', '.venv/bin/python'}

#: Commands that are not a tool of this repository. They are checked for
#: what can be checked (every repository path they name exists); the value
#: says why nothing more is.
KNOWN_KINDS = {
    'pip': 'installs packages',
    '.venv/bin/pip': 'installs packages into the project environment',
    'mim': "OpenMMLab's installer and launcher",
    '.venv/bin/pre-commit': 'installs the git hooks',
    'cp': 'copies a file of a dataset',
    'torchrun': 'the distributed launcher (the tool it runs is checked)',
    'srun': 'the slurm launcher (the tool it runs is checked)',
    'source': 'activates the project environment (test_readme_environment)',
}

#: Words that stand for a value the reader supplies. A command may use
#: them only where no concrete value exists (a slurm partition) or in the
#: synopsis of a tool's options.
PLACEHOLDERS = {
    'CONFIG', 'CHECKPOINT', 'INPUT', 'PARTITION', 'K', 'N', 'LOAD', 'k=v',
    '...'
}

#: The shell wrappers of tools/: the Python tool each launches and the
#: arguments it hands that tool (from the wrapper's own arguments).
WRAPPERS = {
    'tools/demo.sh': ('tools/demo.py', lambda a: a),
    'tools/dist_train.sh': ('tools/train.py', lambda a: a[:1] + a[2:]),
    'tools/dist_test.sh': ('tools/test.py', lambda a: a[:2] + a[3:]),
    'tools/slurm_train.sh':
    ('tools/train.py', lambda a: a[2:3] + ['--work-dir'] + a[3:4] + a[4:]),
    'tools/slurm_test.sh': ('tools/test.py', lambda a: a[2:]),
}
#: Shell scripts with their own command line: the options each takes.
SCRIPTS = {
    'tools/run_tests.sh': None,  # pytest's arguments: paths are checked
    'tools/lint.sh': {'--fix'},
    'tools/setup_venv.sh': set(),
    'tools/analysis/stress_distributed.sh': set(),
    'tools/cluster_testbed.sh': set(),  # start, stop, status, env
}

#: Tools whose first positional argument is a config.
CONFIG_FIRST = {
    'tools/train.py', 'tools/test.py', 'tools/infer.py',
    'tools/pseudo_label.py', 'tools/select_method.py',
    'tools/analysis/missing_label_scores.py',
    'tools/dataset_converters/dataset_summary.py'
}
#: Tools whose positional arguments are all configs.
CONFIG_ALL = {
    'tools/demo.py', 'tools/benchmark.py',
    'tools/analysis/benchmark_compile.py'
}
#: ``--cfg-options`` keys that may be absent from a config because MMEngine
#: has a default for them.
ADDABLE_KEYS = {'optim_wrapper.type'}

#: Folders of the repository: a path under one of them must exist.
REPO_DIRS = ('configs/', 'tools/', 'docs/', 'tests/', 'mmlml/', 'checkpoints/')
#: Where commands write or read what they make: not checked.
GENERATED = ('work_dirs/', 'data/', '/')

#: Commands run for real (each under ~20 s on a CPU): a command whose tool
#: is a key and whose arguments start with the value (None: any).
CHEAP = {
    'tools/dataset_converters/dataset_summary.py': [CUSTOM_CONFIG],
    'tools/analysis/plot_loss_gradients.py': None,
}


# --------------------------------------------------------------- parsing
def fenced_blocks(page):
    """(language, line number, lines) of every fenced block of a page, the
    lines dedented by the fence's indentation."""
    with open(osp.join(ROOT, page), encoding='utf-8') as f:
        lines = f.read().split('\n')
    blocks, i = [], 0
    while i < len(lines):
        match = re.match(r'^([ \t]*)(`{3,}|~{3,})\s*([\w+-]*)', lines[i])
        if not match:
            i += 1
            continue
        indent, fence, language = match.groups()
        body, j = [], i + 1
        while j < len(lines) and lines[j].strip() != fence:
            line = lines[j]
            body.append(line[len(indent):] if line.
                        startswith(indent) else line.lstrip())
            j += 1
        blocks.append((language.lower(), i + 2, body))
        i = j + 1
    return blocks


def logical_lines(block_lines, first_line, transcript=False):
    """(line number, text) of the lines of a block, backslash continuations
    joined; in a transcript only the ``$ `` lines."""
    out, current, start = [], '', None
    for offset, line in enumerate(block_lines):
        if transcript and not current:
            if not line.startswith('$ '):
                continue
            line = line[2:]
        if start is None:
            start = first_line + offset
        if line.rstrip().endswith('\\'):
            current += line.rstrip()[:-1] + ' '
            continue
        out.append((start, current + line))
        current, start = '', None
    if current:
        out.append((start, current))
    return out


def tokenize(text):
    # A `|` inside a word is a synopsis' alternatives (`train|val`); a pipe
    # stands alone.
    lexer = shlex.shlex(text, posix=True, punctuation_chars=';&')
    lexer.whitespace_split = True
    lexer.commenters = '#'
    return list(lexer)


def split_commands(tokens):
    """A token list split at ``;``, ``&&``, ``||`` and ``|``."""
    commands, current = [], []
    for token in tokens:
        if token in (';', '&&', '||', '|', '&'):
            if current:
                commands.append(current)
            current = []
        else:
            current.append(token)
    if current:
        commands.append(current)
    return commands


def is_assignment(token):
    return re.match(r'^[A-Za-z_][A-Za-z0-9_]*=', token) is not None


def expand_variables(tokens, variables):

    def substitute(token):
        for name, value in variables.items():
            token = re.sub(r'\$\{?' + name + r'\b\}?', value, token)
        return token

    return [substitute(t) for t in tokens]


def shell_commands(lines):
    """The simple commands of a block's logical lines: (line number, env
    names, tokens), with ``NAME=value`` lines and ``for`` loops expanded."""
    variables, out = {}, []
    loop = None  # (variable, values, line number, body commands)
    for number, text in lines:
        for command in split_commands(tokenize(text)):
            if loop is not None:
                if command == ['done']:
                    name, values, _, body = loop
                    for value in values:
                        for n, env, tokens in body:
                            out.append(
                                (n, env,
                                 expand_variables(tokens, {
                                     **variables, name: value
                                 })))
                    loop = None
                    continue
                if command[0] == 'do':
                    command = command[1:]
                    if not command:
                        continue
            if command[0] == 'for':
                assert len(command) >= 4 and command[2] == 'in', (
                    f'line {number}: unsupported loop {command}')
                loop = (command[1], command[3:], number, [])
                continue
            if all(is_assignment(t) for t in command):
                for token in command:
                    name, value = token.split('=', 1)
                    variables[name] = expand_variables([value], variables)[0]
                continue
            env = list(itertools.takewhile(is_assignment, command))
            tokens = expand_variables(command[len(env):], variables)
            entry = (number, [e.split('=', 1)[0] for e in env], tokens)
            if loop is not None:
                loop[3].append(entry)
            else:
                out.append(entry)
    assert loop is None, f'a loop from line {loop[2]} has no done'
    return out


def doc_commands():
    """Every command of the pages: (page, line number, env names,
    tokens)."""
    commands = []
    for page in PAGES:
        for language, first, body in fenced_blocks(page):
            if language in SHELL_LANGUAGES:
                lines = logical_lines(body, first)
            elif language in TRANSCRIPT_LANGUAGES:
                lines = logical_lines(body, first, transcript=True)
            else:
                continue
            for number, env, tokens in shell_commands(lines):
                commands.append((page, number, env, tokens))
    return commands


COMMANDS = doc_commands()


# --------------------------------------------------------- what is named
def expand_braces(token):
    match = re.search(r'\{([^{}]*,[^{}]*)\}', token)
    if not match:
        return [token]
    out = []
    for part in match.group(1).split(','):
        out += expand_braces(token[:match.start()] + part +
                             token[match.end():])
    return out


def repo_files(token):
    """The repository files a path token names (globs and braces expanded),
    or None if the token is not a repository path."""
    if '$' in token or token.startswith(GENERATED):
        return None
    paths = expand_braces(token)
    if not any(p.startswith(REPO_DIRS) or p.endswith('.py') for p in paths):
        return None
    files = []
    for path in paths:
        if any(c in path for c in '*?['):
            files += [
                osp.relpath(p, ROOT)
                for p in sorted(glob.glob(osp.join(ROOT, path)))
            ]
        elif osp.exists(osp.join(ROOT, path)):
            files.append(path)
        else:
            files.append(None)
    return files


def missing_paths(tokens):
    problems = []
    for token in tokens:
        if token.startswith('-') or is_assignment(token):
            continue
        token = token.strip('[]')
        if token in PLACEHOLDERS:
            continue
        files = repo_files(token)
        if files is None:
            continue
        if not files or None in files:
            problems.append(f'{token!r} names no file of the repository')
    return problems


# ------------------------------------------------------------ tool options
def _option_arity(invocation):
    """The number of values of an option from its ``--help`` line:
    0, 1, 2, ..., '?' or '+'."""
    metavars = invocation.split()[1:]
    if not metavars:
        return 0
    if any('...' in m for m in metavars):
        return '+'
    if metavars[0].startswith('['):
        return '?'
    return len(metavars)


def parse_help(text):
    """The options of a tool, each with its number of values, from the
    ``options:`` section of its ``--help``."""
    options, section = {}, False
    for line in text.split('\n'):
        if re.match(r'^(options|optional arguments):', line):
            section = True
            continue
        if section and line and not line.startswith(' '):
            section = False
        match = re.match(r'^  (-\S.*?)(\s{2,}|$)', line) if section else None
        if not match:
            continue
        for invocation in match.group(1).split(', '):
            if invocation.startswith('--'):
                options[invocation.split()[0]] = _option_arity(invocation)
    return options


def referenced_tools():
    tools = set()
    for _, _, _, tokens in COMMANDS:
        tool, _ = resolve(tokens)
        tool = WRAPPERS.get(tool, (tool, None))[0]
        if tool is not None and tool.endswith('.py') and osp.exists(
                osp.join(ROOT, tool)):
            tools.add(tool)
    return tools


#: Runs the ``--help`` of each tool given on the command line, in one
#: interpreter (the imports of torch and MMPretrain are shared), and prints
#: {tool: [exit status, output]} as JSON.
HELP_DRIVER = """
import contextlib, io, json, os, runpy, sys, traceback
out = {}
for tool in sys.argv[1:]:
    buffer = io.StringIO()
    sys.argv = [tool, '--help']
    sys.path.insert(0, os.path.dirname(os.path.abspath(tool)))  # as python
    status = 0
    with contextlib.redirect_stdout(buffer):
        try:
            runpy.run_path(tool, run_name='__main__')
        except SystemExit as e:
            status = e.code or 0
        except BaseException:
            status, _ = 1, buffer.write(traceback.format_exc())
    out[tool] = [status, buffer.getvalue()]
print(json.dumps(out))
"""

_HELP = {}


def tool_options(tool):
    """The options of a Python tool, from its ``--help``. Run once per tool:
    the first call runs the ``--help`` of every tool the docs name, in one
    subprocess."""
    if tool not in _HELP:
        wanted = sorted(referenced_tools() | {tool})
        result = subprocess.run(
            [PYTHON, '-c', HELP_DRIVER] + wanted,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=600)
        assert result.returncode == 0, result.stderr[-3000:]
        for name, (status, text) in json.loads(
                result.stdout.strip().split('\n')[-1]).items():
            assert status == 0, f'{name} --help failed:\n{text[-3000:]}'
            _HELP[name] = parse_help(text)
    return _HELP[tool]


def split_arguments(args, options):
    """(positional arguments, {option: values}) of a tool's arguments,
    with the number of values of each option from ``options``; synopsis
    brackets are dropped."""
    positional, given, i = [], {}, 0
    args = [a.strip('[]') for a in args]
    while i < len(args):
        arg = args[i]
        if not arg.startswith('--'):
            positional.append(arg)
            i += 1
            continue
        name, _, inline = arg.partition('=')
        arity = options.get(name, 0)
        i += 1
        if inline or arity == 0:
            given[name] = [inline] if inline else []
            continue
        values = []
        while i < len(args) and not args[i].startswith('--'):
            if arity == '?' and values:
                break
            if isinstance(arity, int) and len(values) == arity:
                break
            values.append(args[i])
            i += 1
        given[name] = values
    return positional, given


# ------------------------------------------------------------ configs
_CONFIGS = {}


def load_config(path):
    if path not in _CONFIGS:
        from mmengine.config import Config

        import mmlml  # noqa: F401
        _CONFIGS[path] = Config.fromfile(osp.join(ROOT, path))
    return _CONFIGS[path]


def has_key(cfg, key):
    node = cfg
    for part in key.split('.'):
        if isinstance(node, (list, tuple)) and part.isdigit():
            if int(part) >= len(node):
                return False
            node = node[int(part)]
        elif hasattr(node, 'keys') and part in node:
            node = node[part]
        else:
            return key in ADDABLE_KEYS
    return True


def replaced(key, values):
    """Whether ``key`` is inside a dict that the same ``--cfg-options``
    replace (``PARENT._delete_=True``: its keys are new ones)."""
    deleted = [
        value.partition('=')[0][:-len('._delete_')] for value in values
        if value.partition('=')[0].endswith('._delete_')
    ]
    return key.endswith('._delete_') and key[:-len('._delete_')] in deleted \
        or any(key.startswith(parent + '.') for parent in deleted)


def cfg_option_problems(configs, values):
    problems = []
    for config in configs:
        cfg = load_config(config)
        for value in values:
            key = value.partition('=')[0]
            if not has_key(cfg, key) and not replaced(key, values):
                problems.append(f'--cfg-options {key}: no such key in '
                                f'{config}')
    return problems


# ------------------------------------------------------------ commands
def resolve(tokens):
    """(tool, its arguments) of a command: the Python tool it runs, the
    shell script, a known kind (``'kind:pip'``), or (None, tokens)."""
    head = tokens[0]
    if head in PYTHON_NAMES:
        if len(tokens) > 1 and tokens[1] == '-m':
            module = tokens[2] if len(tokens) > 2 else ''
            if module == 'torch.distributed.run':
                return resolve(['torchrun'] + tokens[3:])
            return f'module:{module}', tokens[3:]
        return (tokens[1], tokens[2:]) if len(tokens) > 1 else (None, tokens)
    if head == 'bash' and len(tokens) > 1:
        return tokens[1], tokens[2:]
    if head.startswith('tools/') and head.endswith('.sh'):
        return head, tokens[1:]
    if head in ('torchrun', 'srun'):
        for i, token in enumerate(tokens):
            if token.startswith('tools/') and token.endswith('.py'):
                return token, tokens[i + 1:]
    if head in KNOWN_KINDS:
        return f'kind:{head}', tokens[1:]
    return None, tokens


def check_python_tool(tool, args):
    problems = []
    options = tool_options(tool)
    positional, given = split_arguments(args, options)
    for name in given:
        if name not in options:
            problems.append(f'{tool} has no option {name}')
    configs = []
    if tool in CONFIG_FIRST:
        if not positional:
            problems.append(f'{tool} is given no config')
        elif positional[0] in PLACEHOLDERS:
            pass
        elif not positional[0].endswith('.py'):
            problems.append(f'{tool}: {positional[0]!r} is not a config')
        elif not positional[0].startswith(GENERATED):
            configs.append(positional[0])
    elif tool in CONFIG_ALL:
        for arg in positional:
            configs += [f for f in (repo_files(arg) or []) if f]
    configs = [c for c in configs if osp.exists(osp.join(ROOT, c))]
    if '--cfg-options' in given and tool in CONFIG_FIRST | CONFIG_ALL:
        values = [v for v in given['--cfg-options'] if v not in PLACEHOLDERS]
        problems += cfg_option_problems(configs, values)
    return problems


def script_code(path):
    """A shell script's lines that are not comments (a comment that names a
    tool or a variable does not run or read it)."""
    with open(path) as f:
        return ''.join(line for line in f if not line.lstrip().startswith('#'))


def script_text(tool):
    """The code of a shell script of the repository, followed by that of
    the scripts beside it that it runs (a wrapper's launcher), which read
    the environment and name the tool for it."""
    text = script_code(osp.join(ROOT, tool))
    for name in sorted(set(re.findall(r'/(\w+\.sh)\b', text))):
        called = osp.join(ROOT, osp.dirname(tool), name)
        if osp.exists(called) and called != osp.join(ROOT, tool):
            text += script_code(called)
    return text


def check_command(env, tokens):
    """What is wrong with a command (an empty list if nothing)."""
    tool, args = resolve(tokens)
    if tool is None:
        return [
            f'unknown kind of command {tokens[0]!r}: name a tool of the '
            'repository, or add the kind to KNOWN_KINDS'
        ]
    problems = missing_paths(tokens)
    if tool.startswith('kind:'):
        return problems
    if tool.startswith('module:'):
        if tool != 'module:pytest':
            problems.append(f'unknown module {tool[7:]!r}')
        return problems
    if not osp.exists(osp.join(ROOT, tool)):
        return problems + [f'{tool} does not exist']
    if tool.endswith('.sh'):
        script = script_text(tool)
        for name in env:
            if not re.search(r'\$\{?' + name + r'\b', script):
                problems.append(f'{tool} does not read ${name}')
        if tool in WRAPPERS:
            python_tool, pass_on = WRAPPERS[tool]
            if osp.basename(python_tool) not in script:
                problems.append(f'{tool} does not run {python_tool}')
            if not osp.exists(osp.join(ROOT, python_tool)):
                return problems + [f'{python_tool} does not exist']
            return problems + check_python_tool(python_tool, pass_on(args))
        if tool not in SCRIPTS:
            return problems + [f'{tool}: add it to WRAPPERS or SCRIPTS']
        accepted = SCRIPTS[tool]
        if accepted is not None:
            for arg in args:
                if arg.startswith('-') and arg not in accepted:
                    problems.append(f'{tool} takes no {arg}')
                if arg.startswith('-') and arg not in script:
                    problems.append(f'{tool} does not handle {arg}')
        return problems
    if not tool.endswith('.py'):
        return problems + [f'{tool} is not a Python tool or a shell script']
    return problems + check_python_tool(tool, args)


def command_id(command):
    page, number, _, tokens = command
    return f'{page}:{number}:{osp.basename(resolve(tokens)[0] or "?")}'


def test_docs_have_commands():
    assert len(COMMANDS) >= 40
    pages = {page for page, _, _, _ in COMMANDS}
    assert {'README.md', 'docs/model_zoo.md', 'docs/benchmark.md'} <= pages


@pytest.mark.parametrize('command', COMMANDS, ids=command_id)
def test_command(command):
    page, number, env, tokens = command
    problems = check_command(env, tokens)
    assert not problems, (f'{page}, line {number}: {shlex.join(tokens)}\n' +
                          '\n'.join(problems))


def test_checker_catches_renames():
    """What the test must catch: a renamed tool, option, config or
    ``--cfg-options`` key, and an unknown kind of command."""
    config = 'configs/demo/an.py'
    good = ['python', 'tools/train.py', config, '--work-dir', 'work_dirs/x']
    assert check_command([], good) == []
    bad = [
        ['python', 'tools/no_such_tool.py', config],
        ['python', 'tools/train.py', config, '--no-such-option'],
        ['python', 'tools/train.py', 'configs/demo/no_such_config.py'],
        ['python', 'tools/train.py', config, '--cfg-options', 'no_such.key=1'],
        ['bash', 'tools/dist_train.sh', config, '8', '--no-such-option'],
        ['bash', 'tools/no_such_script.sh'],
        ['python', 'tools/demo.py', 'configs/demo/{an,no_such}.py'],
        ['no_such_program', config],
    ]
    for tokens in bad:
        assert check_command([], tokens), tokens
    assert check_command(['NO_SUCH_VARIABLE'],
                         ['bash', 'tools/dist_train.sh', config, '8'])


def test_shell_parsing():
    lines = [(1, 'D=work_dirs/x'), (2, 'for m in a b; do'),
             (3, '    python tools/x.py $D/$m.py --out $m.npz'), (4, 'done'),
             (5, 'GPUS=8 bash tools/y.sh c # comment')]
    assert shell_commands(lines) == [
        (3, [], ['python', 'tools/x.py', 'work_dirs/x/a.py', '--out',
                 'a.npz']),
        (3, [], ['python', 'tools/x.py', 'work_dirs/x/b.py', '--out',
                 'b.npz']),
        (5, ['GPUS'], ['bash', 'tools/y.sh', 'c']),
    ]
    options = parse_help('usage: x\n\noptions:\n  -h, --help  help\n'
                         '  --shape N C  two\n  --seeds SEEDS [SEEDS ...]\n'
                         '  --resume [RESUME]  opt\n  --amp        flag\n')
    assert options == {
        '--help': 0,
        '--shape': 2,
        '--seeds': '+',
        '--resume': '?',
        '--amp': 0
    }


# ------------------------------------------------------- cheap commands
def is_cheap(tokens):
    tool, args = resolve(tokens)
    if '--help' in args:
        return True
    if tool not in CHEAP:
        return False
    return CHEAP[tool] is None or args[:len(CHEAP[tool])] == CHEAP[tool]


CHEAP_COMMANDS = sorted(
    {shlex.join(tokens)
     for _, _, _, tokens in COMMANDS if is_cheap(tokens)})


def test_cheap_commands_are_found():
    assert any('dataset_summary.py' in c for c in CHEAP_COMMANDS)
    assert any('plot_loss_gradients.py' in c for c in CHEAP_COMMANDS)


RUN_DRIVER = """
import json, os, runpy, sys, traceback
out = {}
for where, command in json.loads(sys.argv[1]):
    os.chdir(where)
    sys.argv = command[1:]
    sys.path.insert(0, os.path.dirname(os.path.abspath(command[1])))
    try:
        runpy.run_path(command[1], run_name='__main__')
        status = 0
    except SystemExit as e:
        status = e.code or 0
    except BaseException:
        status = traceback.format_exc()[-3000:]
    out[' '.join(command)] = status
print(json.dumps(out))
"""


@pytest.mark.slow
def test_cheap_commands_run(tmp_path):
    """Every cheap command, each in its own copy of the repository's layout
    (tools/, configs/, checkpoints/ linked) with the custom dataset generated
    under data/mine/; one interpreter runs them all, each as ``python
    TOOL ...`` would (its own ``__main__``, its folder on ``sys.path``), so
    that the imports are paid once."""
    write_custom_dataset(tmp_path / 'data' / 'mine')
    commands = []
    for i, command in enumerate(CHEAP_COMMANDS):
        where = tmp_path / f'command{i}'  # its own outputs
        where.mkdir()
        for name in ('tools', 'configs', 'checkpoints'):
            os.symlink(osp.join(ROOT, name), where / name)
        os.symlink(tmp_path / 'data', where / 'data')
        commands.append((str(where), shlex.split(command)))
    assert all(tokens[0] in PYTHON_NAMES for _, tokens in commands)
    result = subprocess.run([PYTHON, '-c', RUN_DRIVER,
                             json.dumps(commands)],
                            cwd=tmp_path,
                            capture_output=True,
                            text=True,
                            timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    statuses = json.loads(result.stdout.strip().split('\n')[-1])
    failed = {c: s for c, s in statuses.items() if s != 0}
    assert not failed, failed


# ------------------------------------------------------------ pages
def test_readme_is_short():
    with open(osp.join(ROOT, 'README.md'), encoding='utf-8') as f:
        lines = f.read().rstrip('\n').split('\n')
    assert len(lines) <= README_MAX_LINES


def _slug(heading):
    """GitHub's anchor of a heading."""
    text = re.sub(r'[`*]|\[|\]\([^)]*\)', '', heading.strip().lower())
    text = re.sub(r'[^\w\- ]', '', text)
    return text.replace(' ', '-')


def _anchors(path):
    with open(path, encoding='utf-8') as f:
        text = f.read()
    text = re.sub(r'^```.*?^```', '', text, flags=re.S | re.M)
    return {
        _slug(m.group(1))
        for m in re.finditer(r'^#{1,6}\s+(.*)$', text, flags=re.M)
    }


def _links(page):
    with open(osp.join(ROOT, page), encoding='utf-8') as f:
        text = f.read()
    # Code blocks and inline code hold no links.
    text = re.sub(r'^\s*(```|~~~).*?^\s*\1', '', text, flags=re.S | re.M)
    text = re.sub(r'`[^`\n]*`', '', text)
    return re.findall(r'\]\(([^)\s]+)(?:\s+"[^"]*")?\)', text)


@pytest.mark.parametrize('page', PAGES)
def test_relative_links(page):
    links = _links(page)
    broken = []
    for link in links:
        if re.match(r'^[a-z][a-z0-9+.-]*:', link):
            continue  # https://, mailto:
        path, _, anchor = link.partition('#')
        target = (
            osp.join(ROOT, page) if not path else osp.normpath(
                osp.join(ROOT, osp.dirname(page), path)))
        if not osp.exists(target):
            broken.append(f'{link}: no such file')
        elif anchor and target.endswith('.md') and anchor not in _anchors(
                target):
            broken.append(f'{link}: no such heading')
    assert not broken, f'{page}: ' + '; '.join(broken)


def test_docs_index_lists_every_page():
    index = 'docs/README.md'
    linked = {
        osp.normpath(osp.join('docs',
                              link.partition('#')[0]))
        for link in _links(index)
    }
    pages = {p for p in PAGES if p.startswith('docs/') and p != index}
    assert pages - linked == set()
    with open(osp.join(ROOT, 'README.md'), encoding='utf-8') as f:
        assert '(docs/README.md)' in f.read()


# ------------------------------------------------- README config snippets
def _readme_python_blocks():
    return [
        '\n'.join(body) for language, _, body in fenced_blocks('README.md')
        if language == 'python' and '_base_' in '\n'.join(body)
    ]


def _config_tree(tmp_path):
    """A configs/ folder that sees the repository's configs."""
    configs = tmp_path / 'configs'
    configs.mkdir()
    for name in os.listdir(osp.join(ROOT, 'configs')):
        os.symlink(osp.join(ROOT, 'configs', name), configs / name)
    (configs / 'my_project').mkdir()
    return configs / 'my_project'


def test_readme_config_example(tmp_path):
    from mmengine.config import Config

    import mmlml  # noqa: F401
    from mmlml.registry import MODELS
    block = next(b for b in _readme_python_blocks() if 'HillLoss' in b)
    path = _config_tree(tmp_path) / 'readme_example.py'
    path.write_text(block)
    cfg = Config.fromfile(str(path))
    assert cfg.model.head.loss == dict(type='HillLoss')
    assert cfg.model.head.num_classes == cfg.data_preprocessor.num_classes
    assert MODELS.get('HillLoss') is not None
    assert cfg.custom_imports['imports'] == ['mmlml']


def test_readme_wrapper_snippet(tmp_path, monkeypatch):
    """The wrapper snippet replaces the paper's dataset (``_delete_=True``)
    and keeps the paper's wrapper: it builds on generated images."""
    from mmengine.config import Config
    from mmengine.registry import DefaultScope

    import mmlml  # noqa: F401
    from mmlml.registry import DATASETS
    block = next(b for b in _readme_python_blocks()
                 if 'CustomMultiLabelDataset' in b)
    path = _config_tree(tmp_path) / 'readme_wrapper.py'
    path.write_text(block)
    cfg = Config.fromfile(str(path))
    dataset = cfg.train_dataloader.dataset
    assert dataset.type == 'PartialLabelDataset' and dataset.mode == 'ratio'
    assert 'split' not in dataset.dataset  # VOC's argument was not merged
    write_custom_dataset(tmp_path / 'data' / 'mine', num_train=20)
    monkeypatch.chdir(tmp_path)
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        built = DATASETS.build(dataset)
    assert len(built) == 16  # the 80% training part of the 20 images
    assert built[0]['inputs'].shape[-2:] == (448, 448)


def test_docs_address_hooks_by_type():
    """No page tells the reader to override a hook by its place in
    ``custom_hooks`` (``custom_hooks.0.warmup_epochs=...``), which changes
    another hook once the list changes: the docs use ``tools/train.py
    --smoke`` or a config that states its hooks by type."""
    pages = PAGES + sorted(
        osp.relpath(p, ROOT)
        for p in glob.glob(osp.join(ROOT, 'configs', '*', 'README.md')))
    found = []
    for page in pages:
        with open(osp.join(ROOT, page), encoding='utf-8') as f:
            for number, line in enumerate(f, 1):
                if re.search(r'custom_hooks\.\d', line):
                    found.append(f'{page}:{number}')
    assert not found, found


def test_no_page_announces_a_part_as_to_come():
    """Every part the pages describe exists: none is announced as "to
    come" (the CLIP pseudo-labeller and its hook were, after they
    landed)."""
    found = []
    for page in PAGES:
        with open(osp.join(ROOT, page), encoding='utf-8') as f:
            found += [
                f'{page}:{n}' for n, line in enumerate(f, 1)
                if re.search(r'\bto come\b', line)
            ]
    assert not found, found


def test_which_method_quotes_the_benchmark_tables():
    """Every result docs/which_method.md quotes (a number with two
    decimals) is in a committed benchmark table, so that a rerun of the
    benchmark that changes it fails here instead of leaving the advice
    stale."""
    tables = ''
    results = osp.join(ROOT, 'docs', 'results')
    for path in glob.glob(osp.join(results, 'benchmark*.md')):
        with open(path, encoding='utf-8') as f:
            tables += f.read()
    with open(
            osp.join(ROOT, 'docs', 'which_method.md'), encoding='utf-8') as f:
        quoted = set(re.findall(r'(?<![\d.])\d+\.\d\d(?!\d)', f.read()))
    assert quoted
    missing = sorted(n for n in quoted if n not in tables)
    assert not missing, missing


def test_contributing_guide_names_existing_paths():
    """Every repository path that docs/contributing.md names in inline code
    exists (a file, a folder, or a test as ``path::name``): the guide
    points at the examples to follow, so a rename must update it."""
    page = 'docs/contributing.md'
    with open(osp.join(ROOT, page), encoding='utf-8') as f:
        text = f.read()
    text = re.sub(r'^\s*(```|~~~).*?^\s*\1', '', text, flags=re.S | re.M)
    named = {
        token.strip('(),;:.').split('::')[0]
        for span in re.findall(r'`([^`\n]+)`', text)
        for token in span.split() if token.startswith(REPO_DIRS)
    }
    assert len(named) > 20
    missing = sorted(p for p in named if not osp.exists(osp.join(ROOT, p)))
    assert not missing, f'{page} names missing paths: {missing}'
