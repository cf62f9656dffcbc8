"""The repairs of mmlml.compat, each against the failure it repairs and
with a check that upstream still needs it; importing mmlml leaves every
other MMPretrain / MMEngine object as it was; the checks of stock losses fed
mmlml's training targets. The crafted-file and real-training checks of
checkpoint loading are in test_checkpoint_policy.py."""
import importlib.util
import os
import os.path as osp
import subprocess
import sys
import textwrap
import types

import numpy as np
import pytest
import torch
from conftest import ROOT, free_port  # noqa: E402
from mmengine.config import Config
from mmengine.logging.history_buffer import HistoryBuffer
from mmengine.runner import Runner
from mmengine.runner.checkpoint import CheckpointLoader

import mmlml  # noqa: F401
from mmlml import compat
from mmlml.compat import stack_repairs
from mmlml.models.losses import check_stock_loss_target, stock_loss_name
from mmlml.registry import MODELS


def test_checkpoint_with_mmengine_objects_loads(tmp_path):
    path = tmp_path / 'ckpt.pth'
    torch.save(
        {
            'buffer': HistoryBuffer([1.0, 2.0], [1, 1]),
            'array': np.ones(3),
            'arrays': [np.arange(2, dtype=t) for t in ('f4', 'i8', 'u1', '?')],
            'scalar': np.float64(0.5),
            'state_dict': {
                'w': torch.ones(2)
            }
        }, path)
    # Plain torch.load (weights_only=True by default) is what fails.
    with pytest.raises(Exception, match='[Ww]eights only load failed'):
        torch.load(path)
    ckpt = CheckpointLoader.load_checkpoint(str(path), map_location='cpu')
    assert isinstance(ckpt['buffer'], HistoryBuffer)
    assert ckpt['buffer'].mean() == 1.5
    assert [a.dtype.name
            for a in ckpt['arrays']] == ['float32', 'int64', 'uint8', 'bool']
    assert ckpt['scalar'] == 0.5 and isinstance(ckpt['scalar'], np.float64)
    assert torch.equal(ckpt['state_dict']['w'], torch.ones(2))
    with pytest.raises(FileNotFoundError):
        CheckpointLoader.load_checkpoint(str(tmp_path / 'missing.pth'))


