"""The benchmark sweep on Optuna storage (mmlml.benchmark.sweep.sweep, .worker,
.executors, .record, .docs_check): workers on one storage, a killed
worker's trial run again, the Slurm path through submitit's local
executor, pruning, the export and its reports, ledgers read in, and the
committed docs regenerated from their records. The runs are
tests/benchmark_fake_trainer.py (no training)."""
import os
import os.path as osp
import signal
import subprocess
import sys
import time

import pytest
from conftest import ROOT

from mmlml.benchmark.reports import docs_check
from mmlml.benchmark.reports.record import (LedgerError, export, import_ledger,
                                            read_json)
from mmlml.benchmark.reports.report import report_args, write_reports
from mmlml.benchmark.reports.results import COLUMNS
from mmlml.benchmark.sweep.executors import start_workers, wait_workers
from mmlml.benchmark.sweep.search import SearchRules
from mmlml.benchmark.sweep.sweep import Sweep, SweepError
from mmlml.benchmark.sweep.worker import work
from mmlml.benchmark.training.config_keys import EPOCHS_KEY, LR_KEY
from mmlml.benchmark.training.optuna_storage import StorageError

pytest.importorskip('optuna')

FAKE = osp.join(ROOT, 'tests', 'benchmark_fake_trainer.py')
AN, FULL = 'configs/demo/an.py', 'configs/demo/full_labels.py'


@pytest.fixture(autouse=True)
def fake_trainer(monkeypatch):
    """The workers of these tests (and the processes they start) run the
    stand-in trainer: set in their own environment, never stored."""
    monkeypatch.setenv('MMLML_SWEEP_TRAINER', FAKE)


def define(tmp_path,
           configs=(AN, FULL),
           prune=None,
           name='s',
           storage='sweep.db',
           replay=0,
           settings=('single_positive', ),
           **rules):
    rules = dict(
        dict(
            lrs=(0.1, 0.3),
            lr_bounds=(0.1, 0.3),
            seeds=(0, 1),
            max_doublings=0), **rules)
    sweep = Sweep(str(tmp_path / storage), name, must_exist=False)
    sweep.define(
        dict(
            name=name,
            configs=list(configs),
            settings=list(settings),
            modes=['finetune'],
            rules=SearchRules(**rules).to_dict(),
            domain=None,
            cfg_options={},
            baseline='an',
            oracle='full_labels',
            prune=prune,
            replay_unpruned=replay,
            work_dir=str(tmp_path / 'work'),
            threads=1,
            gpus_per_trial=1))
    return sweep


def define_one_run(tmp_path):
    """A sweep of one run: AN, seed 0, learning rate 0.1."""
    return define(
        tmp_path,
        configs=(AN, ),
        seeds=(0, ),
        lrs=(0.1, ),
        lr_bounds=(0.1, 0.1))


def states(sweep):
    found = {}
    for group in sweep.groups():
        for trial in sweep.trials(group):
            found.setdefault(trial.state.name,
                             []).append(trial.user_attrs['run'])
    return found


def test_the_queue_lock_is_not_the_journal_files_own(tmp_path):
    """The lock under which a worker queues runs is its own file: Optuna
    reads STORAGE.lock as its journal lock held (and every other worker
    waited 30 s for it, then removed it by force)."""
    sweep = define(tmp_path, storage='sweep.journal')
    with sweep._lock():
        assert not osp.lexists(str(tmp_path / 'sweep.journal.lock'))
        started = time.monotonic()
        assert sweep.trials(sweep.groups()[0]) == []  # reads the journal
        assert time.monotonic() - started < 5


@pytest.mark.slow
def test_two_local_workers_finish_a_sweep_and_the_export_makes_the_tables(
        tmp_path):
    sweep = define(tmp_path)
    handles = start_workers(sweep.spec, 's', 2)
    assert wait_workers(handles) == []
    done = states(sweep)
    # 2 configs x (2 learning rates + 1 more seed), each run once.
    assert set(done) == {'COMPLETE'} and len(done['COMPLETE']) == 6
    assert len(set(done['COMPLETE'])) == 6
    assert sweep.advance() == dict(queued=0, errors=[], done=True)
    data = export(sweep, 'sweep.db', dict(out='s.json', markdown='s.md'))
    rows = data['results']['finetune']['single_positive']
    assert rows['an']['tuning']['chosen'] == {EPOCHS_KEY: 10, LR_KEY: 0.1}
    assert [r['seed'] for r in rows['an']['runs']] == [0, 1]
    assert rows['an']['mAP'] == pytest.approx(80 + 0.05 - 1)
    assert len(data['trials']) == 6 and 'heartbeat' not in data['trials'][0]
    assert data['command'].startswith('python tools/benchmark.py '
                                      'configs/demo/an.py')
    assert '--storage sweep.db --study s' in data['command']
    args = report_args(data, markdown=str(tmp_path / 't.md'))
    text = write_reports(data['results'], args)
    assert '| an | 0.1 | 10 | - | 80.00 | 80.05 | 79.05 ± 0.07 |' in text
    assert '6 training runs, 1 minutes of training in all.' in text


