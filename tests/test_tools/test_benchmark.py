"""The benchmark: its summaries (mmlml.benchmark.reports.results), the settings
and modes of its runs (mmlml.benchmark.sweep.settings), the tool that sweeps
configs x settings x seeds (tools/benchmark.py; the sweep itself:
tests/test_benchmark), the source backbone it fine-tunes and the
converter that extracts it."""
import importlib.util
import json
import math
import os
import os.path as osp
import subprocess
import sys

import numpy as np
import pytest
import torch
from conftest import ROOT  # noqa: E402
from mmengine.config import Config

from mmlml.benchmark.reports.results import (COLUMNS, aggregate, gap_closed,
                                             markdown_table, rank_correlation,
                                             rank_correlation_p_value)
from mmlml.benchmark.sweep.settings import (dataset_modes, mode_options,
                                            run_domain, setting_options)
from mmlml.benchmark.training.config_keys import LR_KEY
from mmlml.benchmark.training.trial_record import summarise

BACKBONE = osp.join(ROOT, 'checkpoints',
                    'synthetic_shapes_source_backbone.pth')


def load_tool(name):
    path = osp.join(ROOT, 'tools', *name.split('/')) + '.py'
    spec = importlib.util.spec_from_file_location(name.replace('/', '_'), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


benchmark = load_tool('benchmark')


def metrics(value):
    keys = ('mAP', 'precision', 'recall', 'f1-score', 'CF1', 'precision_micro',
            'recall_micro', 'f1-score_micro')
    return {f'multi-label/{k}': value + i for i, k in enumerate(keys)}


def test_summarise_picks_the_columns():
    summary = summarise(metrics(10.))
    assert list(summary) == list(COLUMNS)
    assert summary['mAP'] == 10. and summary['CF1 (paper)'] == 14.
    assert summary['CF1 (mean F1)'] == 13. and summary['OF1'] == 17.
    incomplete = metrics(1.)
    del incomplete['multi-label/CF1']
    with pytest.raises(KeyError, match='MultiLabelF1Metric'):
        summarise(incomplete)


def test_aggregate_and_gap_closed():
    runs = [summarise(metrics(v)) for v in (10., 12., 14.)]
    row = aggregate(runs)
    assert row['mAP'] == 12. and row['std']['mAP'] == 2.  # ddof=1
    assert row['runs'] == runs
    assert aggregate(runs[:1])['std']['OF1'] == 0.
    with pytest.raises(ValueError):
        aggregate([])
    assert gap_closed(80., 80., 90.) == 0.
    assert gap_closed(90., 80., 90.) == 1.
    assert gap_closed(75., 80., 90.) == -.5
    assert math.isnan(gap_closed(85., 90., 90.))


def test_markdown_table():
    results = {
        'full': aggregate([summarise(metrics(v)) for v in (90., 92.)]),
        'hill': aggregate([summarise(metrics(v)) for v in (85., 87.)]),
        'an': aggregate([summarise(metrics(v)) for v in (80., 82.)]),
    }
    lines = markdown_table(
        results, baseline='an', oracle='full',
        names=dict(an='AN')).splitlines()
    assert lines[0] == ('| method | test mAP | test CF1 (paper) | test OF1 '
                        '| AN → full gap closed |')
    assert lines[1] == '|:---|---:|---:|---:|---:|'
    assert lines[3] == ('| hill | 86.00 ± 1.41 | 90.00 ± 1.41 | '
                        '93.00 ± 1.41 | +50% |')
    assert lines[4].startswith('| AN | 81.00 ± 1.41') \
        and lines[4].endswith('+0% |')
    single = {k: aggregate(v['runs'][:1]) for k, v in results.items()}
    assert '±' not in markdown_table(single)
    assert 'gap closed' not in markdown_table(single, baseline='xx')


def test_rank_correlation():
    a = dict(x=1., y=2., z=3., w=4.)
    assert rank_correlation(a, a) == pytest.approx(1)
    assert rank_correlation(a, {k: -v for k, v in a.items()}) \
        == pytest.approx(-1)
    # Only the shared methods count; ties share their mean rank.
    assert rank_correlation(a, dict(x=1., y=2., z=2., other=9.)) \
        == pytest.approx(np.sqrt(3) / 2)
    assert math.isnan(rank_correlation(a, dict(x=1., y=2.)))
    assert math.isnan(rank_correlation(a, dict(x=1., y=1., z=1.)))


def test_rank_correlation_p_value():
    """Exact (every ordering) up to 8 methods, Student's t beyond."""
    from scipy import stats
    a = dict(x=1., y=2., z=3., w=4.)
    # Of the 24 orderings of 4 ranks, one agrees fully and one reverses.
    assert rank_correlation_p_value(a, a) == pytest.approx(2 / 24)
    assert rank_correlation_p_value(a, dict(x=1., y=2., z=4., w=3.)) == \
        pytest.approx(8 / 24)  # |rho| >= 0.8: 4 orderings each way
    assert math.isnan(rank_correlation_p_value(a, dict(x=1., y=2.)))
    rng = np.random.default_rng(0)
    many = {str(i): v for i, v in enumerate(rng.random(12))}
    noisy = {k: v + rng.random() for k, v in many.items()}
    assert rank_correlation_p_value(many, noisy) == pytest.approx(
        stats.spearmanr(list(many.values()), list(noisy.values())).pvalue)


def test_compare_benchmarks(tmp_path):
    """Two domains' tuned JSONs: the shared methods side by side, their
    ranks, the gaps and the rank correlation."""
    compare = load_tool('analysis/compare_benchmarks')

    def write(name, domain, maps, val=None):
        # The validation mAP is the test one unless ``val`` says otherwise.
        rows = {
            m:
            dict(
                mAP=v,
                std=dict(mAP=0.5),
                runs=[{
                    'val mAP': (val or {}).get(m, v)
                }] * 3)
            for m, v in maps.items()
        }
        path = tmp_path / f'{name}.json'
        path.write_text(
            json.dumps(
                dict(
                    sweep=dict(domain=domain),
                    results=dict(finetune=dict(single_positive=rows)))))
        return str(path)

    first = write(
        'a', None,
        dict(an=80, full_labels=100, em=95, hill=90, gr=85, only_here=99))
    second = write(
        'b',
        'digit_canvases',
        dict(an=50, full_labels=90, em=60, hill=70, gr=65),
        val=dict(gr=75))
    out = tmp_path / 'c.md'
    text = compare.main([first, second, '--markdown', str(out)])
    assert out.read_text() == text
    assert 'only_here' not in text
    assert '| em | 95.00 ± 0.50 | 2 | +75% | 60.00 ± 0.50 | 4 | +25% |' \
        in text
    assert (
        'of the 3 methods other than an and full_labels, '
        'synthetic_shapes vs digit_canvases: -0.50 (two-sided p = 1).') in text
    # Chosen on validation (gr), not on test (hill).
    assert ('digit_canvases: best of them on validation **gr**, 65.00 test '
            'mAP, 38% of the an → old oracle full_labels gap.') in text
    with pytest.raises(SystemExit, match='given twice'):
        compare.main([first, first])
    # One domain in two modes, one mode per record.
    linear = write('l', 'digit_canvases', {})
    data = json.loads(open(linear).read())
    data['results'] = dict(
        linear=json.loads(open(second).read())['results']['finetune'])
    open(linear, 'w').write(json.dumps(data))
    text = compare.main([second, linear, '--mode', 'finetune', 'linear'])
    assert 'digit_canvases (finetune) test mAP' in text
    assert 'digit_canvases (linear) test mAP' in text
    assert '**single_positive, finetune and linear:' in text
    with pytest.raises(SystemExit, match='3 modes for 2 records'):
        compare.main([second, linear, '--mode', 'a', 'b', 'c'])


def test_settings_leave_the_oracle_and_second_stages_alone():
    options = setting_options('r0.8', 'single_positive')
    assert options == {
        'val_dataloader.dataset.mode': 'ratio',
        'val_dataloader.dataset.ratio': 0.8,
        'train_dataloader.dataset.mode': 'ratio',
        'train_dataloader.dataset.ratio': 0.8,
    }
    for train_mode in ('full', 'file'):
        options = setting_options('single_positive', train_mode)
        assert options == {
            'val_dataloader.dataset.mode': 'single_positive',
            'val_dataloader.dataset.ratio': None
        }
    linear = mode_options('linear')
    assert linear['model.backbone.frozen_stages'] == 4
    # The learning rate is every trial's own, in both modes.
    assert LR_KEY not in linear and mode_options('finetune') == {}
    # A domain with a linear protocol of its own (cached feature maps)
    # runs that domain file, with no backbone to freeze.
    assert run_domain('photo_canvases', 'linear') == 'photo_canvases_linear'
    assert run_domain('photo_canvases', 'finetune') == 'photo_canvases'
    assert run_domain('digit_canvases', 'linear') == 'digit_canvases'
    assert run_domain(None, 'linear') is None
    for domain in ('photo_canvases', 'photo_canvases_linear'):
        assert mode_options('linear', domain) == {}
    assert mode_options('linear', 'digit_canvases') == linear


def test_repo_root_is_found_through_an_editable_install(tmp_path):
    """An editable install reaches the package through a link: the
    sweep's repository root is still the one holding tools/."""
    (tmp_path / 'mmlml').symlink_to(osp.join(ROOT, 'mmlml'))
    out = subprocess.run([
        sys.executable, '-c',
        'from mmlml.benchmark.sweep.sweep import REPO_ROOT; print(REPO_ROOT)'
    ],
                         cwd=str(tmp_path),
                         env=dict(os.environ, PYTHONPATH=str(tmp_path)),
                         capture_output=True,
                         text=True,
                         check=True).stdout.split()[-1]
    assert osp.samefile(out, ROOT)


def test_config_checks(tmp_path):
    demo = osp.join(ROOT, 'configs', 'demo')
    assert dataset_modes(osp.join(demo, 'an.py')) == ('single_positive',
                                                      'single_positive', None)
    first = dataset_modes(osp.join(demo, 'pseudo_label.py'))[2]
    assert first == dict(config=osp.join(demo, 'an.py'), thr=0.5)
    assert dataset_modes(osp.join(demo, 'full_labels.py'))[0] \
        == 'full'
    no_stage = tmp_path / 'no_stage.py'
    no_stage.write_text(f"_base_ = [{osp.join(demo, 'an.py')!r}]\n"
                        "train_dataloader = dict(dataset=dict(mode='file', "
                        "label_file='x.npy'))\n")
    with pytest.raises(ValueError, match='first_stage'):
        dataset_modes(str(no_stage))
    plain = tmp_path / 'plain.py'
    plain.write_text(f"_base_ = [{osp.join(demo, 'an.py')!r}]\n"
                     "train_dataloader = dict(dataset=dict(_delete_=True, "
                     "type='SyntheticShapes', num_samples=8))\n")
    with pytest.raises(ValueError, match='must be a PartialLabelDataset'):
        dataset_modes(str(plain))
    # The user's own labels (tools/select_method.py) need no wrapper.
    assert dataset_modes(str(plain), 'own') == (None, 'single_positive', None)
    with pytest.raises(SystemExit):
        benchmark.parse_args([str(tmp_path / 'missing.py')])


@pytest.mark.slow
def test_benchmark_end_to_end(tmp_path):
    """Two configs, one seed, one point, a tiny schedule, one worker: the
    record, its tables and figure; the same command again trains nothing;
    outputs are never written over inputs or existing files."""
    demo = osp.join(ROOT, 'configs', 'demo')
    args = [
        osp.join(demo, 'an.py'),
        osp.join(demo, 'full_labels.py'), '--seeds', '0', '--lrs', '0.1',
        '--lr-bounds', '0.1', '0.1', '--max-doublings', '0', '--study', 't',
        '--workers', '1', '--storage',
        str(tmp_path / 't.db'), '--work-dir',
        str(tmp_path / 'work'), '--out',
        str(tmp_path / 'b.json'), '--markdown',
        str(tmp_path / 'b.md'), '--figure',
        str(tmp_path / 'b.png'), '--cfg-options', 'train_cfg.max_epochs=2',
        'train_dataloader.dataset.dataset.num_samples=32',
        'val_dataloader.dataset.dataset.num_samples=32',
        'test_dataloader.dataset.num_samples=16',
        'train_dataloader.batch_size=16'
    ]
    data = benchmark.main(args)
    rows = data['results']['finetune']['single_positive']
    assert set(rows) == {'an', 'full_labels'}
    run = rows['an']['runs'][0]
    assert run['seed'] == 0 and run['setting'] == 'single_positive'
    assert 0 <= run['mAP'] <= 100
    saved = json.loads((tmp_path / 'b.json').read_text())
    assert saved['results'] == json.loads(json.dumps(data['results']))
    # No path of this machine in the record's runs: checkpoints relative to
    # the work directory.
    assert str(tmp_path) not in json.dumps(saved['trials'])
    assert run['best checkpoint'].startswith(
        osp.join('finetune', 'single_positive', 'lr0.1_ep2', 'an', 'seed0'))
    table = (tmp_path / 'b.md').read_text()
    assert '| an |' in table and '| full_labels |' in table
    assert 'an → old oracle full_labels gap closed' in table
    assert osp.getsize(tmp_path / 'b.png') > 1000

    # Existing outputs are replaced with --force only; never an input.
    with pytest.raises(FileExistsError, match='b.json.*--force'):
        benchmark.main(args)
    with pytest.raises(ValueError, match='also an input'):
        benchmark.main(args +
                       ['--force', '--markdown',
                        str(tmp_path / 't.db')])
    # Reports come from the record: without --out they would be lost.
    without_out = [
        a for a in args if a not in ('--out', str(tmp_path / 'b.json'))
    ]
    with pytest.raises(ValueError, match='--markdown, --figure .*--out'):
        benchmark.main(without_out + ['--force'])
    again = benchmark.main(args + ['--force'])  # nothing trained again
    assert again['results'] == data['results']
    assert again['trials'] == data['trials']

    # --report-only: the tables of the record, nothing trained or needed.
    (tmp_path / 'b.md').unlink()
    report = ['--out', str(tmp_path / 'b.json'), '--report-only']
    benchmark.main(report + ['--markdown', str(tmp_path / 'b.md')])
    assert (tmp_path / 'b.md').read_text() == table
    with pytest.raises(FileExistsError, match='exists already'):
        benchmark.main(report + ['--markdown', str(tmp_path / 'b.md')])
    with pytest.raises(ValueError, match='also an input'):
        benchmark.main(
            report +
            ['--markdown', str(tmp_path / 'b.json'), '--force'])
    (tmp_path / 'x.json').write_text('{"results": {}}')
    with pytest.raises(ValueError, match='x.json: not the record'):
        benchmark.main([
            '--out',
            str(tmp_path / 'x.json'), '--report-only', '--markdown',
            str(tmp_path / 'x.md')
        ])


def test_demo_configs_start_from_the_shipped_backbone():
    """The demo's backbone loads the shipped source checkpoint."""
    from mmpretrain.registry import MODELS
    cfg = Config.fromfile(osp.join(ROOT, 'configs', 'demo', 'an.py'))
    assert osp.samefile(cfg.model.backbone.init_cfg.checkpoint, BACKBONE)
    model = MODELS.build(cfg.model)
    model.init_weights()
    state = torch.load(BACKBONE, map_location='cpu')['state_dict']
    for key, value in model.state_dict().items():
        if key.startswith('backbone.') and 'num_batches' not in key:
            assert torch.equal(value, state[key]), key


def test_extract_backbone(tmp_path):
    converter = load_tool('model_converters/extract_backbone')
    state = {
        'backbone.conv.weight': torch.ones(2),
        'head.fc.bias': torch.ones(1)
    }
    source = tmp_path / 'model.pth'
    torch.save(dict(state_dict=state, meta=dict(epoch=3)), source)
    out = tmp_path / 'sub' / 'backbone.pth'
    converter.main([str(source), str(out)])
    result = torch.load(out)
    assert list(result['state_dict']) == ['backbone.conv.weight']
    assert result['meta'] == dict(epoch=3, extracted_from='model.pth')
    torch.save(dict(state_dict={'head.fc.bias': torch.ones(1)}), source)
    with pytest.raises(FileExistsError, match='--force'):
        converter.main([str(source), str(out)])
    with pytest.raises(ValueError, match='model.pth has no'):
        converter.main([str(source), str(out), '--force'])
    with pytest.raises(FileNotFoundError, match='nothing.pth'):
        converter.main([str(tmp_path / 'nothing.pth'), str(out), '--force'])


def test_a_linear_run_trains_at_its_trials_learning_rate():
    """The learning rate of a run is its trial's point, in either mode
    (the sweep's former ``--linear-lr`` was overridden by it, unseen)."""
    from mmlml.benchmark.sweep.sweep import Group
    from mmlml.benchmark.sweep.trial_process import run_options as _options
    for mode in ('linear', 'finetune'):
        group = Group(mode, 'single_positive', 'configs/demo/an.py', None)
        options = _options({'cfg_options': {}}, group, {LR_KEY: 0.03}, 0)
        assert options[LR_KEY] == 0.03
    with pytest.raises(SystemExit):
        benchmark.parse_args(['configs/demo/an.py', '--linear-lr', '0.1'])


def test_linear_mode_freezes_the_whole_backbone():
    """The linear mode's options leave only the head trainable, with the
    backbone's batch-norm statistics fixed."""
    from mmpretrain.registry import MODELS
    cfg = Config.fromfile(osp.join(ROOT, 'configs', 'demo', 'an.py'))
    cfg.merge_from_dict(mode_options('linear'))
    model = MODELS.build(cfg.model)
    model.train()
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    assert trainable == {'head.fc.weight', 'head.fc.bias'}
    norms = [
        m for m in model.backbone.modules()
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)
    ]
    assert norms and not any(m.training for m in norms)


