"""The same-head oracle (mmlml.benchmark.reports.oracle): each method's
share of the gap from AN to the best run on all labels with its own kind
of head (pooled linear or BoostLU's activation map), beside its share of
the gap to the honest oracle; n/a, said so, where the record has no
setting ``full`` or no run on all labels with that head. The kind of a
method's head is read from its config."""
import glob
import math
import os.path as osp
import re

import pytest
from conftest import ROOT
from test_honest_oracle import _shifted
from test_search import row

from mmlml.benchmark.reports.heads import (ACTIVATION_MAP, POOLED_LINEAR,
                                           config_head, record_heads)
from mmlml.benchmark.reports.oracle import (gap_ends, head_oracles,
                                            per_head_ends)
from mmlml.benchmark.reports.paper_claims import claims_markdown
from mmlml.benchmark.reports.report import report, report_args
from mmlml.benchmark.reports.results import markdown_table, tuned_table
from mmlml.benchmark.sweep.search import SearchRules
from mmlml.benchmark.sweep.settings import SETTING_TITLES

#: Two kinds of head: BoostLU's activation map, every other one linear.
HEADS = {
    'an': POOLED_LINEAR,
    'em': POOLED_LINEAR,
    'hill': POOLED_LINEAR,
    'boostlu_ll_r': ACTIVATION_MAP,
}


def _mode_results():
    """Single positive and ``full``: on all labels the activation-map
    head is best (the honest oracle, 90), the best linear head on
    validation is ``em`` (80; ``hill`` leads on test, not on
    validation)."""
    return {
        'single_positive': {
            'boostlu_ll_r': row([64., 65., 66.]),
            'em': row([59., 60., 61.]),
            'hill': row([54., 55., 56.]),
            'an': row([49., 50., 51.]),
        },
        'full': {
            'boostlu_ll_r': _shifted([89., 90., 91.], 5.),
            'em': _shifted([79., 80., 81.], 3.),
            'hill': _shifted([84., 85., 86.], -10.),
            'an': _shifted([69., 70., 71.], 0.),
        },
    }


def test_the_same_head_oracle_is_the_best_full_run_with_that_head():
    results = _mode_results()
    assert head_oracles(results['full'], HEADS) == {
        POOLED_LINEAR: 'em',
        ACTIVATION_MAP: 'boostlu_ll_r'
    }
    per_head = per_head_ends(results, 'single_positive', 'an', 'full_labels',
                             HEADS)
    assert {
        k: v.oracle
        for k, v in per_head.items()
    } == {
        POOLED_LINEAR: 'em',
        ACTIVATION_MAP: 'boostlu_ll_r'
    }
    ends = gap_ends(results, 'single_positive', 'an', 'full_labels', HEADS)
    assert ends.honest and ends.oracle == 'boostlu_ll_r'
    rows = results['single_positive']
    # em (60): (60 - 50) / (90 - 50) = 25% of the honest gap, and
    # (60 - 50) / (80 - 50) = 33% of the gap to the best linear head.
    assert ends.share(rows['em'], rows) == pytest.approx(0.25)
    assert ends.head_share('em', rows) == pytest.approx(1 / 3)
    assert ends.head_ends('em').oracle == 'em'
    # BoostLU's same-head oracle is the honest one.
    assert ends.head_share('boostlu_ll_r', rows) == pytest.approx(
        ends.share(rows['boostlu_ll_r'], rows))
    # No heads given: none reported.
    plain = gap_ends(results, 'single_positive', 'an', 'full_labels')
    assert plain.heads is None and plain.per_head is None
    assert 'same-head' not in tuned_table(rows, ends=plain)


def test_a_table_gives_both_shares_and_names_both_oracles():
    results = _mode_results()
    rows = results['single_positive']
    ends = gap_ends(results, 'single_positive', 'an', 'full_labels', HEADS)
    lines = tuned_table(rows, ends=ends).splitlines()
    assert lines[0].endswith('| an → honest oracle boostlu_ll_r gap closed '
                             '| an → same-head oracle gap closed '
                             '| own recipe test mAP |')
    assert lines[3] == ('| em | 0.1 | 10 | - | 60.00 | 61.00 | 60.00 ± 1.00 '
                        '| 60.00 ± 1.00 | 60.00 ± 1.00 | +25% | +33% '
                        '| 59.00 |')
    assert lines[4].split(' | ')[-3:-1] == ['+12%', '+17%']  # hill, 55
    assert lines[5].split(' | ')[-3:-1] == ['+0%', '+0%']  # an
    note = lines[-1]
    assert ('Pooled linear head (all but boostlu_ll_r): **em**, 80.00 ± '
            '1.00 test mAP.') in note
    assert ('Activation map head (boostlu_ll_r): **boostlu_ll_r**, 90.00 ± '
            '1.00 test mAP (also the honest oracle).') in note
    assert '(mAP − mAP of an) / (mAP of the same-head oracle − mAP of an)' \
        in note
    # The fixed recipe's table too.
    fixed = markdown_table(rows, ends=ends).splitlines()
    assert fixed[0].endswith('| an → same-head oracle gap closed |')
    assert fixed[3].endswith('| +25% | +33% |')