def test_a_killed_worker_leaves_its_run_to_be_run_again(tmp_path):
    sweep = define_one_run(tmp_path)
    env = dict(os.environ, FAKE_EPOCH_SECONDS='1')
    worker = subprocess.Popen([
        sys.executable, '-m', 'mmlml.benchmark.sweep.worker', '--storage',
        sweep.spec, '--study', 's', '--heartbeat', '0.5'
    ],
                              cwd=ROOT,
                              env=env)
    for _ in range(120):
        if 'RUNNING' in states(sweep):
            break
        time.sleep(0.5)
    time.sleep(2)  # mid-run
    worker.send_signal(signal.SIGKILL)
    worker.wait()
    assert list(states(sweep)) == ['RUNNING']
    result = work(sweep.spec, 's', poll=0.2, heartbeat=0.5, grace=2)
    assert result == dict(trials=1, errors=[])
    done = states(sweep)
    assert len(done['FAIL']) == 1 and len(done['COMPLETE']) == 1
    lost = sweep.trials(sweep.groups()[0])[0]
    assert lost.user_attrs['failure'] == 'worker lost'
    assert 'val mAP' not in lost.user_attrs  # nothing half-recorded


def test_a_stopped_worker_queues_its_run_again_and_gives_back_sigterm(
        tmp_path, monkeypatch):
    """Ctrl-C or SIGTERM in a trial: the run is queued again once the
    interrupted call has unwound (a storage write it was in the middle
    of holds its transaction until then), and a worker called in a
    program's process leaves that program's SIGTERM handler as it was."""
    from mmlml.benchmark.sweep import worker
    sweep = define_one_run(tmp_path)

    def stopped(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(worker, 'run_trial', stopped)
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt):
        work(sweep.spec, 's', poll=0.2)
    assert signal.getsignal(signal.SIGTERM) is before
    trials = sweep.trials(sweep.groups()[0])
    assert [t.state.name for t in trials] == ['FAIL', 'WAITING']
    assert trials[0].user_attrs['failure'] == 'worker lost'
    assert trials[1].user_attrs['run'] == trials[0].user_attrs['run']


def test_a_sigterm_while_a_trial_is_taken_queues_its_run_again(
        tmp_path, monkeypatch):
    """SIGTERM arrives as the worker takes a trial (the moment a sweep
    tool's stop or Slurm's preemption hits when the run has just been
    marked running): it is held until the worker knows the trial, then
    stops the worker, whose run is queued again."""
    sweep = define_one_run(tmp_path)
    pop = Sweep.pop

    def pop_and_stop(self, *args):
        taken = pop(self, *args)
        if taken is not None:
            os.kill(os.getpid(), signal.SIGTERM)
        return taken

    monkeypatch.setattr(Sweep, 'pop', pop_and_stop)
    with pytest.raises(SystemExit) as stopped:
        work(sweep.spec, 's', poll=0.2)
    assert stopped.value.code == 128 + signal.SIGTERM
    assert list(states(sweep)) == ['FAIL', 'WAITING']


@pytest.mark.slow
def test_the_slurm_path_through_submitits_local_executor(tmp_path):
    pytest.importorskip('submitit')
    sweep = define(tmp_path, configs=(AN, ), seeds=(0, ))
    jobs = start_workers(
        sweep.spec,
        's',
        1,
        executor='submitit-local',
        folder=str(tmp_path / 'submitit'),
        slurm=dict(slurm_partition='ignored here', timeout_min=5))
    assert wait_workers(jobs) == []
    assert len(states(sweep)['COMPLETE']) == 2
    assert sweep.plan(sweep.groups()[0]).done


PRUNE = dict(reduction_factor=3, min_trials=2)


