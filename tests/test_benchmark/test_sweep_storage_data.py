"""Who can write a sweep's storage can stop the sweep, not run code or write
outside its work directory (mmlml.benchmark.sweep.sweep_definition,
.trial_record, .stored_definition): every stored field is checked by its
declaration on every read, a first stage's folder and checkpoint are
derived, the digests cover every file MMEngine reads for a config, and a
new storage opens for two commands creating it at once."""
import multiprocessing
import os
import os.path as osp
import signal
import subprocess
import sys
import time

import pytest
from conftest import ROOT
from test_stored_definition import _one_run, _tamper
from test_sweep import AN, FAKE, define, states

from mmlml.benchmark.sweep import first_stage
from mmlml.benchmark.sweep.stored_definition import (config_digests,
                                                     config_files,
                                                     sweep_digests)
from mmlml.benchmark.sweep.sweep import Sweep, SweepError
from mmlml.benchmark.sweep.sweep_definition import read_definition
from mmlml.benchmark.sweep.worker import work
from mmlml.benchmark.training.trial_record import (BEST_CHECKPOINT,
                                                   FIRST_STAGE_RUN, RUN)

pytest.importorskip('optuna')

SECOND = 'configs/demo/pseudo_label.py'


@pytest.fixture(autouse=True)
def fake_trainer(monkeypatch):
    monkeypatch.setenv('MMLML_SWEEP_TRAINER', FAKE)


@pytest.mark.parametrize(
    'options, message',
    [({
        'default_hooks.timer.type': 'os.system',
        'default_hooks.timer.command': 'touch MARKER'
    }, "must set plain config keys .* got 'default_hooks.timer.type'"),
     ({
         '--launcher': 'slurm'
     }, "must set plain config keys .* got '--launcher'"),
     ({
         'model._scope_': 'evil'
     }, 'must set plain config keys'),
     ({
         'load_from': '/tmp/evil.pth'
     }, r'must give load_from .* \(no file: its key names one\)'),
     ({
         'train_dataloader.dataset.data_root': 'elsewhere'
     }, r'must give .*data_root .* \(no file: its key names one\)'),
     ({
         'model.head.loss': {
             'type': 'HillLoss'
         }
     }, 'must give model.head.loss a number'),
     ({
         'val_dataloader.dataset.val_labels': 'a.b'
     }, "must give .*val_labels .*, got 'a.b'")],
    ids=['type', 'flag', 'private-key', 'file', 'file-word', 'dict', 'module'])
def test_stored_overrides_that_name_code_flags_or_files_are_refused(
        tmp_path, options, message):
    """A stored `cfg_options` entry that MMEngine would build as a type
    (``default_hooks.timer.type='os.system'`` ran a shell command through
    ``--join``), a key the trainer would read as a flag, a file: the sweep
    stops with one line before anything runs."""
    sweep = _one_run(tmp_path)
    _tamper(sweep, cfg_options=options)
    with pytest.raises(SweepError, match=f'`cfg_options` {message}'):
        work(sweep.spec, 's', poll=0.2)
    assert not (tmp_path / 'work').exists()
    assert not osp.exists('MARKER')


def test_plain_overrides_are_kept(tmp_path):
    options = {
        'val_dataloader.dataset.val_labels': 'observed',
        'train_dataloader.batch_size': 4,
        'model.head.loss.tau': [0.6, None],
        'model.backbone.norm_eval': True,
    }
    sweep = define(tmp_path, configs=(AN, ))
    _tamper(sweep, cfg_options=options)
    assert Sweep(sweep.spec, 's').definition.cfg_options == options


