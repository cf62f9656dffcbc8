import importlib.util
import os
import os.path as osp
import socket
import sys
import textwrap
import types

import pytest

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))


def pytest_configure(config):
    """Spare every test process a cost of MMEngine that no test looks at:
    ``BaseDataset`` runs a full ``gc.collect()`` after serialising its
    data list, to free memory for dataloader workers (a quarter of a
    second each in a test process holding torch and many datasets). (The
    yapf formatting of a config's text, two thirds of a tiny demo run's
    CPU, is done once per text in every process that imports mmlml:
    ``mmlml.compat.patch_config_text_formatting``.)"""
    from mmengine.dataset import base_dataset
    base_dataset.gc = types.SimpleNamespace(collect=lambda *args: 0)
    _unique_runner_names()
    # How far the suite is: a line every 30 s (tests/suite_progress.py).
    from suite_progress import register
    register(config)


#: Why the tests marked ``cluster`` skip (one line in the summary).
CLUSTER_SKIP = ('cluster test bed not running: start it with `bash '
                'tools/cluster_testbed.sh start` (root, Debian) and export '
                'the variables it prints')


def cluster_running() -> bool:
    """Whether the test bed's variables are set (tools/cluster_testbed.sh)."""
    return bool(
        os.environ.get('MMLML_SLURM_PARTITION')
        and os.environ.get('MMLML_TEST_DATABASE_URL'))


def pytest_collection_modifyitems(config, items):
    """Spread the long tests over the workers (:func:`_long_tests_first`);
    skip the tests marked ``cluster`` where the test bed is not running
    (under CI, which starts it, they fail instead)."""
    items[:] = _long_tests_first(
        items, int(os.environ.get('PYTEST_XDIST_WORKER_COUNT', 1)))
    if cluster_running() or os.environ.get('CI'):
        return
    skip = pytest.mark.skip(reason=CLUSTER_SKIP)
    for item in items:
        if 'cluster' in item.keywords:
            item.add_marker(skip)


def _long_tests_first(items: list, workers: int) -> list:
    """The tests in the order that ends a run on ``workers`` workers with
    short tests: pytest-xdist's work stealing gives each worker an equal
    run of the list, in turn; each run starts with its share of the long
    tests (marked ``slow`` or ``cluster``, dealt in turn) and goes on with
    short ones, so no worker waits long for another's last test. The
    order of the tests within each kind is kept."""
    is_long = [
        'slow' in item.keywords or 'cluster' in item.keywords for item in items
    ]
    long = [item for item, flag in zip(items, is_long) if flag]
    short = [item for item, flag in zip(items, is_long) if not flag]
    ordered: list = []
    for worker in range(workers):
        size = (len(items) - len(ordered)) // (workers - worker)
        share = long[worker::workers]
        ordered += share + short[:max(size - len(share), 0)]
        short = short[max(size - len(share), 0):]
    return ordered + short


def pytest_terminal_summary(terminalreporter):
    """One line when the cluster tests were skipped."""
    skipped = terminalreporter.stats.get('skipped', [])
    count = sum(1 for report in skipped
                if CLUSTER_SKIP in str(report.longrepr))
    if count:
        terminalreporter.write_line(f'{count} cluster tests skipped: '
                                    f'{CLUSTER_SKIP}')


def _unique_runner_names():
    """A Runner names its logger, message hub, visualizer and log folder
    after its config file and the second it starts (its timestamp): two
    Runners of one config (or one work_dir) started within a second, as
    fast tests start them, would share the first one's message hub and
    log. A Runner that would repeat a name gets a numbered timestamp
    (``20261129_051000_1``: still sorted after the first) instead."""
    from mmengine.runner import Runner
    setup_env = Runner.setup_env
    started = set()

    def setup_env_with_unique_names(self, env_cfg):
        setup_env(self, env_cfg)
        filename = getattr(self.cfg, 'filename', None)
        names = (self._work_dir, osp.splitext(osp.basename(filename or ''))[0])
        timestamp, count = self._timestamp, 0
        while any((name, self._timestamp) in started for name in names):
            count += 1
            self._timestamp = f'{timestamp}_{count}'
        started.update((name, self._timestamp) for name in names)

    Runner.setup_env = setup_env_with_unique_names


