"""tools/select_method.py: the method presets applied to a user's config,
the refusals, and a tiny selection end to end."""
import copy
import glob
import importlib.util
import json
import os
import os.path as osp
import shutil
import subprocess
import sys
import textwrap

import mmcv
import numpy as np
import pytest
from mmengine.config import Config

from mmlml.benchmark.reports.method_ranking import (rank, ranking_warnings,
                                                    table)
from mmlml.benchmark.sweep.child_config import child_config_text, config_diff
from mmlml.benchmark.sweep.method_presets import (MethodError, SelectionError,
                                                  apply_preset)
from mmlml.benchmark.sweep.method_selection import (check_training, lr_search,
                                                    method_configs,
                                                    prepare_methods,
                                                    search_edges,
                                                    validation_labels)
from mmlml.benchmark.sweep.search import plan
from mmlml.benchmark.sweep.settings import setting_options
from mmlml.benchmark.sweep.sweep import Sweep
from mmlml.benchmark.training.config_keys import EPOCHS_KEY, LR_KEY
from mmlml.cli.smoke_config import check_dataloaders, used_dataloaders

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


def write_data(root, num_train=20, num_test=8, known=0.6, seed=0):
    """A custom dataset (docs/custom_dataset.md's layout) of 4 classes,
    32x32 images with a white band per positive: in train.json each label
    is known (a positive or an observed negative) with probability
    ``known``, the rest unknown; test.json is fully labelled."""
    rng = np.random.RandomState(seed)
    (root / 'images').mkdir(parents=True, exist_ok=True)
    for split, count in (('train', num_train), ('test', num_test)):
        data_list = []
        for i in range(count):
            present = rng.rand(4) < 0.4
            present[i % 4] = True
            img = np.zeros((32, 32, 3), np.uint8)
            for c in np.flatnonzero(present):
                img[8 * c:8 * c + 8, :16] = 255
            name = f'{split}_{i:04d}.png'
            mmcv.imwrite(img, str(root / 'images' / name))
            seen = rng.rand(4) < known if split == 'train' else \
                np.ones(4, bool)
            data_list.append(
                dict(
                    img_path=name,
                    gt_label=np.flatnonzero(present & seen).tolist(),
                    gt_label_negative=np.flatnonzero(~present
                                                     & seen).tolist()))
        (root / f'{split}.json').write_text(
            json.dumps(
                dict(
                    metainfo=dict(classes=['a', 'b', 'c', 'd']),
                    data_list=data_list)))


def write_custom_config(tmp_path, text='', **data):
    """``tmp_path/my_config.py``: the demo recipe (its tiny model, random
    weights) on :func:`write_data`'s dataset in ``tmp_path/data/mine``
    (relative paths: run from ``tmp_path``), trained on its partial labels
    with observed negatives, validated on the observed labels of a fifth of
    the training images; then ``text``."""
    write_data(tmp_path / 'data' / 'mine', **data)
    path = tmp_path / 'my_config.py'
    path.write_text(
        textwrap.dedent(f"""
        _base_ = [{osp.join(ROOT, 'configs/demo/an.py')!r}]
        model = dict(backbone=dict(init_cfg=None), head=dict(num_classes=4))
        data_preprocessor = dict(num_classes=4)
        pipeline = [dict(type='LoadImageFromFile'), dict(type='PackInputs')]
        images = dict(
            type='CustomMultiLabelDataset', data_root='data/mine/',
            ann_file='train.json', data_prefix='images/', unlisted='unknown',
            pipeline=pipeline)
        train_dataloader = dict(batch_size=8, dataset=dict(
            _delete_=True, type='PartialLabelDataset', mode='annotated',
            split='train', dataset=images))
        val_dataloader = dict(batch_size=8, dataset=dict(
            _delete_=True, type='PartialLabelDataset', mode='annotated',
            split='val', val_labels='observed', dataset=images))
        test_dataloader = dict(batch_size=8, dataset=dict(
            _delete_=True, **dict(images, ann_file='test.json',
                                  unlisted='negative', test_mode=True)))
        train_cfg = dict(max_epochs=4)
        """) + textwrap.dedent(text))
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


