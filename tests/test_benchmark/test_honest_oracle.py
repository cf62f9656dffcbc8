"""The honest oracle and the choices on validation (mmlml.benchmark
.oracle): with the setting ``full`` in a record, the gap closed ends at
its best method on validation; without it, at the old oracle, marked so;
every "best method" is chosen by validation mAP, never by test mAP. And a
sweep that draws its labels per training seed says so."""
import json

import pytest
from test_search import row
from test_sweep import AN, FAKE, FULL

from mmlml.benchmark.reports.oracle import best_on_validation, gap_ends
from mmlml.benchmark.reports.paper_claims import claims_markdown
from mmlml.benchmark.reports.record import (domain_statistics, export,
                                            reproducer)
from mmlml.benchmark.reports.report import report, report_args, statistics_line
from mmlml.benchmark.reports.results import tuned_table
from mmlml.benchmark.sweep.search import SearchRules
from mmlml.benchmark.sweep.settings import SETTING_TITLES, setting_options
from mmlml.benchmark.sweep.stored_definition import (SweepError,
                                                     check_definition,
                                                     sweep_digests)
from mmlml.benchmark.sweep.sweep import Sweep
from mmlml.benchmark.sweep.trial_process import run_options as _options
from mmlml.benchmark.sweep.worker import work


def _shifted(values, val_shift):
    """A row whose validation mAP is its test mAP plus ``val_shift``."""
    result = row(values)
    for run in result['runs']:
        run['val mAP'] = run['mAP'] + val_shift
    return result


def _mode_results():
    """One mode: single positive and ``full``; on all labels ``em`` is
    best on validation, ``hill`` on test."""
    return {
        'single_positive': {
            'an': row([60., 61., 62.]),
            'full_labels': row([70., 71., 72.]),
            'em': _shifted([75., 76., 77.], 1.),
            'hill': _shifted([78., 79., 80.], -5.),
        },
        'full': {
            'an': row([70., 71., 72.]),
            'em': _shifted([85., 86., 87.], 5.),
            'hill': _shifted([89., 90., 91.], -1.),
        },
    }


def test_the_honest_oracle_is_the_best_full_method_on_validation():
    results = _mode_results()
    ends = gap_ends(results, 'single_positive', 'an', 'full_labels')
    assert ends.honest and ends.oracle == 'em'
    assert ends.oracle_row is results['full']['em']
    assert ends.oracle_label == 'honest oracle em'
    # The gap: an 61 -> em on all labels 86; hill (79) closes 72%.
    table = tuned_table(results['single_positive'], ends=ends)
    assert 'an → honest oracle em gap closed' in table
    assert '| hill | 0.1 | 10 | - | 73.00 |' in table and '+72% |' in table
    # plain BCE stays a row, below the honest oracle
    assert '| full_labels |' in table and '+40% |' in table
    # No gap in the oracle's own setting.
    assert gap_ends(results, 'full', 'an', 'full_labels') is None
    # Without `full`, the old oracle, marked.
    old = gap_ends({'single_positive': results['single_positive']},
                   'single_positive', 'an', 'full_labels')
    assert not old.honest and old.oracle_label == 'old oracle full_labels'


def test_every_best_method_is_chosen_on_validation():
    results = _mode_results()
    # hill leads on test in both settings; em on validation.
    assert best_on_validation(results['full']) == 'em'
    text = claims_markdown(results, SETTING_TITLES)
    assert ('Best method on validation (of the 2 run in this setting '
            'besides the two ends; mean val mAP 77.00): **em**, 76.00 ± 1.00 '
            'test mAP, closes 60% of the an (61.00 ± 1.00) → honest oracle '
            'em (86.00 ± 1.00) gap.') in text
    assert ('Honest oracle (the best on validation of the 3 methods trained '
            'on all labels, mean val mAP 91.00): **em**') in text
    args = report_args(
        dict(
            sweep=dict(
                configs=['an.py', 'em.py', 'hill.py'],
                modes=['finetune'],
                settings=['single_positive', 'full'],
                rules=SearchRules().to_dict()),
            results=dict(finetune=results)))
    tables = report(dict(finetune=results), args)
    assert '**All labels (r = 0), finetune (3 seeds, tuned' in tables
    full_table = tables.split('**All labels')[1]
    assert 'gap closed' not in full_table.split('\n\n')[1]


def test_the_full_setting_trains_every_method_on_all_labels():
    assert setting_options('full', 'single_positive') == {
        'val_dataloader.dataset.mode': 'full',
        'val_dataloader.dataset.ratio': None,
        'train_dataloader.dataset.mode': 'full',
        'train_dataloader.dataset.ratio': None,
    }


def test_labels_drawn_per_training_seed():
    """Each seed's labels are its own draw (1200 + seed: seed 0 draws
    every other sweep's labels), only where the sweep says so."""
    from mmlml.benchmark.sweep.sweep import Group
    group = Group('finetune', 'r0.5', AN, None)
    point = {'optim_wrapper.optimizer.lr': 0.1}
    per_seed = _options({'label_seed_per_seed': True}, group, point, 2)
    assert per_seed['train_dataloader.dataset.seed'] == 1202
    assert per_seed['val_dataloader.dataset.seed'] == 1202
    assert 'train_dataloader.dataset.seed' not in _options({}, group, point, 2)
    definition = dict(
        name='s',
        configs=[AN],
        settings=['r0.5'],
        modes=['finetune'],
        rules=SearchRules().to_dict(),
        work_dir='w',
        label_seed_per_seed=True)
    assert '--label-seed-per-seed' in reproducer(definition, 'x.db', {})
    with pytest.raises(SweepError, match='label_seed_per_seed'):
        check_definition(
            dict(
                definition,
                digests=sweep_digests(definition),
                label_seed_per_seed='yes'), 'x')