def test_a_second_stage_finds_its_scores_hook_by_type(tmp_path):
    """vlpl and gpr name the hook whose scores_file the benchmark fills
    by its type, not by its place in custom_hooks."""
    from mmlml.benchmark.sweep.first_stage import scores_key
    from mmlml.benchmark.sweep.trial_process import TrialFailed
    demo = osp.join(ROOT, 'configs', 'demo')
    for name in ('vlpl', 'gpr'):
        config = osp.join(demo, f'{name}.py')
        stage = dataset_modes(config)[2]
        assert stage['scores_hook'] == 'VLPseudoLabelHook'
        assert scores_key(config, stage, {}) == 'custom_hooks.0.scores_file'
    moved = tmp_path / 'moved.py'
    moved.write_text(f"_base_ = [{osp.join(demo, 'vlpl.py')!r}]\n"
                     "custom_hooks = [dict(type='EMAHook'), "
                     "dict(type='VLPseudoLabelHook', scores_file='s.npy')]\n")
    assert scores_key(str(moved), stage, {}) == 'custom_hooks.1.scores_file'
    assert scores_key(str(moved), {'scores_file': 'a.b'}, {}) == 'a.b'
    none = tmp_path / 'none.py'
    none.write_text(f"_base_ = [{osp.join(demo, 'vlpl.py')!r}]\n"
                    "custom_hooks = []\n")
    with pytest.raises(TrialFailed, match='hold 0 times'):
        scores_key(str(none), stage, {})


