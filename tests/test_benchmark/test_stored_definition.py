"""A sweep's storage holds data, never code (mmlml.benchmark
.stored_definition): a worker runs its own checkout's trainer, only the
configs its checkout or its command names, unchanged since the sweep was
defined, and only trials whose point and folder are the sweep's own."""
import json
import os.path as osp

import pytest
from conftest import ROOT
from test_sweep import AN, FAKE, define, states

from mmlml.benchmark.sweep.sweep import Sweep, SweepError
from mmlml.benchmark.sweep.worker import work
from mmlml.benchmark.training.config_keys import EPOCHS_KEY, LR_KEY

pytest.importorskip('optuna')


@pytest.fixture(autouse=True)
def fake_trainer(monkeypatch):
    monkeypatch.setenv('MMLML_SWEEP_TRAINER', FAKE)


def _one_run(tmp_path, configs=(AN, )):
    return define(
        tmp_path,
        configs=configs,
        seeds=(0, ),
        lrs=(0.1, ),
        lr_bounds=(0.1, 0.1))


def _own_config(tmp_path):
    """A user's config outside the checkout."""
    mine = tmp_path / 'mine.py'
    mine.write_text(f'_base_ = [{osp.join(ROOT, AN)!r}]\n')
    return mine


def _tamper(sweep, **changes):
    """Rewrite the stored definition as someone who can write the storage
    would."""
    study_id = sweep.storage.get_study_id_from_name(sweep.name)
    definition = dict(
        sweep.storage.get_study_user_attrs(study_id)['definition'], **changes)
    sweep.storage.set_study_user_attr(study_id, 'definition', definition)
    return definition


def test_a_stored_trainer_is_never_run(tmp_path):
    """A `trainer` written into the storage is ignored: the worker runs its
    own checkout's trainer (here the test's stand-in, from the worker's own
    environment), and the payload never runs."""
    sweep = _one_run(tmp_path)
    marker = tmp_path / 'ran'
    evil = tmp_path / 'evil.py'
    evil.write_text(f'open({str(marker)!r}, "w").write("x")\n')
    _tamper(sweep, trainer=str(evil))
    assert work(sweep.spec, 's', poll=0.2)['errors'] == []
    assert not marker.exists()
    assert len(states(sweep)['COMPLETE']) == 1


def test_a_config_outside_the_checkout_runs_only_if_named(tmp_path):
    """A config that the storage names outside the checkout's configs/
    is refused (Config.fromfile would execute it) unless the command names
    it; the command's own configs are trusted."""
    marker = tmp_path / 'ran'
    evil = tmp_path / 'evil.py'
    evil.write_text(f"_base_ = [{osp.join(ROOT, AN)!r}]\n"
                    f'open({str(marker)!r}, "w").write("x")\n')
    sweep = _one_run(tmp_path)
    definition = _tamper(sweep, configs=[str(evil)])
    definition['digests'][str(evil)] = {
        str(evil): '0' * 64  # the attacker can record any digest
    }
    _tamper(sweep, digests=definition['digests'])
    with pytest.raises(
            SweepError,
            match="outside this checkout's configs/ "
            'and the command did not name it'):
        Sweep(sweep.spec, 's').groups()
    assert not marker.exists()
    # Named by the command (its own file): it may run.
    mine = _own_config(tmp_path)
    ok = _one_run(tmp_path / 'b', configs=(str(mine), ))
    assert Sweep(ok.spec, 's', trusted=[str(mine)]).groups()
    with pytest.raises(SweepError, match='did not name it'):
        Sweep(ok.spec, 's').definition


def test_a_config_changed_since_the_definition_is_refused(tmp_path):
    mine = _own_config(tmp_path)
    sweep = _one_run(tmp_path, configs=(str(mine), ))
    mine.write_text(mine.read_text() + '\n# changed\n')
    with pytest.raises(
            SweepError, match='changed since the sweep was '
            'defined'):
        Sweep(sweep.spec, 's', trusted=[str(mine)]).definition