def test_presets_carry_the_method_never_the_stock_loss(tmp_path, monkeypatch):
    """``an`` is AN that reads observed negatives (mmlml's ANLoss, the
    same loss as the recipe's stock BCE on positives), here over a config
    whose own loss is GR's; inside a sum too."""
    config = osp.join(ROOT, 'configs/custom/partial_label_custom_dataset.py')
    an = apply_preset(config, 'an')
    assert an.model.head.loss.to_dict() == dict(type='ANLoss')
    high_rank = apply_preset(config, 'high_rank')
    assert [loss['type'] for loss in high_rank.model.head.loss.losses
            ] == ['ANLoss', 'HighRankRegularizer']
    # On observed negatives: an trains; the stock loss would not.
    monkeypatch.chdir(tmp_path)
    user = write_custom_config(tmp_path)
    cfgs, dropped = prepare_methods(user, ['an'])
    assert list(cfgs) == ['an'] and dropped == {}
    stock = Config.fromfile(user)  # the demo recipe's stock BCE
    with pytest.raises(MethodError) as error:
        check_training(stock, 'stock')
    assert str(error.value).startswith(
        "stock cannot train: ValueError: MMPretrain's CrossEntropyLoss got "
        'training targets with negative entries')


def test_warmups_scale_to_the_users_epochs(tmp_path, user_config):
    """EM + APL's warm-up of 5 (of the demo's 10 epochs) on a 4-epoch
    recipe is 2; with the demo's epochs it stays 5; on a 1-epoch recipe
    no warm-up fits and the method is left out with the reason."""
    with open(user_config, 'a') as f:
        f.write('train_cfg = dict(max_epochs=4)\n')
    em_apl = apply_preset(user_config, 'em_apl')
    assert em_apl.custom_hooks[-1].to_dict() == dict(
        type='APLHook', warmup_epochs=2, theta=0.9)
    splc = apply_preset(user_config, 'splc')  # the class default is scaled
    assert splc.model.head.loss.change_epoch == 1
    assert apply_preset(user_config, 'em_apl',
                        10).custom_hooks[-1].warmup_epochs == 5
    cfgs, dropped = prepare_methods(
        user_config, ['hill', 'em_apl'], {'train_cfg.max_epochs': 1},
        check=True)
    assert list(cfgs) == ['hill']
    assert dropped['em_apl'].startswith('em_apl cannot train: ')
    assert 'warmup_epochs' in dropped['em_apl']


def test_preset_reads_the_users_variables(tmp_path, user_config):
    # EPR's expected number of positives is the user's, not the demo's.
    with open(user_config, 'a') as f:
        f.write('expected_positives = 2.5\n')
    epr = apply_preset(user_config, 'epr')
    assert epr.model.head.loss.expected_positives == 2.5


def test_methods_that_cannot_run_are_left_out(tmp_path, user_config):
    cfgs, dropped = prepare_methods(
        user_config, ['an', 'vlpl', 'boostlu_an', 'lasd_cr'], check=False)
    assert list(cfgs) == ['an']
    assert dropped['vlpl'].startswith('vlpl needs a first stage')
    assert dropped['boostlu_an'].startswith(
        'boostlu_an changes model.head.alpha')
    assert 'MultiView' in dropped['lasd_cr']
    assert all('\n' not in why for why in dropped.values())


def test_method_configs_are_short_children_of_the_users_config(
        tmp_path, user_config):
    work = str(tmp_path / 'work')
    cfgs, _ = prepare_methods(user_config, ['em_apl'], check=False)
    paths = method_configs(user_config, cfgs, work)
    with open(paths['em_apl']) as f:
        text = f.read()
    assert "_base_ = ['../../my_config.py']" in text
    assert len(text.splitlines()) < 20
    assert 'train_dataloader' not in text  # the user's, through the base
    assert Config.fromfile(paths['em_apl']).to_dict() == \
        cfgs['em_apl'].to_dict()
    method_configs(user_config, cfgs, work)  # the same file: fine
    with open(paths['em_apl'], 'a') as f:
        f.write('# edited\n')
    with pytest.raises(FileExistsError, match='--force'):
        method_configs(user_config, cfgs, work)
    method_configs(user_config, cfgs, work, force=True)