def test_without_full_or_without_a_heads_full_run_the_share_is_na():
    results = _mode_results()
    rows = dict(results['single_positive'], full_labels=row([79., 80., 81.]))
    ends = gap_ends({'single_positive': rows}, 'single_positive', 'an',
                    'full_labels', HEADS)
    assert not ends.honest and ends.per_head == {}
    assert math.isnan(ends.head_share('em', rows))
    lines = tuned_table(rows, ends=ends).splitlines()
    assert lines[0].endswith('| an → old oracle full_labels gap closed '
                             '| an → same-head oracle gap closed '
                             '| own recipe test mAP |')
    assert all(line.split(' | ')[-2] == 'n/a' for line in lines[2:-2])
    assert lines[-1] == ('Same-head gap closed: n/a, this record has no '
                         'setting `full` (no method trained on all labels), '
                         'so no same-head oracle.')
    text = claims_markdown({'single_positive': rows},
                           SETTING_TITLES,
                           heads=HEADS)
    assert 'Same-head gap closed: n/a (the record has no setting full).' \
        in text
    # No activation-map head on all labels; a method of unknown head.
    results['full'].pop('boostlu_ll_r')
    rows = dict(results['single_positive'], mystery=row([52., 53., 54.]))
    ends = gap_ends(
        dict(results, single_positive=rows), 'single_positive', 'an',
        'full_labels', HEADS)
    assert ends.oracle == 'em' and set(ends.per_head) == {POOLED_LINEAR}
    table = tuned_table(rows, ends=ends)
    assert ('Activation map head (boostlu_ll_r): n/a, no run on all labels '
            'with this head.') in table
    assert 'No config to read the head of mystery from: n/a.' in table
    assert '(all but boostlu_ll_r, mystery)' in table
    assert re.search(r'\| boostlu_ll_r \|.* \| n/a \| 64\.00 \|', table)


def test_the_claims_state_the_same_head_share():
    results = _mode_results()
    text = claims_markdown(results, SETTING_TITLES, heads=HEADS)
    assert ('Best method on validation (of the 3 run in this setting besides '
            'the two ends; mean val mAP 66.00): **boostlu_ll_r**, 65.00 ± '
            '1.00 test mAP, closes 38% of the an (50.00 ± 1.00) → honest '
            'oracle boostlu_ll_r (90.00 ± 1.00) gap. It closes 38% of the an '
            '→ same-head oracle boostlu_ll_r (90.00 ± 1.00, activation map '
            'head) gap.') in text
    assert ('Same-head oracles (the best on validation per head): pooled '
            'linear head **em**, 80.00 ± 1.00 test mAP; activation map head '
            '**boostlu_ll_r**, 90.00 ± 1.00 test mAP.') in text
    assert 'same-head' not in claims_markdown(results, SETTING_TITLES)


def test_the_heads_are_read_from_the_configs():
    """Every demo config: an activation-map head where it names
    BoostLUClsHead (whose head it is), a pooled linear one elsewhere
    (LASD-CR's ConsistencyClassifier included)."""
    configs = sorted(glob.glob(osp.join(ROOT, 'configs', 'demo', '*.py')))
    heads = record_heads(configs)
    assert len(heads) == len(configs)
    boostlu = {
        osp.splitext(osp.basename(c))[0]
        for c in configs if 'BoostLUClsHead' in open(c).read()
    }
    assert {'boostlu_an', 'boostlu_ll_r'} <= boostlu
    assert {n for n, k in heads.items() if k == ACTIVATION_MAP} == boostlu
    assert heads['lasd_cr'] == heads['em'] == POOLED_LINEAR
    # In a record's domain, relative to the repository; no such file: None.
    assert config_head('configs/demo/boostlu_an.py',
                       'photo_canvases_heldout') == ACTIVATION_MAP
    assert config_head('configs/demo/no_such_method.py') is None


def test_a_record_reports_both_shares():
    results = _mode_results()
    data = dict(
        sweep=dict(
            configs=[
                'configs/demo/an.py', 'configs/demo/em.py',
                'configs/demo/hill.py', 'configs/demo/boostlu_ll_r.py'
            ],
            modes=['finetune'],
            settings=['single_positive', 'full'],
            rules=SearchRules().to_dict()),
        results=dict(finetune=results))
    args = report_args(data)
    assert args.heads == HEADS
    tables = report(dict(finetune=results), args)
    assert '| +25% | +33% |' in tables
    assert 'Pooled linear head (all but boostlu_ll_r): **em**' in tables


def test_tables_order_by_validation_and_name_an_alias_once():
    """A table lists the methods by mean validation mAP (what every
    choice reads), not by test mAP, and an alias (zlpr = opml) is one row
    that names both."""
    from mmlml.benchmark.reports.results import alias_names, by_validation

    def row(val, test):
        return {'mAP': test, 'runs': [{'val mAP': val}, {'val mAP': val}]}

    rows = {
        'hill': row(50., 60.),
        'em': row(55., 58.),
        'opml': row(52., 59.),
        'zlpr': row(52., 59.)
    }
    assert list(by_validation(rows)) == ['em', 'opml', 'hill']
    assert alias_names(rows) == {'opml': 'opml (= zlpr)'}
    # An alias whose method has no row stays, under its own name.
    alone = {'zlpr': row(52., 59.), 'em': row(55., 58.)}
    assert list(by_validation(alone)) == ['em', 'zlpr']
    assert alias_names(alone) == {}
