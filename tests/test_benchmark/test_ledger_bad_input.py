"""--import-ledger on malformed ledgers: one line naming the file and what
is wrong, before anything is defined or trained (was: deep tracebacks)."""
import copy
import json
import os.path as osp
import subprocess
import sys

import pytest
from conftest import ROOT

from mmlml.benchmark.reports.record import (LedgerError, check_ledger,
                                            definition_from_ledger)
from mmlml.benchmark.reports.results import COLUMNS
from mmlml.benchmark.training.config_keys import EPOCHS_KEY, LR_KEY

RUN = dict(
    dict.fromkeys(COLUMNS, 70.), **{
        'val mAP': 80.,
        'best epoch': 4,
        'epochs': 10,
        'minutes': 1.0,
        'best checkpoint': 'x.pth',
        'config': 'configs/demo/an.py',
        'mode': 'finetune',
        'setting': 'single_positive',
        'seed': 0,
        'point': {
            EPOCHS_KEY: 10,
            LR_KEY: 0.1
        }
    })
GOOD = dict(
    tuning=dict(lrs=[0.1], seeds=[0]),
    results=dict(finetune=dict(single_positive={})),
    runs={'0.1/0': RUN},
    command='python tools/benchmark.py configs/demo/an.py --cfg-options '
    'train_cfg.max_epochs=2')


def _without(key):
    run = dict(RUN)
    del run[key]
    return dict(GOOD, runs={'r': run})


def _with(**changes):
    return dict(GOOD, runs={'r': dict(RUN, **changes)})


CASES = {
    'results-a-list': (dict(GOOD, results=[]), '`results` must map'),
    'missing-seed': (_without('seed'), 'has no seed'),
    'string-val-map':
    (_with(**{'val mAP': 'high'}), '`val mAP` must be a finite number'),
    'nan-val-map':
    (_with(**{'val mAP': float('nan')}), '`val mAP` must be a finite number'),
    'missing-rules': (dict(GOOD, sweep={'name': 's'}), 'has no `rules`'),
    'no-test-metrics': (_without('mAP'), 'has no mAP'),
    'unparsable-command': (dict(GOOD,
                                command='python "unclosed'), 'does not parse'),
    'bad-cfg-option': (dict(GOOD, command='x --cfg-options novalue'),
                       "'novalue' is not KEY=VALUE"),
    'runs-a-list': (dict(GOOD, runs=[RUN]), '`runs` must map'),
    'row-without-runs':
    (dict(GOOD, results=dict(finetune=dict(single_positive=dict(an={})))),
     'a row with its `runs`'),
}


def test_a_good_ledger_passes():
    check_ledger('good.json', copy.deepcopy(GOOD))
    assert definition_from_ledger('good.json',
                                  GOOD)['configs'] == ['configs/demo/an.py']


@pytest.mark.parametrize('case', sorted(CASES))
def test_a_malformed_ledger_is_one_clear_error(case):
    ledger, message = CASES[case]
    with pytest.raises(LedgerError, match=message) as info:
        definition_from_ledger('old.json', ledger)
    assert str(info.value).startswith('old.json: not a ledger')
    assert '\n' not in str(info.value)


def test_the_tool_says_it_in_one_line(tmp_path):
    path = tmp_path / 'old.json'
    path.write_text(json.dumps(CASES['nan-val-map'][0]).replace('NaN', 'NaN'))
    result = subprocess.run([
        sys.executable,
        osp.join(ROOT, 'tools', 'benchmark.py'), '--import-ledger',
        str(path), '--storage',
        str(tmp_path / 's.db'), '--workers', '0'
    ],
                            capture_output=True,
                            text=True)
    assert result.returncode != 0
    assert result.stderr.strip().splitlines()[-1:] == [
        f'[benchmark] {path}: not a ledger of tools/benchmark.py: run 0 '
        '(configs/demo/an.py, seed 0): `val mAP` must be a finite number, '
        'got nan'
    ]
    assert not (tmp_path / 's.db').exists()