def test_child_config_replaces_what_a_merge_cannot_reach(tmp_path):
    """A dict that loses keys is replaced (``_delete_``), a list is
    written whole, a top-level key that goes is None; the child loads as
    the config it stands for."""
    parent = {
        'model': {
            'head': {
                'loss': {
                    'type': 'A',
                    'x': 1
                },
                'n': 4
            }
        },
        'pipeline': [{
            'type': 'Resize',
            'scale': 448
        }],
        'tuning': {
            'k': [1, 2]
        },
        'lr': 0.1
    }
    child = {
        'model': {
            'head': {
                'loss': {
                    'type': 'B'
                },
                'n': 4
            }
        },
        'pipeline': [{
            'type': 'Resize',
            'scale': 64
        }],
        'lr': 0.1,
        'epochs': 2
    }
    assert config_diff(parent, child) == {
        'model': {
            'head': {
                'loss': {
                    '_delete_': True,
                    'type': 'B'
                }
            }
        },
        'pipeline': [{
            'type': 'Resize',
            'scale': 64
        }],
        'epochs': 2
    }
    base = tmp_path / 'base.py'
    Config(parent).dump(str(base))
    out = str(tmp_path / 'sub' / 'child.py')
    text = child_config_text(str(base), Config(child), out, ['a note'])
    assert text.startswith("# a note\n_base_ = ['../base.py']\n")
    (tmp_path / 'sub' / 'child.py').write_text(text)
    assert Config.fromfile(out).to_dict() == dict(child, tuning=None)


def test_learning_rates_centre_on_the_users_optimizer(tmp_path, user_config,
                                                      capsys):
    assert lr_search(1e-5) == ((1e-5, 3e-6, 3e-5), (1e-6, 1e-4))
    assert lr_search(0.01) == ((0.01, 0.003, 0.03), (0.001, 0.1))
    assert lr_search(0.05) == ((0.05, 0.03, 0.1), (0.005, 0.5))
    tool = load_tool()
    with open(user_config, 'a') as f:
        f.write("optim_wrapper = dict(optimizer=dict(_delete_=True, "
                "type='Adam', lr=1e-05))\n")
    args = tool.parse_args([user_config])
    rules = tool._search(args, Config.fromfile(user_config))
    assert (rules.lrs, rules.lr_bounds) == ((1e-5, 3e-6, 3e-5), (1e-6, 1e-4))
    assert 'learning rates: 1e-05 3e-06 3e-05 first, then on to 1e-06 .. ' \
        '0.0001 (Adam at 1e-05 in ' in capsys.readouterr().err
    args = tool.parse_args([user_config, '--lrs', '0.001'])  # told otherwise
    rules = tool._search(args, Config.fromfile(user_config))
    assert (rules.lrs, rules.lr_bounds) == ((0.001, ), (1e-6, 0.001))


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


def test_validation_without_a_known_positive_is_refused(
        tmp_path, monkeypatch, capsys):
    """Every validation label unknown: every method would score 0. Nothing
    is trained or written, the tool exits non-zero with the reason."""
    monkeypatch.chdir(tmp_path)
    config = write_custom_config(tmp_path, known=0.0)
    with pytest.raises(SelectionError, match='no known positive'):
        validation_labels(Config.fromfile(config), config)
    with pytest.raises(SystemExit) as exit:
        load_tool().main([config, '--methods', 'an', 'hill'])
    message = str(exit.value.code)
    assert message.startswith('[select_method] the validation split of ')
    assert 'no known positive' in message and '\n' not in message
    assert not (tmp_path / 'work_dirs').exists()  # nothing written
    # With known labels: counted as the validation metric reads them.
    config = write_custom_config(tmp_path)
    counts = validation_labels(Config.fromfile(config), config)
    assert counts['images'] == 4 and counts['positives'] > 0
    assert counts['negatives'] > 0


def _rows(values: dict, tested=True) -> dict:
    """Finished methods with the validation mAP of each seed's run."""
    point = {LR_KEY: 0.01, EPOCHS_KEY: 4}
    rows = {}
    for name, scores in values.items():
        runs = [{'val mAP': v, 'mAP': v - 10} for v in scores]
        rows[name] = dict(runs=runs, tuning=dict(chosen=point))
        if tested:
            rows[name].update(
                mAP=float(np.mean(scores)) - 10,
                std=dict(
                    mAP=float(np.std(scores, ddof=1)) if len(scores) >
                    1 else 0.0))
    return rows