def test_a_sweep_with_the_full_setting_and_labels_per_seed(
        tmp_path, monkeypatch):
    """End to end on the stand-in trainer: the seeds train on their own
    labels, the record says so, and its tables end the gap at the honest
    oracle. ``an.py``'s stock CrossEntropyLoss cannot read the full
    labels' observed negatives: it is left out of the full setting, where
    ``full_labels.py`` (ANLoss) is AN on all labels."""
    monkeypatch.setenv('MMLML_SWEEP_TRAINER', FAKE)
    sweep = Sweep(str(tmp_path / 'sweep.db'), 's', must_exist=False)
    definition = dict(
        name='s',
        configs=[AN, FULL],
        settings=['single_positive', 'full'],
        modes=['finetune'],
        rules=SearchRules(
            lrs=(0.1, ), lr_bounds=(0.1, 0.1), seeds=(0, 1),
            max_doublings=0).to_dict(),
        domain=None,
        cfg_options={},
        baseline='an',
        oracle='full_labels',
        prune=None,
        work_dir=str(tmp_path / 'work'),
        threads=1,
        gpus_per_trial=1,
        label_seed_per_seed=True)
    sweep.define(definition)
    assert [(g.setting, g.name)
            for g in sweep.groups()] == [('single_positive', 'an'),
                                         ('single_positive', 'full_labels'),
                                         ('full', 'full_labels')]
    # A stock loss in a LossSum (high_rank.py) too, and a second stage of
    # an.py (its label file, even read by a stock loss, is made by an.py);
    # a second stage of a first stage that trains (vlpl_em.py) stays.
    assert not sweep.trains_in('configs/demo/high_rank.py', 'full')
    assert sweep.trains_in('configs/demo/high_rank.py', 'r0.5')
    for second in ('pseudo_label.py', 'vlpl.py', 'gpr.py'):
        assert not sweep.trains_in(f'configs/demo/{second}', 'full')
    assert sweep.trains_in('configs/demo/vlpl_em.py', 'full')
    with pytest.raises(SweepError, match='label_seed_per_seed'):
        Sweep(str(tmp_path / 'sweep.db'),
              's').define(dict(definition, label_seed_per_seed=False))
    assert work(sweep.spec, 's', poll=0.2)['errors'] == []
    data = json.loads(json.dumps(export(sweep, 'sweep.db', {})))
    assert data['label_seed_per_training_seed'] is True
    assert 'domain_statistics' not in data  # synthetic shapes state none
    runs = data['results']['finetune']['single_positive']['an']['runs']
    assert [run['label seed'] for run in runs] == [1200, 1201]
    tables = report(data['results'], report_args(data))
    assert '(2 seeds, labels drawn per seed, tuned on validation)' in tables
    assert set(data['results']['finetune']['full']) == {'full_labels'}
    assert data['left_out'] == {'full': ['an']}
    assert 'an → honest oracle full_labels gap closed' in tables
    assert "Left out: `an` (MMPretrain's stock sigmoid loss" in tables
    assert 'Not run yet' not in tables


def test_a_photo_record_states_its_domain(monkeypatch, tmp_path):
    """The real-photo domains' records carry ``domain_statistics`` with
    the keys the benchmark promises (here on stand-in photographs);
    another domain's carry none."""
    from mmlml.datasets.domains.photo_backgrounds import \
        write_stand_in_wallpapers
    from mmlml.datasets.domains.photo_canvases import write_stand_in_stamps
    monkeypatch.setenv(
        'MMLML_TUXPAINT_STAMPS',
        write_stand_in_stamps(str(tmp_path / 'stamps'), photos_per_category=3))
    monkeypatch.setenv('MMLML_WALLPAPERS',
                       write_stand_in_wallpapers(str(tmp_path / 'wall')))
    definition = dict(
        domain='photo_canvases_heldout',
        rules=SearchRules().to_dict(),
        label_seed_per_seed=True)
    stats = domain_statistics(definition)
    assert {
        'classes', 'train_images', 'labels_per_image', 'class_prior_range',
        'hidden_positive_share', 'test_photographs_seen_in_training',
        'test_backgrounds_seen_in_training', 'label_seed_per_training_seed'
    } <= set(stats)
    assert set(
        stats['hidden_positive_share']) == {'single_positive', 'r0.5', 'r0.8'}
    assert stats['label_seed_per_training_seed'] is True
    assert stats['test_backgrounds_seen_in_training'] == 0
    # The tables say it too.
    line = statistics_line(stats)
    assert line.startswith("The domain (the record's `domain_statistics`): "
                           f"{stats['classes']} classes, ")
    assert 'test backgrounds seen in training 0.0%' in line
    assert domain_statistics(dict(definition, domain='synthetic_shapes')) \
        is None
    assert domain_statistics(dict(definition, domain=None)) is None