@pytest.mark.parametrize(
    'changes, message',
    [(dict(digests=None), 'records no digests'),
     (dict(cfg_options={'custom_imports.imports': ['os']}),
      'must set plain config keys'),
     (dict(domain='../../tmp/evil'), 'must be a domain of this checkout'),
     (dict(prune=dict(type='Evil')), '`prune`'),
     (dict(prune=dict(n_startup_trials=2, warmup=0.3)),
      'earlier median rule is continued by importing its record'),
     (dict(replay_unpruned='3'), '`replay_unpruned`'),
     (dict(gpus_per_trial='8; rm'), '`gpus_per_trial`'),
     (dict(threads=0), '`threads`')],
    ids=[
        'digests', 'custom-imports', 'domain', 'prune', 'median-prune',
        'replay', 'gpus', 'threads'
    ])
def test_stored_fields_are_checked_as_data(tmp_path, changes, message):
    sweep = _one_run(tmp_path)
    _tamper(sweep, **changes)
    with pytest.raises(SweepError, match=message):
        Sweep(sweep.spec, 's').definition


@pytest.mark.parametrize(
    'attrs, message',
    [(dict(run='/tmp/elsewhere'), 'is not the one its point and seed make'),
     (dict(point={
         LR_KEY: 0.1,
         EPOCHS_KEY: 10,
         'load_from': '/tmp/evil.pth'
     }), "sets load_from='/tmp/evil.pth', outside the sweep's search"),
     (dict(point={
         LR_KEY: 'lr',
         EPOCHS_KEY: 10
     }), 'outside the sweep'), (dict(seed='0'), 'seed must be an integer')],
    ids=['run', 'point-key', 'point-value', 'seed'])
def test_a_tampered_trial_fails_without_running(tmp_path, attrs, message):
    sweep = _one_run(tmp_path)
    sweep.advance()
    group = sweep.groups()[0]
    trial = sweep.trials(group)[0]
    for key, value in attrs.items():
        sweep.storage.set_trial_user_attr(trial._trial_id, key, value)
    result = work(sweep.spec, 's', poll=0.2, max_trials=1)
    assert result['trials'] == 1
    failed = sweep.storage.get_trial(trial._trial_id)
    assert failed.state.name == 'FAIL'
    assert message in failed.user_attrs['failure']
    assert not osp.exists('/tmp/elsewhere/demo.json')
    assert not (tmp_path / 'work' / 'finetune').exists() or not any(
        (tmp_path / 'work').rglob('demo.json'))
    json.dumps(failed.user_attrs)  # plain data


@pytest.mark.parametrize('spec', ['sqlite://', 'sqlite:///:memory:'])
def test_in_memory_storages_are_refused(spec):
    from mmlml.benchmark.training.optuna_storage import (StorageError,
                                                         open_storage)
    with pytest.raises(StorageError, match='an in-memory database'):
        open_storage(spec)