def test_methods_within_their_seed_spread_share_a_rank():
    ranked = rank(
        _rows({
            'an': [70, 72, 74],  # 72 ± 2
            'hill': [71, 73, 72.5],  # 72.17 ± 1.04: within an's spread
            'gr': [60, 61, 62],
        }))
    assert [name for name, _ in ranked] == ['hill', 'an', 'gr']
    assert [row['rank'] for _, row in ranked] == [1, 1, 3]
    assert dict(ranked)['an']['tied with'] == 'hill'
    text = table(ranked)
    assert '| 1= | hill | 72.17 ± 1.04 | +0.17 |' in text
    assert '| 3 | gr | 61.00 ± 1.00 | -11.00 |' in text
    warnings = ranking_warnings(ranked)
    assert len(warnings) == 1
    assert warnings[0].startswith('no ranking between hill and an: ')
    # Apart: each its own rank, nothing to warn about.
    ranked = rank(_rows({'an': [70, 71, 72], 'hill': [75, 76, 77]}))
    assert [row['rank'] for _, row in ranked] == [1, 2]
    assert ranking_warnings(ranked) == []


def test_one_seed_and_a_saturated_validation_split_are_warned_about():
    ranked = rank(_rows({'an': [100.0], 'hill': [99.0]}))
    assert [row['rank'] for _, row in ranked] == [1, 2]
    text = table(ranked)
    assert '| 1 | an | 100.00 ± n/a | +0.00 | 90.00 ± n/a |' in text
    warnings = ranking_warnings(ranked,
                                dict(images=32, positives=40, negatives=88))
    assert warnings[0].startswith('one seed: ')
    assert warnings[1].startswith('validation mAP saturates (an: 100.00): '
                                  'the validation split (32 images, 40 '
                                  'known positives, 88 known negatives)')


def test_relative_paths_resolve_against_the_working_directory(
        tmp_path, monkeypatch):
    """From a folder outside the repository, with relative paths: the
    sweep names the method configs where they were written (it joined
    them to the repository before), and the runs work in this folder."""
    monkeypatch.chdir(tmp_path)
    write_custom_config(tmp_path)
    with pytest.raises(SystemExit, match='not finished yet'):
        load_tool().main([
            'my_config.py', '--methods', 'an', '--work-dir', 'select',
            '--workers', '0'
        ])
    an = str(tmp_path / 'select/configs/an.py')
    definition = Sweep('select/select.db', 'select', trusted=[an]).definition
    assert definition['configs'] == [str(tmp_path / 'select/configs/an.py')]
    assert definition['work_dir'] == str(tmp_path / 'select')


def _method_configs(storage: str) -> list:
    """The method configs that select_method wrote beside ``storage``."""
    return [
        osp.abspath(p)
        for p in glob.glob(osp.join(osp.dirname(storage), 'configs', '*.py'))
    ]


def record_runs(storage: str,
                name: str,
                scores=(),
                failure=None,
                study='select') -> None:
    """Record runs of ``name`` in the selection of ``storage`` as a worker
    would (without training): finished at lr 0.01 and 4 epochs, one per
    seed, with these validation mAP; or one failed run."""
    from optuna.trial import TrialState

    from mmlml.benchmark.reports.results import COLUMNS
    sweep = Sweep(storage, study, trusted=_method_configs(storage))
    group = sweep.group('finetune', 'own', name)
    point = {EPOCHS_KEY: 4, LR_KEY: 0.01}
    if failure is not None:
        sweep.add_trial(
            group, point, 0, TrialState.FAIL, summary={'failure': failure})
    for seed, value in enumerate(scores):
        summary = {key: value - 10 for key in COLUMNS}
        summary.update({'val mAP': value, 'best epoch': 2, 'epochs': 4})
        sweep.add_trial(group, point, seed, TrialState.COMPLETE, value,
                        summary)