@pytest.mark.parametrize(
    'changes, message', [
        (dict(settings=['evil']), "`settings` must list values of .*'evil'"),
        (dict(modes=['evil']), "`modes` must list values of .*'evil'"),
        (dict(modes=[]), '`modes` must be a non-empty list'),
        (dict(rules=dict(seeds=['0'], lrs=[0.1], lr_bounds=[0.1, 0.1])),
         r"`rules.seeds\[0\]` must be an integer"),
        (dict(rules=dict(seeds=[0], lrs=[0.1], lr_bounds=[0.1, 0.1], evil=1)),
         '`rules` must be'),
        (dict(baseline='nosuch'), '`baseline` must be the name of one of '
         'the configs'),
        (dict(oracle='../evil'), '`oracle` must be a name'),
        (dict(work_dir='--evil'), '`work_dir` must be a path'),
        (dict(evil=1), "its field 'evil' is not one of a sweep's"),
        (dict(digests={AN: 'abc'}), 'defined by an earlier version'),
    ],
    ids=[
        'setting', 'mode', 'no-mode', 'seed', 'rule', 'baseline', 'oracle',
        'work-dir', 'unknown', 'old-digests'
    ])
def test_stored_fields_are_checked_by_their_declaration(
        tmp_path, changes, message):
    sweep = _one_run(tmp_path)
    _tamper(sweep, **changes)
    with pytest.raises(SweepError, match=message) as error:
        Sweep(sweep.spec, 's').definition
    assert '\n' not in str(error.value)


def test_a_stored_work_dir_elsewhere_runs_only_if_named(tmp_path):
    """The runs' folder itself comes from the storage: one outside the
    checkout and the storage's folder is refused unless the command names
    it (``--work-dir``)."""
    elsewhere = str(tmp_path.parent / f'{tmp_path.name}-elsewhere')
    sweep = _one_run(tmp_path / 'sweep')
    _tamper(sweep, work_dir=elsewhere)
    with pytest.raises(
            SweepError,
            match='its work_dir .* lies outside this checkout and the '
            "storage's folder, and the command did not name it"):
        work(sweep.spec, 's', poll=0.2)
    assert not osp.exists(elsewhere)
    assert Sweep(sweep.spec, 's', trusted=[elsewhere]).definition.work_dir \
        == elsewhere


def test_a_read_definition_is_typed_and_filled_in(tmp_path):
    sweep = _one_run(tmp_path)
    definition = sweep.definition
    assert definition.modes == ['finetune'] and definition.threads == 1
    assert definition.label_seed_per_seed is False
    stored = dict(definition, trainer='ignored')
    assert 'trainer' not in read_definition(stored)


def _tamper_finished(sweep, trial, key, value):
    """Rewrite a finished trial's field in the SQLite file, as someone who
    can write the storage can (Optuna's API refuses to)."""
    import json
    import sqlite3
    with sqlite3.connect(sweep.spec) as db:
        changed = db.execute(
            'UPDATE trial_user_attributes SET value_json = ? WHERE '
            'trial_id = ? AND key = ?',
            (json.dumps(value), trial._trial_id, key)).rowcount
    assert changed == 1


def _first_stage_done(tmp_path):
    """A two-stage sweep (pseudo_label.py after an.py) whose first stage
    ran."""
    sweep = _one_run(tmp_path, configs=(AN, SECOND))
    assert work(sweep.spec, 's', poll=0.2, max_trials=1)['trials'] == 1
    first = sweep.groups()[0]
    assert first.config == AN
    return sweep, sweep.trials(first)[0]


def test_an_absolute_first_stage_run_stops_the_sweep(tmp_path):
    """A first stage's stored folder outside the work directory: the
    sweep stops with one line; nothing is made or trained there."""
    sweep, trial = _first_stage_done(tmp_path)
    outside = tmp_path / 'outside'
    _tamper_finished(sweep, trial, RUN, str(outside))
    with pytest.raises(
            SweepError,
            match='is not the one its point and seed make .* inside the '
            'work directory'):
        work(sweep.spec, 's', poll=0.2)
    assert not outside.exists()


