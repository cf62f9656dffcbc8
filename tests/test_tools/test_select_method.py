"""tools/select_method.py: the method presets applied to a user's config,
the refusals, and a tiny selection end to end."""
import importlib.util
import json
import os.path as osp
import textwrap

import mmcv
import numpy as np
import pytest
from mmengine.config import Config

from mmlml.benchmark.method_ranking import rank, ranking_warnings, table
from mmlml.benchmark.method_selection import (MethodError, SelectionError,
                                              apply_preset, method_configs,
                                              validation_labels)
from mmlml.benchmark.search import EPOCHS_KEY, LR_KEY
from mmlml.benchmark.settings import setting_options
from mmlml.benchmark.sweep import Sweep

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
    definition = Sweep('select/select.db', 'select').definition
    assert definition['configs'] == [str(tmp_path / 'select/configs/an.py')]
    assert definition['work_dir'] == str(tmp_path / 'select')