def test_failed_methods_are_retried_or_dropped_and_the_others_ranked(
        tmp_path, monkeypatch, capsys):
    """A failed method is reported in one line while the others are
    ranked and the best is written (a short child of the user's config);
    --retry-failed queues it again; naming fewer methods drops it from the
    same selection, without retraining the others."""
    monkeypatch.chdir(tmp_path)
    config = write_custom_config(tmp_path)
    tool = load_tool()
    command = [
        config, '--seeds', '0', '1', '--lrs', '0.01', '--lr-bounds', '0.01',
        '0.01', '--max-doublings', '0', '--workers', '0'
    ]
    methods = ['--methods', 'an', 'hill', 'gr']
    with pytest.raises(SystemExit, match='not finished yet'):
        tool.main(command + methods)
    storage = 'work_dirs/select_method/my_config/select.db'
    record_runs(storage, 'an', [70, 71])
    record_runs(storage, 'hill', [75, 76])
    record_runs(storage, 'gr', failure='demo.py exited with 1, see log.txt')
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit:
        tool.main(command + methods)
    assert str(exit.value.code).startswith(
        '[select_method] gr failed and is not ranked: fix the cause and run '
        'the same command with --retry-failed, or leave it out of --methods')
    out, err = capsys.readouterr()
    assert '[select_method] gr failed: finetune/own/lr0.01_ep4/gr/seed0: ' \
        'demo.py exited with 1' in err
    assert '| 1 | hill | 75.50 ± 0.71 | +5.00 | 65.50 ± 0.71 | lr 0.01, ' \
        'epochs 4 |' in out
    best = 'work_dirs/select_method/my_config/best_hill.py'
    with open(best) as f:
        text = f.read()
    assert "_base_ = ['../../../my_config.py']" in text
    assert 'lr 0.01, epochs 4' in text and len(text.splitlines()) < 20
    cfg = Config.fromfile(best)
    assert cfg.model.head.loss.type == 'HillLoss'
    assert (cfg.optim_wrapper.optimizer.lr, cfg.train_cfg.max_epochs) == \
        (0.01, 4)

    with pytest.raises(SystemExit, match='gr not finished yet'):
        tool.main(command + methods + ['--retry-failed'])
    assert '1 failed runs queued again' in capsys.readouterr().err

    result = tool.main(command + ['--methods', 'an', 'hill'])
    assert '[select_method] no longer in the selection: gr (their runs ' \
        f'stay in {storage}; name them in --methods to go on with them)' in \
        capsys.readouterr().err
    assert result['best'] == 'hill' and result['failed'] == {}
    assert [name for name, _ in result['ranking']] == ['hill', 'an']
    trusted = _method_configs(storage)
    assert Sweep(
        storage, 'select', trusted=trusted).definition['configs'] == [
            str(tmp_path / f'work_dirs/select_method/my_config/configs/{m}.py')
            for m in ('an', 'hill')
        ]


def test_bad_commands_are_one_line(tmp_path, monkeypatch, capsys):
    """A config without a validation split or that cannot be read, a work
    dir that cannot be made, a method named by a path or unknown: one
    line each, before anything trains."""
    monkeypatch.chdir(tmp_path)
    tool = load_tool()
    config = write_custom_config(
        tmp_path, 'val_dataloader = None\nval_cfg = None\n'
        'val_evaluator = None\n')
    with pytest.raises(SystemExit) as exit:
        tool.main([config])
    assert str(exit.value.code).startswith(
        f'[select_method] {config} has no validation split (val_dataloader, '
        'val_cfg and val_evaluator): ')
    broken = tmp_path / 'broken.py'
    broken.write_text('model = dict(\n')
    with pytest.raises(SystemExit) as exit:
        tool.main([str(broken)])
    assert str(exit.value.code).startswith(
        f'[select_method] cannot read {broken}: SyntaxError: ')
    config = write_custom_config(tmp_path)
    (tmp_path / 'a_file').write_text('')
    with pytest.raises(SystemExit) as exit:
        tool.main([config, '--work-dir', 'a_file/select'])
    assert str(exit.value.code) == (
        '[select_method] cannot create the work directory a_file/select '
        '(--work-dir): Not a directory')
    assert not any(tmp_path.glob('a_file*/**'))
    capsys.readouterr()
    for methods, error in (
        (['configs/demo/an.py'], "not paths: 'an', not 'configs/demo/an.py'"),
        (['../an'], "not paths: 'an', not '../an'"),
        (['an', 'hil'], "no preset named 'hil'; the supported ones: an "),
    ):
        with pytest.raises(SystemExit) as exit:
            tool.parse_args([config, '--methods', *methods])
        assert exit.value.code == 2
        last = capsys.readouterr().err.strip().splitlines()[-1]
        assert ': error: --methods' in last and error in last


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