def test_a_first_stage_checkpoint_is_found_not_read(tmp_path, monkeypatch):
    """The second stage labels with the checkpoint found in the first
    stage's derived folder, never the one the storage names."""
    sweep, trial = _first_stage_done(tmp_path)
    _tamper_finished(sweep, trial, BEST_CHECKPOINT, '/tmp/evil.pth')
    called = []
    real = first_stage.run_command

    def call(cmd, log, threads, *args, **kwargs):
        if any(
                word.endswith(('pseudo_label.py', 'pseudo_label'))
                for word in cmd[1:3]):
            called.append(cmd)
            return
        real(cmd, log, threads, *args, **kwargs)

    monkeypatch.setattr(first_stage, 'run_command', call)
    assert work(sweep.spec, 's', poll=0.2, max_trials=1)['trials'] == 1
    run = trial.user_attrs[RUN]
    checkpoint = next(w for w in called[0] if w.endswith('.pth'))
    assert checkpoint.startswith(str(tmp_path / 'work' / run) + os.sep)
    assert osp.basename(checkpoint).startswith('best_')
    second = [g for g in sweep.groups() if g.config == SECOND][0]
    done = sweep.trials(second)[0]
    assert done.state.name == 'COMPLETE'
    assert done.user_attrs[FIRST_STAGE_RUN] == run