@pytest.mark.slow
def test_trailing_tuning_runs_are_pruned_and_never_the_seeds(tmp_path):
    # One worker runs 0.1, 0.3, then 0.5 (val 80, 78, 76). The second has
    # one run to be compared with (too few): it goes on. The third trails
    # both at the first rung, epoch 2 (AN's schedule warms up for one
    # epoch), and is stopped there: one run in 3 goes on. The replay of
    # the tuning without pruning runs 0.5 again to its end, in its own
    # folder; the other two are the pruned search's own.
    sweep = define(
        tmp_path,
        configs=(AN, ),
        seeds=(0, 1),
        lrs=(0.1, 0.3, 0.5),
        lr_bounds=(0.1, 0.5),
        prune=PRUNE,
        replay=1)
    assert work(sweep.spec, 's', poll=0.2)['errors'] == []
    group = sweep.groups()[0]
    trials = {t.user_attrs['run']: t for t in sweep.trials(group)}
    pruned = trials['finetune/single_positive/lr0.5_ep10/an/seed0']
    assert pruned.state.name == 'PRUNED'
    assert pruned.user_attrs['pruned at epoch'] == 2
    assert sorted(pruned.intermediate_values) == [1, 2]
    assert trials['finetune/single_positive/lr0.3_ep10/an/seed0'].state.name \
        == 'COMPLETE'
    seed1 = trials['finetune/single_positive/lr0.1_ep10/an/seed1']
    assert seed1.state.name == 'COMPLETE' and not seed1.intermediate_values
    (replayed, ) = sweep.trials(sweep.replay_groups()[0])
    assert replayed.state.name == 'COMPLETE'
    assert replayed.user_attrs['run'] == \
        'unpruned/finetune/single_positive/lr0.5_ep10/an/seed0'
    assert replayed.user_attrs['epochs trained'] == 10
    data = export(sweep, 'sweep.db', {})
    assert data['pruning']['trials'] == 1
    assert data['pruning']['minutes_to_the_end'] == pytest.approx(0.1)
    assert (data['pruning']['choices_compared'],
            data['pruning']['choices_same']) == (1, 1)
    assert len(data['trials']) == 4  # the replay's run is not the sweep's
    assert data['results']['finetune']['single_positive']['an']['tuning'][
        'chosen'][LR_KEY] == 0.1
    assert '--replay-unpruned 1' in data['command']


def finished(sweep, group, lr, state, value=None):
    """Record a finished tuning run of seed 0 at ``lr`` (no training)."""
    from optuna.trial import TrialState
    summary = dict(
        dict.fromkeys(COLUMNS, 70.), **{
            'val mAP': value,
            'best epoch': 3,
            'epochs': 10,
            'epochs trained': 10 if value else 2,
            'minutes': 1.0
        })
    sweep.add_trial(
        group, {
            EPOCHS_KEY: 10,
            LR_KEY: lr
        },
        0,
        state=TrialState[state],
        value=value,
        summary=summary)


def test_the_replay_finds_a_choice_that_pruning_changed(tmp_path):
    """The pruned search chose 0.1 (0.3 was pruned); replayed without
    pruning, 0.3 ends better: one choice compared, none the same. Only
    the pruned run is replayed."""
    sweep = define(
        tmp_path, configs=(AN, ), seeds=(0, ), prune=PRUNE, replay=1)
    group = sweep.groups()[0]
    finished(sweep, group, 0.1, 'COMPLETE', 70.)
    finished(sweep, group, 0.3, 'PRUNED')
    assert sweep.plan(group).chosen[LR_KEY] == 0.1
    assert sweep.advance()['queued'] == 1
    replay, trial_id, attrs = sweep.pop()
    assert replay.replay and attrs['point'][LR_KEY] == 0.3
    assert attrs['run'].startswith('unpruned/')
    sweep.finish(
        trial_id,
        'complete',
        75.,
        minutes=2.0,
        epochs=10,
        **{
            'best epoch': 9,
            'val mAP': 75.
        })
    assert sweep.advance() == dict(queued=0, errors=[], done=True)
    pruning = export(sweep, 'sweep.db', {})['pruning']
    assert (pruning['choices_compared'], pruning['choices_same']) == (1, 0)
    (choice, ) = pruning['choices']
    assert choice['pruned'][LR_KEY] == 0.1 and \
        choice['unpruned'][LR_KEY] == 0.3
    assert (choice['pruned val mAP'], choice['unpruned val mAP'],
            choice['replay minutes']) == (70., 75., 2.0)