def test_a_tool_of_another_checkout_is_refused(tmp_path):
    """The tool of another checkout than the installed one would read the
    installed checkout's presets beside another version of its code: one
    line naming both checkouts and the fix, nothing written."""
    other = tmp_path / 'other'
    ignore = shutil.ignore_patterns('__pycache__', '*.pyc')
    for folder in ('mmlml', 'tools', 'configs'):
        shutil.copytree(osp.join(ROOT, folder), other / folder, ignore=ignore)
    env = {k: v for k, v in os.environ.items() if k != 'PYTHONPATH'}
    env['PYTHONPATH'] = ROOT  # the tested checkout is the imported one
    for tool in ('select_method', 'benchmark'):
        result = subprocess.run([
            sys.executable, f'tools/{tool}.py', 'configs/demo/an.py',
            '--workers', '0', '--work-dir', 'wd'
        ],
                                cwd=other,
                                env=env,
                                capture_output=True,
                                text=True)
        assert result.returncode == 1
        line, = result.stderr.strip().splitlines()[-1:]
        assert line.startswith(f'[{tool}] this tool lies in the checkout '
                               f'{other}, but mmlml is imported from the '
                               f'checkout {osp.realpath(ROOT)}: run ')
        assert f'pip install -e {other}' in line
    assert not (other / 'wd').exists()


def _finish(sweep, group, point: dict, value: float, best_epoch: int):
    """Record the first seed's run at ``point`` as a worker would."""
    from optuna.trial import TrialState

    from mmlml.benchmark.reports.results import COLUMNS
    summary = {key: value - 10 for key in COLUMNS}
    summary.update({
        'val mAP': value,
        'best epoch': best_epoch,
        'epochs': point[EPOCHS_KEY]
    })
    sweep.add_trial(group, point, 0, TrialState.COMPLETE, value, summary)


def test_search_goes_past_an_edge_and_says_where_a_bound_stops_it(
        tmp_path, monkeypatch, capsys):
    """Your rate 0.01 and its neighbours first; the best at the upper edge
    (0.03) -> 0.1, the bound (x 10); still improving at its last epoch ->
    doubled once (--max-doublings 1). The chosen point sits at both
    bounds: the selection says so, in one line each."""
    monkeypatch.chdir(tmp_path)
    config = write_custom_config(tmp_path)  # lr 0.01, 4 epochs
    tool = load_tool()
    command = [
        config, '--methods', 'an', '--seeds', '0', '--max-doublings', '1',
        '--workers', '0'
    ]
    with pytest.raises(SystemExit, match='not finished yet'):
        tool.main(command)
    storage = 'work_dirs/select_method/my_config/select.db'
    sweep = Sweep(storage, 'select', trusted=_method_configs(storage))
    group = sweep.group('finetune', 'own', 'an')

    def needed():
        """What the search asks for next, from the finished runs (the
        command queued the first ones)."""
        done = [r for r in sweep.records(group) if r['state'] == 'complete']
        return sorted((point[LR_KEY], point[EPOCHS_KEY])
                      for point, _ in plan(done, sweep.rules, 4, 0.01).needed)

    assert needed() == [(0.003, 4), (0.01, 4), (0.03, 4)]
    for lr, value in ((0.01, 70), (0.003, 60), (0.03, 75)):
        _finish(sweep, group, {LR_KEY: lr, EPOCHS_KEY: 4}, value, 2)
    assert needed() == [(0.1, 4)]  # past the edge, as the benchmark does
    _finish(sweep, group, {LR_KEY: 0.1, EPOCHS_KEY: 4}, 80, 4)
    assert needed() == [(0.1, 8)]  # 0.3 lies beyond the bound 0.1
    _finish(sweep, group, {LR_KEY: 0.1, EPOCHS_KEY: 8}, 82, 8)
    assert sweep.plan(group).done
    capsys.readouterr()
    result = tool.main(command)
    assert result['at_bounds'] == [
        'an: its learning rate 0.1 (10 x your 0.01) is the highest the '
        'search may try (bound 0.1; the next one, 0.3, lies beyond): the '
        'best rate may lie above it; widen --lr-bounds to search on',
        'an: still improving at its last epoch (8) in the longest run the '
        'search may try (4 epochs doubled at most 1 time): more epochs may '
        'do better; raise --max-doublings (or train_cfg.max_epochs)'
    ]
    err = capsys.readouterr().err
    for line in result['at_bounds']:
        assert f'[select_method] warning: {line}\n' in err
    # A point inside the bounds is not reported.
    row = dict(result['ranking'])['an']
    inside = copy.deepcopy(row)
    inside['tuning']['chosen'] = {LR_KEY: 0.03, EPOCHS_KEY: 4}
    inside['runs'][0].update({'best epoch': 2, 'epochs': 4})
    assert search_edges('an', inside, sweep.rules, 4, 0.01) == []


