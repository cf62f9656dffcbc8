"""The search rules of the benchmark sweep (mmlml.benchmark.sweep.search) and
the papers' claims checked against its results
(mmlml.benchmark.reports.paper_claims)."""
import pytest
from mmengine.config import Config

from mmlml.benchmark.reports.paper_claims import (best_gap_share,
                                                  claims_markdown, verdict)
from mmlml.benchmark.reports.results import (COLUMNS, aggregate,
                                             summarise_tuning, tuned_table)
from mmlml.benchmark.sweep.search import (SearchRules, choose,
                                          key_hyperparameter, next_lr, plan,
                                          point_name)
from mmlml.benchmark.training.config_keys import EPOCHS_KEY, LR_KEY

TAU = 'model.head.loss.tau'


def run(point, seed, val, state='complete'):
    """A finished run whose best epoch is the last unless it has 20
    epochs."""
    return dict(
        dict.fromkeys(COLUMNS, 0.),
        mAP=val(point, seed) - 1,
        point=dict(point),
        seed=seed,
        state=state,
        **{
            'val mAP': val(point, seed),
            'best epoch': 12 if point[EPOCHS_KEY] == 20 else point[EPOCHS_KEY],
            'epochs': point[EPOCHS_KEY]
        })


def drive(val, rules, epochs=10, lr=0.1, hyperparameter=None, prune=()):
    """Replay :func:`plan` as workers would: run what it needs, round by
    round; returns the final plan and the rounds (``[(point name, seed)]``).
    Runs whose point name is in ``prune`` end pruned."""
    records, rounds = [], []
    for _ in range(50):
        current = plan(records, rules, epochs, lr, hyperparameter)
        if current.done:
            return current, rounds
        assert current.needed and not current.waiting
        rounds.append([(point_name(p), s) for p, s in current.needed])
        for point, seed in current.needed:
            state = 'pruned' if point_name(point) in prune else 'complete'
            records.append(run(point, seed, val, state))
    raise AssertionError('the plan does not end')


def test_plan_searches_lr_then_hyperparameter_then_epochs():

    def val(point, seed):
        return (80 - abs(point[LR_KEY] - 0.1) * 10 + point[TAU] +
                (point[EPOCHS_KEY] == 20))

    rules = SearchRules(lrs=(0.01, 0.1, 0.3), max_doublings=2)
    done, rounds = drive(val, rules, hyperparameter=(TAU, [0.6, 0.8]))
    assert rounds == [
        [('lr0.01_ep10_tau0.6', 0), ('lr0.1_ep10_tau0.6', 0),
         ('lr0.3_ep10_tau0.6', 0)],
        [('lr0.1_ep10_tau0.8', 0)],
        [('lr0.1_ep20_tau0.8', 0)],  # best epoch 10 of 10: twice as long
        [('lr0.1_ep20_tau0.8', 1), ('lr0.1_ep20_tau0.8', 2)],
    ]  # best epoch 12 of 20: no further doubling
    assert done.chosen == {LR_KEY: 0.1, EPOCHS_KEY: 20, TAU: 0.8}
    assert [r['seed'] for r in done.runs] == [0, 1, 2]
    assert len(done.grid) == 5
    assert done.runs[0]['point'] == done.grid[-1]['point']
    tuned = dict(grid=done.grid, chosen=done.chosen, runs=done.runs)
    row = summarise_tuning(tuned, {EPOCHS_KEY: 10, LR_KEY: 0.01, TAU: 0.6})
    assert row['tuning']['own recipe'] == done.grid[0]
    assert row['mAP'] == pytest.approx(val(done.chosen, 0) - 1)


def test_the_grid_extends_past_an_edge_within_its_bounds():
    # Best at the top edge: 1.0 is tried next, and it is better still, but
    # the bounds stop there.
    def rising(point, seed):
        return point[LR_KEY]

    done, rounds = drive(rising,
                         SearchRules(lrs=(0.03, 0.1, 0.3), seeds=(0, )))
    assert rounds[1:] == [[('lr1_ep10', 0)], [('lr1_ep20', 0)]]
    assert done.chosen == {LR_KEY: 1.0, EPOCHS_KEY: 10}  # a tie: the first
    # Best at the bottom edge: down the ladder to the lower bound.
    done, rounds = drive(
        lambda p, s: -p[LR_KEY],
        SearchRules(
            lrs=(0.01, 0.03),
            lr_bounds=(0.003, 1.0),
            seeds=(0, ),
            max_doublings=0))
    assert rounds == [[('lr0.01_ep10', 0), ('lr0.03_ep10', 0)],
                      [('lr0.003_ep10', 0)]]
    assert done.chosen[LR_KEY] == 0.003
    # Inside the grid: no extension.
    done, rounds = drive(lambda p, s: -abs(p[LR_KEY] - 0.1),
                         SearchRules(seeds=(0, ), max_doublings=0))
    assert len(rounds) == 1 and done.chosen[LR_KEY] == 0.1