def test_a_storage_whose_tables_another_process_creates_opens(
        tmp_path, monkeypatch):
    """Two processes opening a new storage at once (a tool creating it, a
    --join or a reader): the second fails on a table the first has just
    created, and opens it once the first is done."""
    import optuna

    from mmlml.benchmark.training import optuna_storage
    calls = []
    real = optuna.storages.RDBStorage

    def racing(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError('(sqlite3.OperationalError) table '
                               'trial_heartbeats already exists')
        return real(*args, **kwargs)

    monkeypatch.setattr(optuna.storages, 'RDBStorage', racing)
    monkeypatch.setattr(optuna_storage.time, 'sleep', lambda s: None)
    assert optuna_storage.open_storage(str(tmp_path / 's.db')) is not None
    assert len(calls) == 2


def _foreign_db(path):
    import sqlite3
    with sqlite3.connect(str(path)) as db:
        db.execute('CREATE TABLE accounts (name TEXT)')
        db.execute("INSERT INTO accounts VALUES ('mine')")


@pytest.mark.parametrize(
    'name, write, message',
    [('theirs.db', _foreign_db, "another application's SQLite database "
      r'\(tables: accounts\)'),
     ('empty.db', lambda p: p.write_bytes(b''), 'an empty file'),
     ('notes.journal', lambda p: p.write_text('my notes\n'),
      'not an Optuna journal')],
    ids=['foreign-sqlite', 'empty', 'text-journal'])
def test_a_file_that_is_no_sweep_storage_is_left_untouched(
        tmp_path, name, write, message):
    """--join, a new sweep or the pruning hook on a file that is not an
    Optuna storage: refused before anything is written to it."""
    from mmlml.benchmark.training.optuna_storage import StorageError
    path = tmp_path / name
    write(path)
    before = path.read_bytes()
    for must_exist in (True, False):
        with pytest.raises(StorageError, match=message):
            Sweep(str(path), 's', must_exist=must_exist)
    assert path.read_bytes() == before


def test_join_prints_what_it_will_run(tmp_path, capsys):
    """--join shows the configs it runs (real path, digest), where the
    runs go and the overrides, before any worker starts; a config outside
    configs/ that the storage names but the command does not is refused."""
    import sys
    sys.path.insert(0, osp.join(ROOT, 'tools'))
    import benchmark as tool
    sweep = _one_run(tmp_path)
    digest = Sweep(sweep.spec, 's').definition['digests'][AN][AN]
    tool.main(
        ['--join', '--storage', sweep.spec, '--study', 's', '--workers', '0'])
    err = capsys.readouterr().err
    assert 'joining sweep s' in err
    assert f'config {osp.join(ROOT, AN)} (sha256 {digest[:12]};' in err
    assert f'runs in {tmp_path / "work"}' in err
    mine = _own_config(tmp_path)
    other = _one_run(tmp_path / 'o', configs=(str(mine), ))
    with pytest.raises(SweepError, match='did not name it'):
        tool.main([
            '--join', '--storage', other.spec, '--study', 's', '--workers', '0'
        ])
    tool.main([
        str(mine), '--join', '--storage', other.spec, '--study', 's',
        '--workers', '0'
    ])
    assert str(mine) in capsys.readouterr().err


def test_join_never_writes_over_a_config_of_the_sweep(tmp_path, monkeypatch):
    """With --join the stored configs are inputs too: --out naming one is
    refused even with --force (here a checkout whose configs/ is in
    tmp_path, so that nothing of the real checkout is at stake)."""
    import sys
    sys.path.insert(0, osp.join(ROOT, 'tools'))
    import benchmark as tool

    from mmlml.benchmark.sweep import stored_definition
    monkeypatch.setattr(stored_definition, 'REPO_ROOT', str(tmp_path))
    (tmp_path / 'configs').mkdir()
    stored = _own_config(tmp_path / 'configs')
    before = stored.read_text()
    sweep = _one_run(tmp_path, configs=(str(stored), ))
    with pytest.raises(ValueError, match='also an input'):
        tool.main([
            '--join', '--storage', sweep.spec, '--study', 's', '--workers',
            '0', '--out',
            str(stored), '--force'
        ])
    assert stored.read_text() == before


def test_a_base_changed_since_the_definition_is_refused(tmp_path):
    """A method config of tools/select_method.py is a child of the user's
    config: editing that base after the definition changes what the runs
    train, so it counts as a change of the config."""
    user = tmp_path / 'user.py'
    user.write_text(f'_base_ = [{osp.join(ROOT, AN)!r}]\n')
    child = tmp_path / 'configs' / 'hill.py'
    child.parent.mkdir()
    child.write_text("_base_ = ['../user.py']\n")
    sweep = _one_run(tmp_path, configs=(str(child), ))
    user.write_text(user.read_text() + 'train_cfg = dict(max_epochs=99)\n')
    with pytest.raises(
            SweepError,
            match=f'{user} \\(read for config {child}\\) changed since'):
        Sweep(sweep.spec, 's', trusted=[str(child)]).definition