def test_package_lookup_without_pkg_resources(tmp_path):
    """`mmpretrain::` base configs parse with pkg_resources unimportable."""
    cfg = tmp_path / 'cfg.py'
    cfg.write_text("_base_ = ['mmpretrain::_base_/default_runtime.py']\n")
    script = textwrap.dedent(f"""
        import sys
        sys.modules['pkg_resources'] = None  # as with setuptools >= 82
        from mmengine.config import Config
        try:
            Config.fromfile({str(cfg)!r})
        except (ImportError, ModuleNotFoundError):
            print('stock: fails')
        import mmlml
        cfg = Config.fromfile({str(cfg)!r})
        print('patched:', cfg.default_scope)
        print('fixes:', mmlml.compat.applied_fixes())
        mmlml.compat.apply_all()  # idempotent
        print(mmlml.compat.applied_fixes_message())
        """)
    out = subprocess.run([sys.executable, '-c', script],
                         capture_output=True,
                         text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert 'stock: fails' in out.stdout
    assert 'patched: mmpretrain' in out.stdout
    assert "fixes: ('checkpoint_loading', 'package_lookup'," in out.stdout
    assert 'fixes applied: safe checkpoint loading' in out.stdout
    assert 'importlib package lookup' in out.stdout


def test_importlib_package_lookup():
    assert compat.is_installed('mmpretrain')
    assert compat.is_installed('mmcv-lite') or compat.is_installed('mmcv')
    assert not compat.is_installed('surely-not-a-package-xyz')
    path = compat.get_installed_path('mmpretrain')
    assert path.endswith('mmpretrain')
    with pytest.raises(ModuleNotFoundError):
        compat.get_installed_path('surely-not-a-package-xyz')


def test_cpu_ddp_wrapper_drops_device_ids():
    """DDP of a CPU module with device_ids=[0] (what the Runner passes)."""
    if torch.cuda.is_available():
        pytest.skip('only meaningful without CUDA')
    script = textwrap.dedent(f"""
        import os
        os.environ.update(MASTER_ADDR='127.0.0.1', MASTER_PORT='{free_port()}',
                          RANK='0', WORLD_SIZE='1', LOCAL_RANK='0')
        import torch
        import mmlml
        from mmengine.dist import init_dist
        from mmengine.model import MMDistributedDataParallel
        init_dist('pytorch', backend='nccl')  # gloo without CUDA
        model = MMDistributedDataParallel(
            module=torch.nn.Linear(2, 2), device_ids=[0])
        print('backend', torch.distributed.get_backend(), model.device_ids)
        """)
    out = subprocess.run([sys.executable, '-c', script],
                         capture_output=True,
                         text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert 'backend gloo None' in out.stdout


def test_compiled_step_keeps_one_graph_as_the_learning_rate_changes():
    """A compiled step that calls ``OptimWrapper.update_params`` is not
    compiled again when the learning rate changes (each value was a new
    graph of the optimizer step), and still trains."""
    from mmengine.optim import OptimWrapper
    model = torch.nn.Linear(3, 1)
    wrapper = OptimWrapper(torch.optim.SGD(model.parameters(), lr=0.1))

    def train_step(inputs):
        loss = model(inputs).square().mean()
        wrapper.update_params(loss)
        return loss.detach()

    torch._dynamo.reset()
    step = torch.compile(train_step, backend='aot_eager')
    inputs = torch.ones(4, 3)
    with torch._dynamo.config.patch(
            recompile_limit=1, fail_on_recompile_limit_hit=True):
        losses = []
        for lr in (0.1, 0.05, 0.02):
            wrapper.optimizer.param_groups[0]['lr'] = lr
            losses.append(float(step(inputs)))
    assert losses[2] < losses[1] < losses[0]


def test_cpu_environment_banner(monkeypatch):
    """Without CUDA the Runner's banner names the backend the process group
    uses and no GPU: a 2-process gloo run logged ``backend: nccl`` (the
    config's) and ``GPU number: 2`` (MMEngine writes the world size
    there)."""
    monkeypatch.setattr(torch.cuda, 'is_available', lambda: False)
    lines = []
    runner = types.SimpleNamespace(
        _randomness_cfg={},
        _seed=0,
        _launcher='pytorch',
        _distributed=True,
        _world_size=2,
        cfg=Config(dict()),
        logger=types.SimpleNamespace(info=lines.append))
    Runner._log_env(runner, dict(dist_cfg=dict(backend='nccl')))
    banner = '\n'.join(lines)
    assert "dist_cfg: {'backend': 'gloo'}" in banner
    assert 'GPU number: 0' in banner and 'world size: 2' in banner
    assert 'nccl' not in banner
    assert runner._world_size == 2  # restored
    assert compat.cpu_runtime_env(
        dict(dist_cfg=dict(backend='gloo', timeout=60)), 3) == dict(
            dist_cfg=dict(backend='gloo', timeout=60), **{'world size': 3})


# ------------------------------------------------------ the applied fixes


def test_applied_fixes_record():
    names = compat.applied_fixes()
    # The package lookup is replaced only where pkg_resources is missing.
    missing = importlib.util.find_spec('pkg_resources') is None
    lookup = ('package_lookup', ) if missing else ()
    assert names == ('checkpoint_loading', *lookup, 'cpu_distributed',
                     'compiled_optimizer_step', 'config_text_formatting',
                     'atomic_checkpoints', 'build_messages')
    message = compat.applied_fixes_message()
    count = len(compat.checkpoint_safe_globals())
    assert message.startswith(
        'mmlml compatibility fixes applied: safe checkpoint loading '
        f'({count} globals allow-listed), ')
    assert message.endswith('CPU torchrun, eager optimizer step in compile, '
                            'config text formatted once, checkpoints written '
                            'atomically, registry errors name the closest '
                            'names')
    compat.apply_all()  # idempotent
    assert compat.applied_fixes() == names


def test_config_text_is_formatted_once_with_the_same_result(monkeypatch):
    """MMEngine formats the config text at every log, dump and checkpoint
    save; each distinct text is formatted once, with yapf's own result."""
    import mmengine.config.config as config_module
    from mmengine.config import Config
    from yapf.yapflib.yapf_api import FormatCode
    cfg = Config(dict(model=dict(type='M', layers=[1, 2, 3]), seed=7))
    monkeypatch.setattr(config_module, 'FormatCode', FormatCode)
    stock = cfg.pretty_text
    calls = []

    def counting(*args, **kwargs):
        calls.append(1)
        return FormatCode(*args, **kwargs)

    # The repair again, around a counting formatter (a fresh cache).
    monkeypatch.setattr(config_module, 'FormatCode', counting)
    monkeypatch.delitem(stack_repairs._APPLIED, 'config_text_formatting')
    compat.patch_config_text_formatting()
    monkeypatch.delenv('MMLML_CONFIG_TEXT', raising=False)
    assert [cfg.pretty_text for _ in range(5)] == [stock] * 5
    assert len(calls) == 1
    cfg.seed = 8  # another text: formatted again
    formatted = cfg.pretty_text
    assert 'seed = 8' in formatted and len(calls) == 2
    # Unformatted: MMEngine's text before yapf, the same config.
    monkeypatch.setenv('MMLML_CONFIG_TEXT', 'unformatted')
    text = cfg.pretty_text
    assert len(calls) == 2 and text != formatted
    assert Config.fromstring(text, '.py').to_dict() == cfg.to_dict()
    # A file a person reads is formatted all the same.
    assert compat.readable_text(cfg) == formatted
    assert cfg.pretty_text == text  # and only that file


#: What ``import mmlml`` must leave as upstream made it: (module, attribute
#: path). The repairs change only the loaders and launchers they name.
UNTOUCHED = [
    ('mmpretrain.evaluation.metrics.multi_label', '_average_precision'),
    ('mmpretrain.evaluation', 'AveragePrecision.calculate'),
    ('mmpretrain.evaluation', 'AveragePrecision.compute_metrics'),
    ('mmpretrain.evaluation', 'MultiLabelMetric.calculate'),
    ('mmpretrain.models.losses', 'CrossEntropyLoss.forward'),
    ('mmpretrain.models.losses', 'FocalLoss.forward'),
    ('mmpretrain.models.losses', 'AsymmetricLoss.forward'),
    ('mmpretrain.models.losses', 'LabelSmoothLoss.forward'),
    ('mmpretrain.models.heads', 'MultiLabelLinearClsHead.loss'),
    ('mmengine.runner', 'Runner.scale_lr'),
    ('mmengine.runner', 'Runner.build_logger'),
    ('mmengine.runner', 'Runner.train'),
    ('mmengine.runner', 'Runner.build_param_scheduler'),
    ('mmengine.optim.scheduler', 'OneCycleLR.__init__'),
    ('torch', 'load'),
]

#: What the repairs replace (a test below checks upstream still needs it).
REPAIRED = [
    ('mmengine.dist.utils', '_init_dist_pytorch'),
    ('mmengine.model', 'MMDistributedDataParallel.__init__'),
    ('mmengine.runner', 'CheckpointLoader.load_checkpoint'),
    ('mmengine.optim', 'OptimWrapper.update_params'),
    ('mmengine.runner', 'Runner._log_env'),
    ('mmengine.runner.checkpoint', 'save_checkpoint'),
    ('mmengine.runner.runner', 'save_checkpoint'),
    ('mmengine.runner', 'save_checkpoint'),
    # Not repairs: only the message of a failed build changes.
    ('mmengine.registry', 'Registry.build'),
    # Not a repair: a Runner that uses an mmlml component gets mmlml's
    # check of its settings (nothing changes for any other Runner).
    ('mmengine.runner', 'Runner.register_hooks'),
]


@pytest.fixture(scope='module')
def fresh_import(tmp_path_factory):
    """What one fresh interpreter prints: first the upstream facts that
    each repair answers, without mmlml imported
    (:func:`test_upstream_still_needs_the_repairs`), then which upstream
    objects ``import mmlml`` changes
    (:func:`test_import_leaves_upstream_objects_alone`). One interpreter
    for both: a start costs seconds."""
    checkpoint = tmp_path_factory.mktemp('fresh_import') / 'ckpt.pth'
    torch.save({'buffer': HistoryBuffer([1.0], [1])}, checkpoint)
    script = textwrap.dedent(f"""
        import inspect, sys
        import torch
        import torch.hub
        # checkpoint_loading: torch's default refuses MMEngine's objects ...
        try:
            torch.load({str(checkpoint)!r})
            print('torch.load: loads')
        except Exception:
            print('torch.load: refuses')
        # ... and torch.hub's URL loader (MMEngine's for URLs) unpickles
        # whatever a downloaded file holds.
        import mmengine.runner.checkpoint as ckpt
        source = inspect.getsource(ckpt.load_from_http)
        print('hub loader:', 'load_url' in source and
              'weights_only' not in source)
        # package_lookup: MMEngine looks packages up with pkg_resources.
        import mmengine.utils.package_utils as pu
        print('pkg_resources:', 'pkg_resources' in inspect.getsource(
            pu.is_installed))
        # cpu_distributed: the launcher sets a CUDA device unconditionally.
        import mmengine.dist.utils as du
        print('set_device:', 'torch.cuda.set_device' in inspect.getsource(
            du._init_dist_pytorch))
        print('slurm set_device:', 'torch.cuda.set_device' in
              inspect.getsource(du._init_dist_slurm))
        # compiled_optimizer_step: a compiled optimizer step is compiled
        # again for every learning rate.
        from torch._dynamo.utils import counters
        param = torch.nn.Parameter(torch.ones(2))
        param.grad = torch.ones(2)
        sgd = torch.optim.SGD([param], lr=0.1)
        step = torch.compile(sgd.step, backend='aot_eager')
        for lr in (0.1, 0.2, 0.3):
            sgd.param_groups[0]['lr'] = lr
            step()
        print('lr graphs:', counters['stats']['unique_graphs'])
        # ... and the Runner's banner logs the world size as GPUs.
        from mmengine.runner import Runner
        print('gpu number:', "['GPU number'] = self._world_size" in
              inspect.getsource(Runner._log_env))
        # atomic_checkpoints: a checkpoint is written straight to its name.
        print('direct save:', 'file_backend.put(f.getvalue(), filename)' in
              inspect.getsource(ckpt.save_checkpoint))
        # build_messages: an unknown type names no registered name.
        from mmengine.registry import build_from_cfg
        print('bare build errors:', 'close' not in inspect.getsource(
            build_from_cfg))
        """) + textwrap.dedent(f"""
        import functools, importlib
        import torch

        def get(module, path):
            obj = importlib.import_module(module)
            for name in path.split('.'):
                obj = getattr(obj, name)
            return obj

        before = {{(m, p): get(m, p) for m, p in {UNTOUCHED + REPAIRED!r}}}
        import mmlml  # noqa
        changed = sorted(p for (m, p), obj in before.items()
                         if get(m, p) is not obj)
        print('changed', changed)

        from mmpretrain.models import build_loss
        bce = build_loss(dict(type='CrossEntropyLoss', use_sigmoid=True))
        x = torch.zeros(1, 2)
        print('stock bce on -1:', float(bce(x, torch.tensor([[1., -1.]]))))
        from mmpretrain.evaluation import AveragePrecision
        try:
            AveragePrecision.calculate(torch.rand(2, 2),
                                       torch.tensor([[1, -1], [0, -1]]))
        except IndexError:
            print('stock AP raises IndexError')
        """)
    out = subprocess.run([sys.executable, '-c', script],
                         capture_output=True,
                         text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def test_upstream_still_needs_the_repairs(fresh_import):
    """Each repair is still needed by the installed upstream code, checked
    without mmlml imported: when one of these fails, upstream has fixed it
    and the repair can go."""
    assert 'torch.load: refuses' in fresh_import
    assert 'hub loader: True' in fresh_import
    assert 'pkg_resources: True' in fresh_import
    assert 'slurm set_device: True' in fresh_import
    assert 'set_device: True' in fresh_import
    assert 'lr graphs: 3' in fresh_import
    assert 'gpu number: True' in fresh_import
    assert 'direct save: True' in fresh_import
    assert 'bare build errors: True' in fresh_import


def test_import_leaves_upstream_objects_alone(fresh_import):
    """In a fresh interpreter: the objects of :data:`UNTOUCHED` are the same
    before and after ``import mmlml``, and only those of :data:`REPAIRED`
    change; the stock metric and losses keep their upstream behaviour."""
    repaired = sorted(path for _, path in REPAIRED)
    assert f'changed {repaired}' in fresh_import
    assert 'stock bce on -1: 0.69' in fresh_import  # upstream value
    assert 'stock AP raises IndexError' in fresh_import


# ------------------------------------- stock losses fed mmlml's -1 targets

STOCK_LOSSES = [
    (dict(type='CrossEntropyLoss', use_sigmoid=True), 'ANLoss'),
    (dict(type='CrossEntropyLoss', use_soft=True), 'ANLoss'),
    (dict(type='FocalLoss'), 'PartialFocalLoss'),
    (dict(type='AsymmetricLoss'), 'PartialAsymmetricLoss'),
    (dict(type='AsymmetricLoss', use_sigmoid=False), 'PartialAsymmetricLoss'),
]

OBSERVED = torch.tensor([[1, 0, -1, 0, 0], [0, 1, 0, 0, -1], [-1, -1, 1, 0, 0],
                         [0, 0, 0, 1, 0]]).float()


@pytest.mark.parametrize('cfg, replacement', STOCK_LOSSES)
def test_stock_loss_target_check(cfg, replacement):
    loss = MODELS.build(cfg)
    with pytest.raises(ValueError) as info:
        check_stock_loss_target(loss, OBSERVED)
    message = str(info.value)
    assert "mmlml's observed negatives (-1)" in message
    assert f"type='{replacement}')" in message
    assert MODELS.get(replacement) is not None  # a registered mmlml loss
    # The dataset's int8 label matrix is checked the same way.
    with pytest.raises(ValueError, match='observed negatives'):
        check_stock_loss_target(loss, OBSERVED.numpy().astype(np.int8))
    # Valid targets pass: 0/1 labels, soft scores, class indices.
    soft = 0.3 * (OBSERVED == 1).float() + 0.7 * (OBSERVED.flip(0) == 1)
    for target in ((OBSERVED == 1).float(), soft, torch.tensor([0, 3, 1])):
        check_stock_loss_target(loss, target)


def test_a_stock_loss_in_a_loss_sum_is_checked():
    """A stock loss added to a regulariser (``LossSum``, as the demo's
    high_rank.py does) gets the same targets and is refused the same way;
    the error says to replace that member, not the whole sum."""
    from mmlml.models.losses.stock_losses import stock_loss_in_config
    cfg = dict(
        type='LossSum',
        losses=[
            dict(type='HighRankRegularizer', loss_weight=1e-3),
            dict(type='CrossEntropyLoss', use_sigmoid=True)
        ])
    assert stock_loss_in_config(cfg) == 'CrossEntropyLoss'
    loss = MODELS.build(cfg)
    assert stock_loss_name(loss) == 'CrossEntropyLoss'
    with pytest.raises(ValueError) as info:
        check_stock_loss_target(loss, OBSERVED)
    assert ("the LossSum member dict(type='CrossEntropyLoss', ...) replaced "
            "by dict(type='ANLoss')") in str(info.value)
    check_stock_loss_target(loss, (OBSERVED == 1).float())
    cfg['losses'][1] = dict(type='ANLoss')
    assert stock_loss_in_config(cfg) is None
    assert stock_loss_name(MODELS.build(cfg)) is None


def test_mmlml_and_other_losses_are_not_checked():
    """mmlml's losses read -1; LabelSmoothLoss (multi_label) smooths every
    non-positive target, -1 included, to eps: neither is refused."""
    for cfg in (dict(type='ANLoss'),
                dict(
                    type='LabelSmoothLoss',
                    label_smooth_val=0.1,
                    mode='multi_label',
                    use_sigmoid=True)):
        assert stock_loss_name(MODELS.build(cfg)) is None
        check_stock_loss_target(MODELS.build(cfg), OBSERVED)


@pytest.mark.parametrize('cfg, replacement', STOCK_LOSSES[:1])
def test_partial_label_head_checks_its_first_target(cfg, replacement):
    """A PartialLabel*Head with a stock loss checks the target of its first
    training loss only; with an mmlml loss it checks nothing."""
    from mmpretrain.structures import DataSample
    head = MODELS.build(
        dict(
            type='PartialLabelLinearClsHead',
            num_classes=5,
            in_channels=3,
            loss=cfg))
    head.train()
    feats = (torch.randn(4, 3), )
    samples = [DataSample().set_gt_score(row) for row in OBSERVED]
    with pytest.raises(ValueError, match=f"type='{replacement}'"):
        head.loss(feats, samples)
    head.loss(feats, samples)  # checked once: the stock loss computes
    mmlml_head = MODELS.build(
        dict(
            type='PartialLabelLinearClsHead',
            num_classes=5,
            in_channels=3,
            loss=dict(type='ANLoss')))
    assert not mmlml_head._check_first_target
    mmlml_head.loss(feats, samples)


def tiny_config(tmp_path, mode, loss, max_epochs=2):
    """The demo config on 32 images (25 training, 2 iterations per
    epoch), without validation, with ``mode`` labels and ``loss``."""
    path = tmp_path / f'tiny_{mode}.py'
    path.write_text(
        textwrap.dedent(f"""
        _base_ = [{osp.join(ROOT, 'configs/demo/an.py')!r}]
        train_dataloader = dict(
            batch_size=16,
            dataset=dict(mode={mode!r}, dataset=dict(num_samples=32)))
        val_dataloader = None
        val_evaluator = None
        val_cfg = None
        model = dict(head=dict(loss=dict(_delete_=True, **{loss!r})))
        train_cfg = dict(max_epochs={max_epochs})
        default_hooks = dict(
            logger=dict(interval=1),
            checkpoint=dict(interval=100, save_best=None))
        work_dir = {str(tmp_path / mode)!r}
        """))
    return Runner.from_cfg(Config.fromfile(str(path)))


STOCK_BCE = dict(type='CrossEntropyLoss', use_sigmoid=True, loss_weight=1.0)


def test_training_stock_loss_on_full_labels_fails_at_first_iteration(tmp_path):
    runner = tiny_config(tmp_path, 'full', STOCK_BCE)
    with pytest.raises(ValueError, match="type='ANLoss'"):
        runner.train()
    assert runner.iter == 0
    assert not runner.optim_wrapper.optimizer.state  # no optimizer step


def test_training_stock_loss_on_single_positive_labels_trains(tmp_path):
    runner = tiny_config(tmp_path, 'single_positive', STOCK_BCE)
    runner.train()
    assert runner.iter == 4
    losses = runner.message_hub.get_scalar('train/loss').data[0]
    assert len(losses) == 4 and np.all(losses > 0)


def test_slurm_launcher_starts_gloo_without_cuda(tmp_path):
    """MMEngine's Slurm launcher on a machine without CUDA (one task, as
    srun starts it): gloo, with the rank and world size of Slurm's
    variables (the two-task run under a real Slurm is a cluster test)."""
    import socket
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        port = sock.getsockname()[1]
    script = textwrap.dedent("""
        import mmlml
        from mmengine.dist import init_dist, get_rank, get_world_size
        from torch import distributed
        init_dist('slurm', backend='nccl')
        print(distributed.get_backend(), get_rank(), get_world_size())
        """)
    env = dict(
        os.environ,
        SLURM_PROCID='0',
        SLURM_NTASKS='1',
        SLURM_LOCALID='0',
        SLURM_NODELIST='localhost',
        MASTER_ADDR='127.0.0.1',
        MASTER_PORT=str(port),
        CUDA_VISIBLE_DEVICES='')
    out = subprocess.run([sys.executable, '-c', script],
                         capture_output=True,
                         text=True,
                         env=env,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split() == ['gloo', '0', '1']