def test_next_lr_walks_the_ladder():
    assert next_lr(0.3, up=True) == 1.0 and next_lr(1.0, up=True) == 3.0
    assert next_lr(0.01, up=False) == 0.003
    assert next_lr(0.003, up=False) == 0.001
    assert next_lr(0.05, up=True) == 0.1 and next_lr(0.05, up=False) == 0.03


def test_a_pruned_run_is_never_chosen_and_pending_runs_are_waited_for():

    def val(point, seed):
        return point[LR_KEY]  # the best would be 0.3

    rules = SearchRules(
        lrs=(0.1, 0.3), lr_bounds=(0.1, 0.3), seeds=(0, 1), max_doublings=0)
    done, _ = drive(val, rules, prune=('lr0.3_ep10', ))
    assert done.chosen[LR_KEY] == 0.1
    assert [r['state'] for r in done.grid] == ['complete', 'pruned']
    pending = [
        dict(run({
            EPOCHS_KEY: 10,
            LR_KEY: 0.1
        }, 0, val), state='pending')
    ]
    current = plan(pending, rules, 10, 0.1)
    assert current.waiting and current.needed == [({
        EPOCHS_KEY: 10,
        LR_KEY: 0.3
    }, 0)]
    # A duplicate record of a run counts once; the finished one wins.
    records = [
        dict(pending[0]),
        run({
            EPOCHS_KEY: 10,
            LR_KEY: 0.1
        }, 0, val),
        run({
            EPOCHS_KEY: 10,
            LR_KEY: 0.3
        }, 0, val)
    ]
    assert not plan(records, rules, 10, 0.1).waiting


def test_without_tuning_every_seed_runs_the_own_recipe():
    done, rounds = drive(
        lambda p, s: 1.0, SearchRules(seeds=(0, 1), tune=False), lr=0.05)
    assert rounds == [[('lr0.05_ep10', 0), ('lr0.05_ep10', 1)]]
    assert done.chosen == {EPOCHS_KEY: 10, LR_KEY: 0.05} and not done.grid


def test_rules_are_checked_and_recorded():
    rules = SearchRules(lrs=(0.1, ), seeds=(3, ))
    assert SearchRules.from_dict(rules.to_dict()) == rules
    for bad in (dict(seeds=()), dict(lrs=(-1., )), dict(max_doublings=-1),
                dict(lr_bounds=(1., 0.1))):
        with pytest.raises(ValueError):
            SearchRules(**bad)


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
    # The first seed's validation mAP, then the mean over the seeds.
    assert lines[3] == ('| splc | 0.3 | 20 | tau 0.7 | 91.00 | 92.00 '
                        '| 91.00 ± 1.41 | 91.00 ± 1.41 | 91.00 ± 1.41 '
                        '| +62% | 90.00 |')
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
    assert ('the two ends; mean val mAP 92.00): **hill**, 91.00 ± 1.00 test '
            'mAP, closes 67% of the an (81.00 ± 1.00) → old oracle '
            'full_labels (96.00 ± 1.00) gap') in text
    assert '| hill beats an (Zhang et al. (Hill, SPLC)) | 91.00 ± 1.00 | ' \
        '81.00 ± 1.00 | holds |' in text
    assert '| hill beats splc' in text and 'within noise |' in text
    assert 'em_apl' not in text  # claims of configs not run are left out


def test_claims_from_one_seed_are_marked():
    """One seed has no spread: a 0.1 lead is no evidence, and says so."""
    one, other = row([80.1]), row([80.])
    assert verdict(one, other) == 'holds (one seed)'
    assert verdict(other, one) == 'does not hold (one seed)'
    assert verdict(one, one) == 'tie (one seed)'
    assert verdict(one, row([70., 71., 72.])) == 'holds (one seed)'
    rows = {'an': other, 'full_labels': row([95.]), 'hill': one}
    text = claims_markdown({'r0.5': rows}, {})
    assert '| 80.10 ± n/a | 80.00 ± n/a | holds (one seed) |' in text