def test_smoke_refuses_what_the_full_selection_refuses(tmp_path, monkeypatch,
                                                       capsys):
    """``persistent_workers=True`` with ``num_workers=0``: the full
    selection leaves every method out; --smoke, whose runs have no
    workers, reads the real dataloaders first and refuses it in one line,
    before anything is written. Once fixed, the real dataloaders of the
    three splits pass the check."""
    monkeypatch.chdir(tmp_path)
    config = write_custom_config(
        tmp_path, 'train_dataloader = dict(num_workers=0, '
        'persistent_workers=True)\n')
    tool = load_tool()
    with pytest.raises(SystemExit, match='no method of an can run'):
        tool.main([config, '--methods', 'an', '--workers', '0'])
    assert 'left out: an cannot train: ValueError: persistent_workers ' \
        'option needs num_workers > 0' in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit:
        tool.main([config, '--methods', 'an', '--smoke', '--workers', '0'])
    assert str(exit.value.code) == (
        f'[select_method] {config}: train_dataloader fails as the full run '
        'builds it: ValueError: persistent_workers option needs num_workers '
        '> 0; every method of the full selection would be left out (--smoke '
        'checks the real dataloaders first)')
    assert not (tmp_path / 'work_dirs/select_method/my_config-smoke').exists()

    cfg = Config.fromfile(write_custom_config(tmp_path))
    names = used_dataloaders(cfg, test=True)
    assert names == ['train_dataloader', 'val_dataloader', 'test_dataloader']
    assert used_dataloaders(cfg) == names[:2]
    check_dataloaders(cfg, names)
    # A test split that cannot be read is found too (the runs test).
    cfg.test_dataloader.dataset.ann_file = 'missing.json'
    with pytest.raises(
            ValueError,
            match='^test_dataloader fails as the '
            'full run builds it: '):
        check_dataloaders(cfg, ['test_dataloader'])


def test_smoke_leaves_out_what_the_full_selection_leaves_out(
        tmp_path, monkeypatch, capsys):
    """A refusal of the full run's training check, not of its dataloaders:
    a batch larger than the training split with ``drop_last`` (the
    smoke's batches of 2 would fit). The full selection and --smoke both
    leave the method out, with the same line."""
    monkeypatch.chdir(tmp_path)
    config = write_custom_config(
        tmp_path, 'train_dataloader.update(batch_size=4096, '
        'drop_last=True)\n')
    tool = load_tool()
    said = []
    for smoke in ([], ['--smoke']):
        with pytest.raises(SystemExit, match='no method of an can run'):
            tool.main([config, '--methods', 'an', '--workers', '0'] + smoke)
        said.append(
            next(line for line in capsys.readouterr().err.splitlines()
                 if 'left out: an cannot train' in line))
    assert said[0] == said[1]
    assert 'train_dataloader.batch_size (4096) is larger' in said[0]