def load_train_tool(name='mmlml_train_tool'):
    """``tools/train.py`` as a module (its ``merge_args``, ``main``)."""
    spec = importlib.util.spec_from_file_location(
        name, osp.join(ROOT, 'tools', 'train.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def free_port():
    """A TCP port that is free on this machine now, for the rendezvous of
    a process group: a fixed port collides between the workers of a
    parallel test run (pytest-xdist) and between runs side by side."""
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def dist_train_env(*python_paths):
    """The environment for ``tools/dist_train.sh`` in a test: a free
    ``PORT``, one thread per process, this Python's ``torchrun`` first on
    ``PATH`` and ``python_paths`` first on ``PYTHONPATH``."""
    env = dict(os.environ, PORT=str(free_port()), OMP_NUM_THREADS='1')
    env['PATH'] = osp.dirname(sys.executable) + os.pathsep + env['PATH']
    if python_paths:
        env['PYTHONPATH'] = os.pathsep.join(
            [*python_paths, env.get('PYTHONPATH', '')])
    return env


@pytest.fixture
def tiny_demo_config(tmp_path):
    """The demo config (configs/demo/an.py) shrunk to a few iterations:
    64 training images (51 train / 13 val after the split), 32 test images,
    batch 16, 2 epochs."""

    def make(loss=None, max_epochs=2):
        head = '' if loss is None else f'loss={loss!r}, '
        path = tmp_path / 'tiny_demo.py'
        path.write_text(
            textwrap.dedent(f"""
            _base_ = [{osp.join(ROOT, 'configs/demo/an.py')!r}]
            train_dataloader = dict(
                batch_size=16,
                dataset=dict(dataset=dict(num_samples=64)))
            val_dataloader = dict(
                batch_size=16,
                dataset=dict(dataset=dict(num_samples=64)))
            test_dataloader = dict(
                batch_size=16, dataset=dict(num_samples=32))
            model = dict(head=dict({head}))
            train_cfg = dict(max_epochs={max_epochs})
            default_hooks = dict(logger=dict(interval=1))
            work_dir = {str(tmp_path / 'work')!r}
            """))
        return str(path)

    return make


@pytest.fixture
def torch_home(tmp_path, monkeypatch):
    """torch.hub's folder in a temporary ``TORCH_HOME``: a checkpoint put
    at ``hub_cache_file(url)`` is what a download of ``url`` would leave,
    so URLs load without the network."""
    import torch
    home = tmp_path / 'torch_home'
    monkeypatch.setenv('TORCH_HOME', str(home))
    monkeypatch.setattr(torch.hub, '_hub_dir', None)
    assert torch.hub.get_dir() == str(home / 'hub')
    return home


#: A pipeline that loads and packs 8x8 images, for the dataset tests.
IMAGE_PIPELINE = [
    dict(type='LoadImageFromFile'),
    dict(type='Resize', scale=8),
    dict(type='PackInputs')
]


def build_image_dataset(cfg):
    """Build a dataset config with :data:`IMAGE_PIPELINE` in MMPretrain's
    default scope, as a Runner does, and check it is of the config's type.
    Returns the config (with the pipeline) and the dataset."""
    from mmengine.registry import DefaultScope

    from mmlml.registry import DATASETS
    cfg = dict(cfg, pipeline=IMAGE_PIPELINE)
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        dataset = DATASETS.build(cfg)
    assert type(dataset).__name__ == cfg['type']
    sample = dataset[0]
    assert tuple(sample['inputs'].shape) == (3, 8, 8)
    return cfg, dataset


def cpu_optim_wrapper(cfg):
    """The config's optimizer wrapper, with MMEngine's ``AmpOptimWrapper``
    (which refuses to be built without CUDA) replaced by ``OptimWrapper``,
    as the README tells CPU users to do
    (``--cfg-options optim_wrapper.type=OptimWrapper``)."""
    cfg = cfg.copy()
    if cfg.get('type') == 'AmpOptimWrapper':
        cfg.type = 'OptimWrapper'
    return cfg


def case(kind, make, error, match, value=None):
    """One case of a refused kind of input (the bad-input tests): an id
    ``kind`` or ``kind[value]`` for a kind with several values, and
    ``make(tmp_path)`` that raises ``error`` with a message that matches
    ``match``."""
    case_id = kind if value is None else f'{kind}[{value}]'
    return pytest.param(make, error, match, id=case_id)


#: A two-epoch training run of the demo config without validation or
#: testing (64 images, 4 iterations an epoch), a checkpoint every epoch.
TINY_TRAIN = """
_base_ = [{an!r}]
train_dataloader = dict(
    batch_size=16,
    dataset=dict(dataset=dict(num_samples=64,
                              pipeline=[dict(type='PackInputs')])))
val_dataloader = None
val_cfg = None
val_evaluator = None
test_dataloader = None
test_cfg = None
test_evaluator = None
train_cfg = dict(max_epochs=2, val_interval=100)
default_hooks = dict(
    logger=dict(interval=10),
    checkpoint=dict(interval=1, max_keep_ckpts=-1, save_best=None))
"""

#: The LL-Cp method on :data:`TINY_TRAIN`: a loss that reads a label store
#: and the hook that keeps it (saved in every checkpoint as
#: ``label_store``).
LL_CP = """
_base_ = ['tiny.py']
model = dict(head=dict(type='PartialLabelLinearClsHead',
                       loss=dict(_delete_=True, type='LargeLoss',
                                 mode='permanent', delta_rel=0.01)))
custom_hooks = [dict(type='LargeLossCorrectionHook')]
"""


def write_config(directory, name, text):
    """Write the dedented ``text`` to ``directory/name``; its path."""
    path = directory / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def write_tiny_train(directory):
    """Write :data:`TINY_TRAIN` to ``directory/tiny.py``; its path."""
    return write_config(
        directory, 'tiny.py',
        TINY_TRAIN.format(an=osp.join(ROOT, 'configs', 'demo', 'an.py')))


@pytest.fixture
def tiny_train(tmp_path):
    """A folder holding ``tiny.py`` (:data:`TINY_TRAIN`) for configs that
    derive from it, and ``tools/train.py`` as a module: what a test that
    starts (or refuses to start) a short run through the tool needs."""
    write_tiny_train(tmp_path)
    return types.SimpleNamespace(directory=tmp_path, tool=load_train_tool())


@pytest.fixture(scope='session')
def trained(tmp_path_factory):
    """One tiny LL-Cp training run of 2 epochs through ``tools/train.py``
    (:data:`LL_CP`), made once per test session (per worker under
    pytest-xdist) and shared by the tests that resume or read its
    checkpoints. Its folder also holds ``tiny.py`` and ``ll_cp.py``;
    tests that write configs there use names of their own."""
    directory = tmp_path_factory.mktemp('trained_ll_cp')
    write_tiny_train(directory)
    config = write_config(directory, 'll_cp.py', LL_CP)
    tool = load_train_tool()
    runner = tool.main([config, '--work-dir', str(directory / 'll_cp')])
    checkpoint = str(directory / 'll_cp' / 'epoch_2.pth')
    assert osp.isfile(checkpoint)
    return types.SimpleNamespace(
        directory=directory, tool=tool, runner=runner, checkpoint=checkpoint)


def train_tiny(tiny_train, loss, hook):
    """Train :data:`TINY_TRAIN` (the ``tiny_train`` fixture's) through
    ``tools/train.py`` with the partial-label head's ``loss`` and the custom
    hook ``hook`` (config dicts); the Runner."""
    name = hook['type']
    config = write_config(
        tiny_train.directory, f'{name}.py', f"""
        _base_ = ['tiny.py']
        model = dict(head=dict(type='PartialLabelLinearClsHead',
                               loss=dict(_delete_=True, **{loss!r})))
        custom_hooks = [{hook!r}]
        """)
    return tiny_train.tool.main(
        [config, '--work-dir',
         str(tiny_train.directory / name)])
