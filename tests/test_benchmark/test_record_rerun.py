"""``--check-docs --rerun N`` (mmlml/benchmark/reports/record_rerun.py):
a recorded run trained again from its stored point reproduces its
validation and test mAP to the printed digit, and a consistent
fabrication (the run's numbers raised everywhere in its record) does
not."""
import json
import os.path as osp

from mmlml.benchmark.reports.record_rerun import (rerun, rerun_records,
                                                  rerunnable_runs)
from mmlml.benchmark.sweep.sweep import Group
from mmlml.benchmark.sweep.trial_process import run_options, train_warm
from mmlml.benchmark.training.config_keys import EPOCHS_KEY, LR_KEY

DEFINITION = dict(
    domain=None, cfg_options={}, label_seed_per_seed=False, modes=['finetune'])


def _record(tmp_path, trials) -> str:
    (tmp_path / 'docs').mkdir(exist_ok=True)
    path = tmp_path / 'docs' / 'record.json'
    path.write_text(
        json.dumps(dict(sweep=DEFINITION, reports={}, trials=trials)))
    return osp.join('docs', 'record.json')


def _trial(config, **fields):
    return dict(
        dict(
            config=config,
            mode='finetune',
            setting='single_positive',
            seed=0,
            point={
                EPOCHS_KEY: 1,
                LR_KEY: 0.1
            },
            run='finetune/single_positive/lr0.1_ep1/tiny_demo/seed0',
            state='complete'), **fields)


def test_a_recorded_run_reproduces_and_a_fabricated_one_does_not(
        tiny_demo_config, tmp_path):
    config = tiny_demo_config(max_epochs=1)
    trial = _trial(config)
    group = Group('finetune', 'single_positive', config, None)
    options = run_options(DEFINITION, group, trial['point'], 0)
    work = tmp_path / 'first'
    work.mkdir()
    summary = train_warm(config, str(work), 0, options, None, None,
                         str(work / 'log.txt'), 1)
    trial.update({'val mAP': summary['val mAP'], 'mAP': summary['mAP']})
    record = _record(tmp_path, [trial])
    [run] = rerunnable_runs([record], str(tmp_path))
    assert rerun(run) == []
    # Raised in its trial (and, a fabricator would say, everywhere else):
    # training it again tells.
    fabricated = dict(trial, **{'val mAP': trial['val mAP'] + 0.5})
    record = _record(tmp_path, [fabricated])
    problems = rerun_records([record],
                             str(tmp_path),
                             1,
                             seed=0,
                             say=lambda line: None)
    assert len(problems) == 1 and 'val mAP' in problems[0], problems
    assert 'in the record' in problems[0]


def test_only_finished_one_stage_runs_are_drawn(tiny_demo_config, tmp_path):
    config = tiny_demo_config(max_epochs=1)
    second = osp.join(
        osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__)))),
        'configs', 'demo', 'pseudo_label.py')
    record = _record(tmp_path, [
        _trial(config),
        _trial(config, state='pruned'),
        _trial(second),
    ])
    runs = rerunnable_runs([record], str(tmp_path))
    assert [r.trial['config'] for r in runs] == [config]


def test_a_stale_record_is_named_and_not_drawn(tiny_demo_config, tmp_path,
                                               monkeypatch):
    from mmlml.benchmark.reports import record_rerun
    config = tiny_demo_config(max_epochs=1)
    record = _record(tmp_path, [_trial(config, **{'val mAP': 1., 'mAP': 1.})])
    monkeypatch.setitem(record_rerun.STALE_RECORDS, record, 'measured')
    said = []
    assert rerun_records([record], str(tmp_path), 1, seed=0,
                         say=said.append) == []
    assert any(record in line and 'measured' in line for line in said)
    assert 'rerunning 0 recorded runs' in said[-1]