def test_a_selection_is_joined_by_its_study(tmp_path, monkeypatch, capsys):
    """docs/cluster.md's way: the same config with ``--join --study NAME``
    adds workers to a running selection, its methods and search the
    stored ones, its method configs checked to be what the command writes
    for the config; a worker of the join trains them (the stand-in
    trainer). An edited method config, another config, or --methods are
    refused in one line."""
    monkeypatch.chdir(tmp_path)
    config = write_custom_config(tmp_path)
    tool = load_tool()
    with pytest.raises(SystemExit, match='an, hill not finished yet'):
        tool.main([
            config, '--methods', 'an', 'hill', '--seeds', '0', '--lrs', '0.01',
            '--lr-bounds', '0.01', '0.01', '--max-doublings', '0', '--study',
            'mine', '--workers', '0'
        ])
    storage = 'work_dirs/select_method/my_config/select.db'
    join = [config, '--join', '--study', 'mine']
    capsys.readouterr()
    with pytest.raises(SystemExit, match='an, hill not finished yet'):
        tool.main(join + ['--workers', '0'])
    assert (f'[select_method] joining the selection mine in {storage}: an '
            f'hill on {config} (method configs in '
            'work_dirs/select_method/my_config/configs, checked)'
            ) in capsys.readouterr().err

    an = tmp_path / 'work_dirs/select_method/my_config/configs/an.py'
    text = an.read_text()
    an.write_text(text + 'optim_wrapper = dict(optimizer=dict(lr=9))\n')
    with pytest.raises(SystemExit) as exit:
        tool.main(join + ['--workers', '0'])
    assert str(exit.value.code) == (
        f"[select_method] {storage} (sweep 'mine'): {an.relative_to(tmp_path)}"
        f' is not the an config that the selection writes for {config} '
        '(edited, or written for another config): run the selection '
        'without --join to write it again')
    an.write_text(text)
    other = tmp_path / 'other' / 'my_config.py'
    other.parent.mkdir()
    other.write_text(open(config).read() + 'train_cfg = dict(max_epochs=6)\n')
    with pytest.raises(
            SystemExit,
            match='is not the an config that the '
            f'selection writes for {other}'):
        tool.main([
            str(other), '--join', '--study', 'mine', '--work-dir',
            'work_dirs/select_method/my_config', '--workers', '0'
        ])
    with pytest.raises(SystemExit, match='no selection to join'):
        tool.main(join + ['--work-dir', 'elsewhere', '--workers', '0'])
    with pytest.raises(SystemExit):
        tool.parse_args(join + ['--methods', 'an'])
    assert '--join runs the stored selection' in capsys.readouterr().err

    # Once the runs are in, the join ranks the stored methods.
    record_runs(storage, 'an', [70], study='mine')
    record_runs(storage, 'hill', [75], study='mine')
    result = tool.main(join + ['--workers', '0'])
    assert [name for name, _ in result['ranking']] == ['hill', 'an']
    assert result['out'] == 'work_dirs/select_method/my_config/best_hill.py'


@pytest.mark.slow
def test_a_worker_of_a_join_trains_the_selection(tmp_path, monkeypatch):
    """A local worker started by ``--join`` runs the method configs the
    join named (the stand-in trainer, no training: about half a minute,
    most of it the worker's start)."""
    monkeypatch.chdir(tmp_path)
    config = write_custom_config(tmp_path)
    tool = load_tool()
    with pytest.raises(SystemExit, match='an not finished yet'):
        tool.main([
            config, '--methods', 'an', '--seeds', '0', '--lrs', '0.1',
            '--lr-bounds', '0.1', '0.1', '--max-doublings', '0', '--study',
            'mine', '--workers', '0'
        ])
    monkeypatch.setenv('MMLML_SWEEP_TRAINER',
                       osp.join(ROOT, 'tests', 'benchmark_fake_trainer.py'))
    result = tool.main([config, '--join', '--study', 'mine', '--workers', '1'])
    assert [name for name, _ in result['ranking']] == ['an']
    assert result['failed'] == {} and osp.isfile(result['out'])
    row = dict(result['ranking'])['an']
    assert row['runs'][0]['val mAP'] == 80.0  # the stand-in's at lr 0.1