def test_the_replayed_groups_spread_over_configs_and_settings(tmp_path):
    sweep = define(
        tmp_path,
        configs=(AN, FULL, 'configs/demo/hill.py'),
        settings=('single_positive', 'r0.5'),
        prune=PRUNE,
        replay=4)
    assert [(g.setting, g.name)
            for g in sweep.replay_groups()] == [('single_positive', 'an'),
                                                ('r0.5', 'full_labels'),
                                                ('single_positive', 'hill'),
                                                ('r0.5', 'an')]
    assert all(g.replay for g in sweep.replay_groups())
    assert define(tmp_path / 'no', replay=4).replay_groups() == []


def test_a_ledger_is_read_once_and_its_runs_are_not_trained_again(tmp_path):
    runs = {}
    for lr in (0.1, 0.3):
        for seed in ((0, 1) if lr == 0.1 else (0, )):
            point = {EPOCHS_KEY: 10, LR_KEY: lr}
            run = dict(
                dict.fromkeys(COLUMNS, 70.), **{
                    'val mAP': 80. - lr,
                    'best epoch': 4,
                    'epochs': 10,
                    'minutes': 1.0,
                    'best checkpoint': 'x.pth'
                })
            run.update(
                config='configs/demo/an.py',
                mode='finetune',
                setting='single_positive',
                seed=seed,
                point=point)
            runs[f'{lr}/{seed}'] = run
    ledger = dict(
        tuning=dict(lrs=[0.1, 0.3], seeds=[0, 1]),
        results=dict(finetune=dict(single_positive={})),
        runs=runs)
    sweep = define(tmp_path, configs=(AN, ))
    assert import_ledger(sweep, 'old.json', ledger) == 3
    assert sweep.plan(sweep.groups()[0]).done
    assert work(sweep.spec, 's', poll=0.2) == dict(trials=0, errors=[])
    with pytest.raises(SweepError, match='holds trials already'):
        import_ledger(sweep, 'old.json', ledger)
    # The export is itself a ledger for a new storage.
    data = export(sweep, 'sweep.db', {})
    again = define(tmp_path / 'again', configs=(AN, ))
    assert import_ledger(again, 'new.json', data) == 3


def test_an_imported_record_trains_the_full_settings_pruned_runs_again(
        tmp_path):
    """A record made while the ``full`` setting's tuning could be pruned:
    its import keeps the other settings' pruned runs as pruned and drops
    the full setting's, which the sweep then trains to their end (the
    honest oracle is the best on validation by construction)."""
    from optuna.trial import TrialState
    settings = ('r0.5', 'full')
    sweep = define(
        tmp_path,
        configs=(FULL, ),
        settings=settings,
        prune=PRUNE,
        seeds=(0, ))
    summary = dict(
        dict.fromkeys(COLUMNS, 70.), **{
            'val mAP': 70.,
            'best epoch': 2,
            'epochs': 10,
            'epochs trained': 10,
            'minutes': 1.0
        })
    for group in sweep.groups():
        summary.update(config=FULL, mode='finetune', setting=group.setting)
        sweep.add_trial(
            group, {
                EPOCHS_KEY: 10,
                LR_KEY: 0.1
            },
            0,
            state=TrialState.COMPLETE,
            value=70.,
            summary=summary)
        sweep.add_trial(
            group, {
                EPOCHS_KEY: 10,
                LR_KEY: 0.3
            },
            0,
            state=TrialState.PRUNED,
            summary=dict(summary, **{
                'epochs trained': 2,
                'pruned at epoch': 2
            }),
            intermediate={
                1: 50.,
                2: 55.
            })
    record = export(sweep, 'sweep.db', {})
    again = define(
        tmp_path / 'again',
        configs=(FULL, ),
        settings=settings,
        prune=PRUNE,
        seeds=(0, ))
    assert import_ledger(again, 'record.json', record) == 3
    kept = {
        g.setting: sorted(t.state.name for t in again.trials(g))
        for g in again.groups()
    }
    assert kept == {'r0.5': ['COMPLETE', 'PRUNED'], 'full': ['COMPLETE']}
    pruned = [
        t for g in again.groups() for t in again.trials(g)
        if t.state == TrialState.PRUNED
    ]
    assert pruned[0].intermediate_values == {1: 50., 2: 55.}
    # The full setting's run at lr 0.3 is queued again, to be trained
    # unpruned; the r0.5 setting needs nothing.
    assert again.advance()['queued'] == 1
    waiting = states(again)['WAITING']
    assert len(waiting) == 1 and waiting[0].startswith('finetune/full/')