def _config(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_digests_cover_placeholder_and_expression_bases(tmp_path):
    """Bases written with MMEngine's placeholders or as an expression are
    resolved as MMEngine resolves them, read as data: editing one after
    the definition refuses the sweep in one line naming the file."""
    domain = _config(tmp_path / 'dom' / 'mydom.py', 'size = 8\n')
    extra = _config(tmp_path / 'parts' / 'extra.py', 'depth = 2\n')
    user = _config(
        tmp_path / 'cfgs' / 'user.py',
        "_base_ = ['{{ fileDirname }}/../dom/{{$MMLML_TEST_BASE:mydom}}.py']"
        f" + ['../parts/' + 'extra.py', {osp.join(ROOT, AN)!r}]\n")
    files = config_files(str(user), env={})
    assert str(domain) in files and str(extra) in files
    assert osp.join(ROOT, 'configs/_base_/domains/synthetic_shapes.py') in \
        files
    from mmengine.config import Config
    cfg = Config.fromfile(str(user))  # MMEngine reads the same bases
    assert cfg.size == 8 and cfg.depth == 2
    for edited in (domain, extra):
        sweep = _one_run(tmp_path / edited.stem, configs=(str(user), ))
        edited.write_text(edited.read_text() + '# edited\n')
        with pytest.raises(
                SweepError,
                match=f'{edited} \\(read for config {user}\\) changed since '
                'the sweep was defined'):
            Sweep(sweep.spec, 's', trusted=[str(user)]).definition
        edited.write_text(edited.read_text().replace('# edited\n', ''))


def test_the_demo_digests_cover_their_domain_files(tmp_path):
    """Every demo config reaches its domain (dataset, pretrained model)
    through a placeholder base: the digests hold the domain the runs use,
    its own bases, and a second stage's first stage config."""
    synthetic = config_digests(AN, ['synthetic_shapes'])
    assert 'configs/_base_/domains/synthetic_shapes.py' in synthetic
    assert 'configs/_base_/datasets/generated_domain.py' in synthetic
    digits = sweep_digests(
        dict(configs=[AN], modes=['finetune'], domain='digit_canvases'))[AN]
    assert 'configs/_base_/domains/digit_canvases.py' in digits
    assert 'configs/_base_/domains/synthetic_shapes.py' not in digits
    # A second stage's first stage (read by the worker, trained by it).
    assert 'configs/demo/em.py' in config_digests('configs/demo/vlpl_em.py')
    with pytest.raises(SweepError, match='its _base_ is not data'):
        config_files(
            str(_config(tmp_path / 'c.py', "_base_ = [name + '.py']\n")))


def _open_at_once(path, barrier, results):
    from mmlml.benchmark.training.optuna_storage import open_storage
    barrier.wait()
    try:
        storage = open_storage(path)
        storage.get_all_studies()
        results.put('opened')
    except Exception as error:  # what the test reports
        results.put(f'{type(error).__name__}: {error}')


@pytest.mark.parametrize('name', ['sweep.db', 'sweep.journal'])
def test_a_new_storage_created_by_several_commands_at_once_opens_for_all(
        tmp_path, name):
    """Before, two commands creating the same new SQLite storage collided
    (alembic's UNIQUE constraint, or a half-made file refused as empty)."""
    context = multiprocessing.get_context('fork')
    for attempt in range(3):
        path = str(tmp_path / f'{attempt}{name}')
        barrier, results = context.Barrier(3), context.Queue()
        processes = [
            context.Process(
                target=_open_at_once, args=(path, barrier, results))
            for _ in range(3)
        ]
        for process in processes:
            process.start()
        found = [results.get(timeout=120) for _ in processes]
        for process in processes:
            process.join(60)
        assert found == ['opened'] * 3


def test_a_storage_with_bytes_waits_for_its_maker(tmp_path):
    """The race CI met: a reader opened a file its maker had given tables
    but not yet their version row, and Optuna's second stamp of it broke
    alembic's UNIQUE constraint. A file that open_storage made (its lock
    file beside it) is opened under the lock, whatever its size."""
    import fcntl
    import threading

    from optuna.storages import RDBStorage

    from mmlml.benchmark.training.optuna_storage import (CREATION_LOCK,
                                                         open_storage)
    path = str(tmp_path / 'sweep.db')
    RDBStorage(f'sqlite:///{path}')  # the bytes exist
    opened = threading.Event()
    with open(path + CREATION_LOCK, 'a') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # its maker is still at work
        reader = threading.Thread(
            target=lambda: (open_storage(path), opened.set()))
        reader.start()
        assert not opened.wait(1.0)
        fcntl.flock(lock, fcntl.LOCK_UN)
    reader.join(60)
    assert opened.is_set()


def test_two_commands_defining_the_same_new_sweep_both_go_on(tmp_path):
    first = define(tmp_path, configs=(AN, ))
    second = define(tmp_path, configs=(AN, ))  # the same definition again
    assert first.definition == second.definition


def _interactive_signals() -> None:
    """The tool's signals as a shell's foreground command has them: a
    test runner's worker may ignore SIGINT, and a child that inherits the
    ignore never sees Ctrl-C (Python keeps an ignored SIGINT ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _running(storage) -> bool:
    """Whether a trial of the storage is running (read through the
    storage alone: a Sweep would parse every config, seconds on a loaded
    machine)."""
    from mmlml.benchmark.training.optuna_storage import open_storage
    store = open_storage(storage)
    return any(
        trial.state.name == 'RUNNING' for study in store.get_all_studies()
        for trial in store.get_all_trials(study._study_id, deepcopy=False))


@pytest.mark.parametrize(
    'signum', [signal.SIGTERM, signal.SIGINT], ids=['sigterm', 'ctrl-c'])
def test_a_stopped_tool_ends_with_one_line(tmp_path, signum):
    """SIGTERM or Ctrl-C to tools/benchmark.py: its workers queue their
    runs again and the tool ends with one line, no traceback."""
    env = dict(os.environ, MMLML_SWEEP_TRAINER=FAKE, FAKE_EPOCH_SECONDS='5')
    storage = str(tmp_path / 'sweep.db')
    tool = subprocess.Popen([
        sys.executable,
        osp.join(ROOT, 'tools', 'benchmark.py'), AN, '--storage', storage,
        '--study', 's', '--work-dir',
        str(tmp_path / 'work'), '--workers', '1', '--seeds', '0', '--lrs',
        '0.1', '--lr-bounds', '0.1', '0.1', '--max-doublings', '0',
        '--no-prune'
    ],
                            cwd=ROOT,
                            env=env,
                            stderr=subprocess.PIPE,
                            text=True,
                            preexec_fn=_interactive_signals)
    for _ in range(240):  # a cheap look: no config is parsed
        if tool.poll() is None and osp.exists(storage) and _running(storage):
            break
        time.sleep(0.5)
    assert tool.poll() is None, 'the tool ended before its run started'
    tool.send_signal(signum)
    _, err = tool.communicate(timeout=120)
    assert tool.returncode == 128 + signum, err
    assert 'Traceback' not in err, err
    assert err.strip().splitlines()[-1].startswith(
        f'[benchmark] stopped by {signal.Signals(signum).name}: the runs in '
        'progress are queued again'), err
    assert 'WAITING' in states(Sweep(storage, 's'))
