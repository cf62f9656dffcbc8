"""Validation-driven tuning of the benchmark (mmlml.analysis.benchmark_tuning)
and the papers' claims checked against its results
(mmlml.analysis.paper_claims)."""
import pytest
from mmengine.config import Config

from mmlml.analysis.benchmark_results import COLUMNS, aggregate
from mmlml.analysis.benchmark_tuning import (EPOCHS_KEY, LR_KEY, choose,
                                             key_hyperparameter, point_name,
                                             summarise_tuning, tune,
                                             tuned_table)
from mmlml.analysis.paper_claims import (best_gap_share, claims_markdown,
                                         verdict)

TAU = 'model.head.loss.tau'


def fake_runs(val, calls):
    """``run_points`` whose validation mAP is ``val(point, seed)``, best
    epoch the last one unless the point has 20 epochs."""

    def run_points(points, seeds):
        calls.append([(point_name(p), s) for p, s in zip(points, seeds)])
        return [
            dict(
                dict.fromkeys(COLUMNS, 0.),
                mAP=val(p, s) - 1,
                **{
                    'val mAP': val(p, s),
                    'best epoch': 12 if p[EPOCHS_KEY] == 20 else p[EPOCHS_KEY],
                    'epochs': p[EPOCHS_KEY],
                    'seed': s
                }) for p, s in zip(points, seeds)
        ]

    return run_points


def test_tune_searches_lr_then_hyperparameter_then_epochs():
    calls = []

    def val(point, seed):
        return (80 - abs(point[LR_KEY] - 0.1) * 10 + point[TAU] +
                (point[EPOCHS_KEY] == 20))

    tuned = tune(
        fake_runs(val, calls), [0.01, 0.1, 0.3],
        10, [0, 1, 2],
        hyperparameter=(TAU, [0.6, 0.8]),
        max_doublings=2)
    assert calls == [
        [('lr0.01_ep10_tau0.6', 0), ('lr0.1_ep10_tau0.6', 0),
         ('lr0.3_ep10_tau0.6', 0)],
        [('lr0.1_ep10_tau0.8', 0)],
        [('lr0.1_ep20_tau0.8', 0)],  # best epoch 10 of 10: twice as long
        [('lr0.1_ep20_tau0.8', 1), ('lr0.1_ep20_tau0.8', 2)],
    ]  # best epoch 12 of 20: no further doubling
    assert tuned['chosen'] == {LR_KEY: 0.1, EPOCHS_KEY: 20, TAU: 0.8}
    assert [r['seed'] for r in tuned['runs']] == [0, 1, 2]
    assert len(tuned['grid']) == 5 and tuned['runs'][0] is tuned['grid'][-1]
    row = summarise_tuning(tuned, {EPOCHS_KEY: 10, LR_KEY: 0.01, TAU: 0.6})
    assert row['tuning']['own recipe'] is tuned['grid'][0]
    assert row['mAP'] == pytest.approx(val(tuned['chosen'], 0) - 1)


def test_tune_keeps_the_shorter_schedule_when_longer_is_worse():
    calls = []
    tuned = tune(
        fake_runs(lambda p, s: 90 - p[EPOCHS_KEY] / 10 + p[LR_KEY], calls),
        [0.01, 0.03],
        10, [0],
        max_doublings=3)
    assert tuned['chosen'] == {LR_KEY: 0.03, EPOCHS_KEY: 10}
    assert calls[-1] == [('lr0.03_ep20', 0)] and len(calls) == 2
    # one seed: no further runs at the chosen point
    assert tune(
        fake_runs(lambda p, s: 1., []), [0.1], 10, [0],
        max_doublings=0)['chosen'][EPOCHS_KEY] == 10


def test_choose_keeps_the_first_of_equals():
    runs = [{
        'val mAP': 1.0,
        'i': 0
    }, {
        'val mAP': 2.0,
        'i': 1
    }, {
        'val mAP': 2.0,
        'i': 2
    }]
    assert choose(runs)['i'] == 1
    with pytest.raises(ValueError):
        choose([])


def test_key_hyperparameter(tmp_path):
    cfg = Config(
        dict(
            model=dict(head=dict(loss=dict(tau=0.7))),
            tuning={TAU: [0.6, 0.7, 0.8]}))
    assert key_hyperparameter(cfg) == (TAU, [0.7, 0.6, 0.8])
    assert key_hyperparameter(Config(dict(a=1))) is None
    for tuning, match in (({
            TAU: [0.6]
    }, 'at least two'), ({
            TAU: [1, 2],
            'a': [1, 2]
    }, 'one dotted'), ({
            'model.head.loss.gamma': [1, 2]
    }, 'does not set')):
        bad = Config(dict(model=cfg.model, tuning=tuning))
        with pytest.raises(ValueError, match=match):
            key_hyperparameter(bad, 'x.py')


def test_point_name_puts_lr_and_epochs_first():
    assert point_name({TAU: 0.7, EPOCHS_KEY: 20, LR_KEY: 0.03}) == \
        'lr0.03_ep20_tau0.7'
    assert point_name({LR_KEY: 1e-5, EPOCHS_KEY: 10}) == 'lr1e-05_ep10'


def row(values, name_point=None):
    runs = [
        dict(
            dict.fromkeys(COLUMNS, 0.),
            mAP=v,
            OF1=v,
            **{
                'CF1 (paper)': v,
                'val mAP': v + 1
            }) for v in values
    ]
    result = aggregate(runs)
    result['tuning'] = dict(
        chosen=name_point or {
            LR_KEY: 0.1,
            EPOCHS_KEY: 10
        },
        grid=runs,
        **{'own recipe': runs[0]})
    return result


def test_tuned_table():
    rows = {
        'full_labels': row([96., 98.]),
        'splc': row([90., 92.], {
            LR_KEY: 0.3,
            EPOCHS_KEY: 20,
            TAU: 0.7
        }),
        'an': row([80., 82.]),
    }
    lines = tuned_table(rows, 'an', 'full_labels').splitlines()
    assert lines[0].startswith('| method | lr | epochs | key hyperparameter')
    assert lines[3] == ('| splc | 0.3 | 20 | tau 0.7 | 91.00 | 91.00 ± 1.41 '
                        '| 91.00 ± 1.41 | 91.00 ± 1.41 | +62% | 90.00 |')
    assert '| an | 0.1 | 10 | - |' in lines[4]


def test_claims_verdicts_and_markdown():
    good, bad = row([90., 91., 92.]), row([80., 81., 82.])
    close = row([89., 91., 93.])
    assert verdict(good, bad) == 'holds'
    assert verdict(bad, good) == 'does not hold'
    assert verdict(good, close) == 'within noise'
    rows = {
        'an': row([80., 81., 82.]),
        'full_labels': row([95., 96., 97.]),
        'hill': good,
        'splc': close
    }
    assert best_gap_share(rows, 'an', 'full_labels')[0] == 'hill'
    assert best_gap_share({'an': bad}, 'an', 'full_labels') is None
    text = claims_markdown({'single_positive': rows},
                           {'single_positive': 'Single positive'})
    assert '### Single positive' in text
    assert 'the two ends): **hill**, 91.00 ± 1.00 test mAP, closes 67%' in text
    assert '| hill beats an (Zhang et al. (Hill, SPLC)) | 91.00 ± 1.00 | ' \
        '81.00 ± 1.00 | holds |' in text
    assert '| hill beats splc' in text and 'within noise |' in text
    assert 'em_apl' not in text  # claims of configs not run are left out
