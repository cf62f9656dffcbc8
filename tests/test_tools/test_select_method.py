"""tools/select_method.py: the method presets applied to a user's config,
the refusals, and a tiny selection end to end."""
import importlib.util
import os.path as osp
import textwrap

import pytest
from mmengine.config import Config

from mmlml.benchmark.method_selection import (MethodError, apply_preset,
                                              method_configs)
from mmlml.benchmark.settings import setting_options

ROOT = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))


def load_tool():
    spec = importlib.util.spec_from_file_location(
        'mmlml_select_method_tool', osp.join(ROOT, 'tools',
                                             'select_method.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def user_config(tmp_path):
    """A config on another base (the demo recipe, changed): its own data
    size, learning rate and a hook of its own."""
    path = tmp_path / 'my_config.py'
    path.write_text(
        textwrap.dedent(f"""
        _base_ = [{osp.join(ROOT, 'configs/demo/an.py')!r}]
        train_dataloader = dict(
            batch_size=8, dataset=dict(dataset=dict(num_samples=96)))
        optim_wrapper = dict(optimizer=dict(lr=0.05))
        custom_hooks = [dict(type='EMAHook', momentum=0.001)]
        """))
    return str(path)


def test_presets_carry_the_method_only(user_config):
    hill = apply_preset(user_config, 'hill')
    assert hill.model.head.loss.to_dict() == dict(
        type='HillLoss', lamb=1.5, margin=1.0, gamma=2.0)
    assert hill.model.head.type == 'MultiLabelLinearClsHead'
    assert [h['type'] for h in hill.custom_hooks] == ['EMAHook']
    assert 'tuning' not in hill

    em_apl = apply_preset(user_config, 'em_apl')
    assert em_apl.model.head.type == 'PartialLabelLinearClsHead'
    assert em_apl.model.head.loss.type == 'EMAPLLoss'
    assert [h['type'] for h in em_apl.custom_hooks] == ['EMAHook', 'APLHook']
    assert em_apl.tuning == {'model.head.loss.alpha': [0.2, 0.1]}
    for cfg in (hill, em_apl):  # the user's data and schedule stay
        assert cfg.train_dataloader.batch_size == 8
        assert cfg.train_dataloader.dataset.dataset.num_samples == 96
        assert cfg.optim_wrapper.optimizer.lr == 0.05
        assert cfg.model.head.num_classes == 20


def test_an_replaces_the_users_loss():
    # The GR config's loss is not the assume-negative baseline's.
    an = apply_preset(
        osp.join(ROOT, 'configs/custom/partial_label_custom_dataset.py'), 'an')
    assert an.model.head.loss.type == 'CrossEntropyLoss'
    assert an.model.head.loss.use_sigmoid


def test_preset_reads_the_users_variables(tmp_path, user_config):
    # EPR's expected number of positives is the user's, not the demo's.
    with open(user_config, 'a') as f:
        f.write('expected_positives = 2.5\n')
    epr = apply_preset(user_config, 'epr')
    assert epr.model.head.loss.expected_positives == 2.5


def test_refusals(tmp_path, user_config):
    with pytest.raises(MethodError) as error:
        method_configs(user_config, ['an', 'vlpl', 'boostlu_an'],
                       str(tmp_path / 'work'))
    message = str(error.value)
    assert 'vlpl needs a first stage' in message
    assert 'boostlu_an changes model.head.alpha' in message
    assert 'Supported methods: an ' in message and 'hill' in message
    assert '\n' not in message
    assert not osp.exists(tmp_path / 'work')  # nothing written
    with pytest.raises(MethodError, match='MultiView'):
        apply_preset(user_config, 'lasd_cr')


def test_written_configs_are_kept_without_force(tmp_path, user_config):
    work = str(tmp_path / 'work')
    paths = method_configs(user_config, ['hill'], work)
    assert Config.fromfile(paths['hill']).model.head.loss.type == 'HillLoss'
    method_configs(user_config, ['hill'], work)  # the same file: fine
    with open(paths['hill'], 'a') as f:
        f.write('# edited\n')
    with pytest.raises(FileExistsError, match='--force'):
        method_configs(user_config, ['hill'], work)
    method_configs(user_config, ['hill'], work, force=True)


def test_own_setting_imposes_nothing():
    assert setting_options('own', 'single_positive') == {}
    benchmark = load_benchmark_tool()
    with pytest.raises(SystemExit):
        benchmark.parse_args(['--settings', 'own'])


def load_benchmark_tool():
    spec = importlib.util.spec_from_file_location(
        'mmlml_benchmark_tool_for_select',
        osp.join(ROOT, 'tools', 'benchmark.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_select_method_end_to_end(tmp_path, capsys):
    """Two methods, one seed, one learning rate, 2 epochs on 80 images
    (about a minute on a CPU)."""
    tool = load_tool()
    work = str(tmp_path / 'select')
    result = tool.main([
        osp.join(ROOT, 'configs/demo/an.py'), '--methods', 'an', 'hill',
        '--seeds', '0', '--lrs', '0.1', '--lr-bounds', '0.1', '0.1',
        '--max-doublings', '0', '--workers', '1', '--work-dir', work,
        '--cfg-options', 'train_cfg.max_epochs=2',
        'train_dataloader.dataset.dataset.num_samples=80',
        'val_dataloader.dataset.dataset.num_samples=80',
        'test_dataloader.dataset.num_samples=40',
        'train_dataloader.batch_size=16'
    ])
    out = capsys.readouterr().out
    assert '| rank | method | val mAP | vs an | test mAP |' in out
    assert sorted(name for name, _ in result['ranking']) == ['an', 'hill']
    assert result['out'] == osp.join(work, f'best_{result["best"]}.py')
    assert f'tools/train.py {result["out"]}' in out
    best = Config.fromfile(result['out'])
    assert best.optim_wrapper.optimizer.lr == 0.1
    assert best.train_cfg.max_epochs == 2
    assert best.train_dataloader.dataset.dataset.num_samples == 80


def test_no_output_over_an_input(tmp_path, user_config):
    """Even with --force: --out naming the user's config (or the storage),
    and a work dir whose method config would be the user's config, are
    refused before anything is written; the config is left as it was."""
    tool = load_tool()
    before = open(user_config).read()
    with pytest.raises(SystemExit, match='also an input'):
        tool.main([
            user_config, '--methods', 'an', '--out', user_config, '--force',
            '--work-dir',
            str(tmp_path / 'wd'), '--workers', '0'
        ])
    # The config lives where the method config `an` would be written.
    work_dir = tmp_path / 'wd2'
    (work_dir / 'configs').mkdir(parents=True)
    inside = work_dir / 'configs' / 'an.py'
    inside.write_text(before)
    with pytest.raises(SystemExit, match='also an input'):
        tool.main([
            str(inside), '--methods', 'an', '--force', '--work-dir',
            str(work_dir), '--workers', '0'
        ])
    assert inside.read_text() == before
    assert open(user_config).read() == before


def _ranked(tool, values):
    return tool.ranking({
        name: dict(runs=[{
            'val mAP': v
        } for v in runs])
        for name, runs in values.items()
    })


def test_no_ranking_without_a_known_validation_positive():
    """Every validation label unknown: every method scores 0.00, and the
    first would be written as the best; refused with a line that says
    why."""
    tool = load_tool()
    assert 'no known positive' in tool.ranking_problem(
        _ranked(tool, dict(an=[0.0, 0.0], hill=[0.0, 0.0])))
    assert tool.ranking_problem(_ranked(tool, dict(an=[50.], hill=[0.]))) \
        is None


def test_a_ranking_within_the_seed_spread_is_flagged():
    tool = load_tool()
    close = _ranked(tool, dict(an=[60., 64.], hill=[61., 62.]))
    assert 'less than their seed spread' in tool.spread_warning(close)
    apart = _ranked(tool, dict(an=[60., 61.], hill=[70., 71.]))
    assert tool.spread_warning(apart) is None


@pytest.mark.parametrize('case', ['no-validation', 'work-dir', 'path'])
def test_select_method_mistakes_are_one_line(tmp_path, user_config, case):
    """A config without a validation split, a work dir that cannot be
    made, a method name that is a path (never read as a preset): one
    line each, nothing trained."""
    tool = load_tool()
    config, methods = user_config, ['an']
    work_dir = str(tmp_path / 'wd')
    if case == 'no-validation':
        config = str(tmp_path / 'no_val.py')
        with open(config, 'w') as f:
            f.write(f'_base_ = [{user_config!r}]\n'
                    'val_dataloader = None\nval_evaluator = None\n'
                    'val_cfg = None\n')
        match = 'has no validation split'
    elif case == 'work-dir':
        (tmp_path / 'file').write_text('a file')
        work_dir = str(tmp_path / 'file' / 'wd')
        match = 'Not a directory'
    else:
        marker = tmp_path / 'ran'
        (tmp_path /
         'evil.py').write_text(f'open({str(marker)!r}, "w").write("x")\n')
        methods = [
            osp.relpath(
                str(tmp_path / 'evil'), osp.join(ROOT, 'configs', 'demo'))
        ]
        match = 'is not a method name'
    with pytest.raises(SystemExit, match=match) as info:
        tool.main([
            config, '--methods', *methods, '--work-dir', work_dir, '--workers',
            '0'
        ])
    assert '\n' not in str(info.value)
    if case == 'path':
        assert not marker.exists()