def test_a_run_queued_twice_runs_once_even_from_a_stale_list(tmp_path):
    """Two workers queueing at once on a database server queue a run
    twice. A worker whose list of trials was read before another took
    the first copy must not run the second; the first copy runs even
    when a later one was taken before it."""
    from optuna.trial import TrialState
    sweep = define(tmp_path, configs=(AN, ), seeds=(0, ), lrs=(0.1, ))
    group = sweep.groups()[0]
    point = {EPOCHS_KEY: 10, LR_KEY: 0.1}
    for _ in range(4):
        sweep.add_trial(group, point, 0)
    first, second, third, fourth = sweep.trials(group)
    other = Sweep(sweep.spec, 's')
    reads = iter([[first, second]])  # read before the first was taken
    other.trials = lambda g, states=None: next(reads, None) or \
        Sweep.trials(other, g, states)
    assert sweep.pop('a')[1] == first._trial_id
    assert other.pop('b') is None  # it took the second copy, then dropped
    assert sweep.storage.set_trial_state_values(fourth._trial_id,
                                                TrialState.RUNNING)
    states = [t.state.name for t in sweep.trials(group)]
    assert states == ['RUNNING', 'FAIL', 'WAITING', 'RUNNING']
    assert sweep.trials(group)[1].user_attrs['failure'] == 'duplicate'
    # The first copy is failed as lost: the third, now first live, runs
    # although the fourth was taken before it.
    sweep.finish(first._trial_id, 'fail', failure='worker lost')
    assert sweep.pop('c')[1] == third._trial_id


def test_a_failed_run_stops_its_config_until_it_is_retried(
        tmp_path, monkeypatch):
    sweep = define_one_run(tmp_path)
    monkeypatch.setenv('FAKE_FAIL', '1')
    result = work(sweep.spec, 's', poll=0.2)
    assert result['trials'] == 1 and len(result['errors']) == 1
    assert 'lr0.1_ep10/an/seed0: benchmark_fake_trainer.py exited with 1' \
        in result['errors'][0]
    # The same again runs nothing: the failure stands until retried.
    assert work(sweep.spec, 's', poll=0.2)['trials'] == 0
    monkeypatch.delenv('FAKE_FAIL')
    assert sweep.retry_failed() == 1 and sweep.retry_failed() == 0
    assert work(sweep.spec, 's', poll=0.2) == dict(trials=1, errors=[])
    assert sweep.plan(sweep.groups()[0]).done


def test_bad_records_and_storages_are_one_clear_error(tmp_path):
    (tmp_path / 'bad.json').write_text('{"results": ')
    with pytest.raises(LedgerError, match='bad.json: not a JSON file'):
        read_json(str(tmp_path / 'bad.json'), 'a ledger', ('results', ))
    (tmp_path / 'foreign.json').write_text('{"a": 1}')
    with pytest.raises(LedgerError, match='not a ledger .no results'):
        read_json(str(tmp_path / 'foreign.json'), 'a ledger', ('results', ))
    with pytest.raises(StorageError, match='no such sweep storage'):
        Sweep(str(tmp_path / 'missing.db'), 's')
    (tmp_path / 'junk.db').write_text('not a database')
    with pytest.raises(StorageError, match='not an Optuna storage'):
        Sweep(str(tmp_path / 'junk.db'), 's')
    sweep = define(tmp_path)
    with pytest.raises(SweepError, match="no sweep named 'other'"):
        Sweep(sweep.spec, 'other')
    with pytest.raises(SweepError, match='exists with other rules'):
        define(tmp_path, seeds=(5, ))
    # A command that names another set of configs is shown the stored
    # ones and refused: it never runs a config it did not name.
    with pytest.raises(
            SweepError,
            match='configs this command does not '
            'name: configs/demo/full_labels.py'):
        define(tmp_path, configs=(AN, 'configs/demo/hill.py'))
    define(tmp_path, configs=(AN, FULL, 'configs/demo/hill.py'))  # grows
    assert Sweep(sweep.spec, 's').definition['configs'] == [
        AN, FULL, 'configs/demo/hill.py'
    ]


def test_the_committed_benchmark_docs_are_what_their_records_make():
    assert docs_check.check_docs(ROOT) == []


def test_the_worker_puts_the_first_rung_after_the_methods_warmup():
    """EM + APL changes its labels after epoch 5: its runs are first
    compared at epoch 6; a run's overrides count (a shorter warm-up)."""
    from mmlml.benchmark.sweep.sweep import Group
    from mmlml.benchmark.sweep.worker import _first_rung
    group = Group('finetune', 'single_positive', 'configs/demo/em_apl.py',
                  None)
    assert _first_rung(group, {}) == 6
    assert _first_rung(group, {'custom_hooks.0.warmup_epochs': 3}) == 4
    assert _first_rung(group._replace(config=AN), {}) == 2