def test_domain_choices_are_the_domain_files():
    """``--domain`` takes every domain file of the checkout, and no other
    name."""
    assert benchmark.domains() == benchmark.domains(ROOT)
    for domain in benchmark.domains(ROOT):
        args = benchmark.parse_args(['configs/demo/an.py', '--domain', domain])
        assert args.domain == domain
    with pytest.raises(SystemExit):
        benchmark.parse_args(['configs/demo/an.py', '--domain', 'elsewhere'])


def test_use_domain_makes_what_is_missing(tmp_path, monkeypatch):
    """``--domain`` selects the demo domain for the runs and runs the
    domain's ``prepare_command`` entries whose ``prepare_creates`` is
    missing, in order, from the repository root (one command and one path
    may be given without lists)."""
    domains = tmp_path / 'configs' / '_base_' / 'domains'
    domains.mkdir(parents=True)
    make = 'python -c "open(\'{0}\', \'w\').write(\'made\')"'
    (domains / 'listed.py').write_text(
        f'prepare_command = [{make.format("a.txt")!r}, '
        f'{make.format("b.txt")!r}]\n'
        "prepare_creates = ['a.txt', 'b.txt']\n")
    (domains / 'single.py').write_text(
        f'prepare_command = {make.format("c.txt")!r}\n'
        "prepare_creates = 'c.txt'\n")
    (tmp_path / 'b.txt').write_text('kept')
    monkeypatch.setattr(benchmark, 'TOOLS', str(tmp_path / 'tools'))
    monkeypatch.setenv('MMLML_DEMO_DOMAIN', 'before')
    benchmark.use_domain('listed')
    assert os.environ['MMLML_DEMO_DOMAIN'] == 'listed'
    assert (tmp_path / 'a.txt').read_text() == 'made'
    assert (tmp_path / 'b.txt').read_text() == 'kept'  # it existed
    benchmark.use_domain('single')
    assert (tmp_path / 'c.txt').read_text() == 'made'
    assert benchmark.domains(str(tmp_path)) == ['listed', 'single']
    benchmark.use_domain(None)  # no domain: nothing changes
    assert os.environ['MMLML_DEMO_DOMAIN'] == 'single'
