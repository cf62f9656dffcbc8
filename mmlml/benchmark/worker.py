"""A worker of a benchmark sweep: takes queued trials from the storage and
runs each as a training process until the sweep is finished.

A trial is one :func:`~mmlml.benchmark.trial_training.train_trial` (never a
path from the storage, whose every value is checked as data first,
:mod:`.stored_definition`): train the
config at the trial's point and seed in its setting and mode, keep the
checkpoint with the best validation mAP, test it. With ``gpus_per_trial``
above one the run is launched through ``torch.distributed.run`` with
MMEngine's ``pytorch`` launcher. The tuning runs carry an
:class:`~.optuna_pruning_hook.OptunaPruningHook` when the sweep prunes
(its first rung the epoch after the method's warm-up, read from the run's
config: :func:`~.method_warmup.steady_epoch`) and :func:`~.pruning.
may_prune` lets them: never the seed runs, the ``full`` setting's or the
runs of an unpruned replay (:meth:`~.sweep.Sweep.replay_groups`).

Warm trials (``trial_process='warm'``, the default): the worker imports
the stack once and calls the trainer in its own process, each trial on a
fresh ``Runner`` and within :class:`~.process_globals.ProcessGlobals`
(every global a run touches put back after it), its output in the run's
``log.txt``; a failed one is recorded as a failed subprocess is. With
``trial_process='subprocess'`` (isolation), and always with
``gpus_per_trial`` above one, each trial is a process of its own:
``python -m mmlml.benchmark.trial_training`` (or ``$MMLML_SWEEP_TRAINER``,
:func:`~.stored_definition.trainer_path`, the test suite's stand-in, which
is always a subprocess).

A second stage (a config that names ``first_stage``) first makes its
labels (``tools/pseudo_label.py``) or scores (``tools/vl_pseudo_label.py``)
from the best checkpoint of its first stage's run at the first stage's
chosen point and the same seed. When that checkpoint is not on this
machine, the run is trained again in its folder (the first stage's
record is not changed; the trial notes that it rebuilt it).

Run a worker with ``python -m mmlml.benchmark.worker --storage S --study
N`` (``tools/benchmark.py`` starts them: local processes or Slurm jobs).
"""
import argparse
import contextlib
import glob
import json
import os
import os.path as osp
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from typing import Any, Dict, Optional

from ..compat.stack_repairs import CONFIG_TEXT_VARIABLE
from .config_keys import EPOCHS_KEY
from .process_globals import ProcessGlobals
from .progress import EpochWatch, SweepProgress
from .pruning import may_prune
from .settings import (dataset_modes, format_options, label_seed, mode_options,
                       run_domain, setting_options)
from .stored_definition import DOMAIN_VARIABLE, TRAINER_VARIABLE, trainer_path
from .sweep import (LOST, REPO_ROOT, Group, Sweep, abs_path, file_lock,
                    first_seed_point, run_id)
from .trial_record import (BEST_CHECKPOINT, EPOCHS, EPOCHS_TRAINED, FAILURE,
                           FIRST_STAGE_REBUILT, FIRST_STAGE_RUN, POINT,
                           PRUNED_AT, RUN, SEED, VAL_MAP)

__all__ = ['TrialFailed', 'TRIAL_PROCESSES', 'run_trial', 'work', 'main']

#: Seconds between heartbeats, and without one before a trial is lost.
HEARTBEAT, GRACE = 20, 120

#: Where a trial trains: in the worker's process, or in one of its own.
TRIAL_PROCESSES = ('warm', 'subprocess')


class TrialFailed(RuntimeError):
    """A training process of a trial failed."""


def _die_with_parent() -> None:
    """In a training process: be killed when the worker dies, even by
    SIGKILL (Linux's parent-death signal), so that no orphan trains in a
    run folder that the trial, queued again, trains anew."""
    import ctypes
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: no such guard
        pass


def _call(cmd: list,
          log: str,
          threads: int,
          domain: Optional[str] = None) -> None:
    """Run ``cmd`` with its output appended to ``log``; ``domain``: the
    demo configs' domain in its environment (never in this process's)."""
    env = dict(os.environ)
    if domain is not None:
        env[DOMAIN_VARIABLE] = domain
    for var in ('OMP_NUM_THREADS', 'MKL_NUM_THREADS'):
        env[var] = str(threads)
    # Nobody reads a run folder's config: yapf would cost a second or more
    # of a ten-second run.
    env[CONFIG_TEXT_VARIABLE] = 'unformatted'
    # In the worker's folder, where the configs' relative paths resolve.
    with open(log, 'a') as f:
        f.write('$ ' + ' '.join(cmd) + '\n')
        f.flush()
        result = subprocess.run(
            cmd,
            stdout=f,
            stderr=subprocess.STDOUT,
            env=env,
            preexec_fn=_die_with_parent)
    if result.returncode:
        program = cmd[2] if cmd[1] == '-m' else osp.basename(cmd[1])
        raise TrialFailed(f'{program} exited with '
                          f'{result.returncode}, see {log}')


def _options(definition: dict, group: Group, point: dict, seed: int) -> dict:
    """The overrides of a run of ``seed``: the sweep's, the mode's, the
    point's, the setting's (with the seed of its labels where the sweep
    draws them per training seed)."""
    options = dict(definition.get('cfg_options') or {})
    options.update(mode_options(group.mode, definition.get('domain')))
    options.update(point)
    train_mode = dataset_modes(abs_path(group.config), group.setting)[0]
    label = label_seed(seed) if definition.get('label_seed_per_seed') \
        else None
    options.update(setting_options(group.setting, train_mode, label))
    return options


def _warm(config: str, work_root: str, seed: int, options: dict,
          hook: Optional[dict], domain: Optional[str], log: str,
          threads: int) -> dict:
    """One training in this process (:class:`~.process_globals.
    ProcessGlobals` around it), its output appended to ``log``; its
    summary. An error of the run is a :class:`TrialFailed` naming the
    log, where its traceback is."""
    from .trial_training import failure_reason, train_trial
    with open(log, 'a') as f, ProcessGlobals():
        f.write(f'# warm trial in process {os.getpid()}: {config}, seed '
                f'{seed}, domain {domain}\n')
        f.flush()
        for var in ('OMP_NUM_THREADS', 'MKL_NUM_THREADS'):
            os.environ[var] = str(threads)
        os.environ[CONFIG_TEXT_VARIABLE] = 'unformatted'  # as in _call
        import torch
        torch.set_num_threads(threads)
        with contextlib.redirect_stdout(f), contextlib.redirect_stderr(f):
            try:
                return train_trial(
                    config,
                    work_root,
                    seed,
                    options,
                    extra_hooks=[hook] if hook is not None else [],
                    domain=domain)
            except Exception as error:
                traceback.print_exc(file=f)
                raise TrialFailed(f'{failure_reason(error)} (see {log})') \
                    from None


def _train(sweep: Sweep,
           group: Group,
           point: dict,
           seed: int,
           run_dir: str,
           options: dict,
           hook: Optional[dict],
           trial_process: str = 'warm') -> dict:
    """One training of the trial, warm or in a ``trainer`` process
    (module docstring); its summary, also written to the run folder's
    ``demo.json``."""
    definition = sweep.definition
    out = osp.join(run_dir, 'demo.json')
    if osp.exists(out):
        os.remove(out)  # the run folder is the sweep's own
    domain = run_domain(definition.get('domain'), group.mode)
    work_root = osp.dirname(osp.dirname(run_dir))
    log = osp.join(run_dir, 'log.txt')
    threads = definition.get('threads', 1)
    gpus = int(definition.get('gpus_per_trial') or 0)
    if trial_process == 'warm' and gpus <= 1 \
            and not os.environ.get(TRAINER_VARIABLE):
        summary = _warm(
            abs_path(group.config), work_root, seed, options, hook, domain,
            log, threads)
        with open(out, 'w') as f:
            json.dump({group.name: {'runs': [summary]}}, f, indent=2)
        return summary
    if os.environ.get(TRAINER_VARIABLE):
        cmd = [trainer_path()]
    else:
        cmd = ['-m', 'mmlml.benchmark.trial_training']
    if gpus > 1:
        cmd = ['-m', 'torch.distributed.run', f'--nproc_per_node={gpus}'
               ] + cmd + ['--launcher', 'pytorch']
    cmd = [sys.executable] + cmd + [
        abs_path(group.config),
        '--seeds' if os.environ.get(TRAINER_VARIABLE) else '--seed',
        str(seed), '--work-dir', work_root, '--out', out
    ]
    if domain is not None and not os.environ.get(TRAINER_VARIABLE):
        cmd += ['--domain', domain]
    if hook is not None:
        cmd += ['--extra-hook', json.dumps(hook)]
    cmd += ['--cfg-options'] + format_options(options)
    _call(cmd, log, threads, domain)
    with open(out) as f:
        summary = json.load(f)[group.name]['runs'][0]
    return summary


def best_checkpoint(run_dir: str) -> Optional[str]:
    """The best checkpoint that the trainer saved in a run folder
    (MMEngine's ``best_*.pth``; the newest where there are several), or
    None: found in the folder, never read from the storage."""
    found = glob.glob(osp.join(glob.escape(run_dir), 'best_*.pth'))
    return max(found, key=osp.getmtime) if found else None


def _first_stage(sweep: Sweep,
                 group: Group,
                 seed: int,
                 run_dir: str,
                 options: dict,
                 trial_process: str = 'warm') -> dict:
    """Make a second stage's labels or scores; returns the trial's notes.
    The first stage's folder is the one its chosen point (checked, as
    every trial the sweep reads) and the seed make, and its checkpoint the
    one found there (:func:`best_checkpoint`)."""
    definition = sweep.definition
    first_stage: str = group.first_stage  # type: ignore[assignment]
    first = first_seed_point(sweep, group, seed)
    first_group = Group(group.mode, group.setting, first_stage, None)
    work_dir = abs_path(definition['work_dir'])
    first_run = run_id(first_group.mode, first_group.setting, first[POINT],
                       first_group.name, seed)
    first_dir = osp.join(work_dir, first_run)
    notes = {FIRST_STAGE_RUN: first_run}
    checkpoint = best_checkpoint(first_dir)
    if checkpoint is None:
        # Another worker may be rebuilding the same run: one at a time,
        # and a finished rebuild is reused.
        os.makedirs(first_dir, exist_ok=True)
        with file_lock(first_dir + '.lock'):
            done = osp.join(first_dir, 'demo.json')
            if osp.exists(done) and best_checkpoint(first_dir):
                with open(done) as f:
                    rebuilt = json.load(f)[first_group.name]['runs'][0]
            else:
                rebuilt = _train(
                    sweep, first_group, first[POINT], seed, first_dir,
                    _options(definition, first_group, first[POINT], seed),
                    None, trial_process)
        checkpoint = best_checkpoint(first_dir)
        if checkpoint is None:
            raise TrialFailed(f'the first stage run {first_dir} saved no '
                              'best checkpoint (best_*.pth)')
        notes[FIRST_STAGE_REBUILT] = rebuilt[VAL_MAP]
    stage = dataset_modes(abs_path(group.config), group.setting)[2]
    log = osp.join(run_dir, 'log.txt')
    threads = definition.get('threads', 1)
    domain = run_domain(definition.get('domain'), group.mode)
    if 'scores_hook' in stage or 'scores_file' in stage:
        scores = osp.join(run_dir, 'scores.npy')
        _call([
            sys.executable,
            osp.join(REPO_ROOT, 'tools', 'vl_pseudo_label.py'),
            abs_path(group.config), '--out', scores, '--force', '--device',
            'cpu', '--labeller-options', 'type=ModelPseudoLabeller',
            f'config={abs_path(first_stage)}', f'checkpoint={checkpoint}',
            '--cfg-options'
        ] + format_options(options), log, threads, domain)
        options[scores_key(
            abs_path(group.config), stage, options,
            run_domain(definition.get('domain'), group.mode))] = scores
    else:
        labels = osp.join(run_dir, 'pseudo_labels.npy')
        _call([
            sys.executable,
            osp.join(REPO_ROOT, 'tools', 'pseudo_label.py'),
            abs_path(first_stage), checkpoint, '--out', labels, '--force',
            '--thr',
            str(stage.get('thr', 0.5)), '--device', 'cpu', '--cfg-options'
        ] + format_options(
            _options(definition, first_group, first[POINT], seed)), log,
              threads, domain)
        options['train_dataloader.dataset.label_file'] = labels
    return notes


def scores_key(config: str,
               stage: dict,
               options: dict,
               domain: Optional[str] = None) -> str:
    """The config key of a second stage's scores file: the
    ``scores_file`` of the hook of type ``first_stage['scores_hook']``
    (found by type, e.g. ``'VLPseudoLabelHook'``), or the dotted key
    ``first_stage['scores_file']``."""
    if 'scores_file' in stage:
        return stage['scores_file']
    from .trial_training import trial_config
    cfg = trial_config(config, options, domain)
    found = [
        i for i, hook in enumerate(cfg.get('custom_hooks') or [])
        if str(hook.get('type', '')).split('.')[-1] == stage['scores_hook']
    ]
    if len(found) != 1:
        raise TrialFailed(
            f"{config}: first_stage['scores_hook'] names "
            f"{stage['scores_hook']}, which its custom_hooks hold "
            f'{len(found)} times (one is needed)')
    return f'custom_hooks.{found[0]}.scores_file'


def _first_rung(group: Group,
                options: dict,
                domain: Optional[str] = None) -> int:
    """The first epoch at which a run may be pruned: the one after its
    method's warm-up, as the run's config (with its overrides) sets it."""
    from .method_warmup import steady_epoch
    from .trial_training import trial_config
    return steady_epoch(trial_config(abs_path(group.config), options,
                                     domain)) + 1


def run_trial(sweep: Sweep,
              group: Group,
              trial_id: int,
              attrs: dict,
              trial_process: str = 'warm') -> None:
    """Run a taken trial and record its result: complete (value: the
    validation mAP), pruned, or failed with the error. ``trial_process``:
    one of :data:`TRIAL_PROCESSES` (module docstring)."""
    definition = sweep.definition
    work_dir = abs_path(definition['work_dir'])
    try:  # the storage's trial is data: checked before it is run
        record = sweep.checked_trial(group, sweep.storage.get_trial(trial_id))
    except ValueError as error:
        sweep.finish(trial_id, 'fail', failure=str(error))
        return
    point, seed = record[POINT], record[SEED]
    # The domain of this run's mode, passed to each reading of its configs.
    domain = run_domain(definition.get('domain'), group.mode)
    run_dir = osp.join(work_dir, record[RUN])
    options = _options(definition, group, point, seed)
    notes = {}
    prune = definition.get('prune')
    hook = None
    try:
        if may_prune(
                prune,
                setting=group.setting,
                seed=seed,
                first_seed=sweep.rules.seeds[0],
                tune=sweep.rules.tune,
                replay=group.replay):
            hook = dict(
                type='OptunaPruningHook',
                storage=sweep.spec,
                study_name=sweep.study_name(group),
                trial_id=trial_id,
                first_rung=_first_rung(group, options, domain),
                pruner=prune)
        try:
            os.makedirs(run_dir, exist_ok=True)
        except OSError as error:
            raise TrialFailed(f'cannot make the run folder {run_dir} '
                              f'({error.strerror}): check the sweep\'s '
                              'work directory') from None
        if group.first_stage is not None:
            notes = _first_stage(sweep, group, seed, run_dir, options,
                                 trial_process)
        summary = _train(sweep, group, point, seed, run_dir, options, hook,
                         trial_process)
    except Exception as error:  # recorded; the sweep reports it
        sweep.finish(trial_id, 'fail', failure=str(error))
        return
    checkpoint = summary.get(BEST_CHECKPOINT, '')
    if osp.isabs(checkpoint):
        summary[BEST_CHECKPOINT] = osp.relpath(checkpoint, work_dir)
    summary.update(notes)
    summary.update(
        setting=group.setting,
        mode=group.mode,
        config=group.config,
        heartbeat=time.time())
    pruned_at = sweep.storage.get_trial(trial_id).user_attrs.get(PRUNED_AT)
    if pruned_at is not None:
        summary[EPOCHS_TRAINED] = pruned_at
        sweep.finish(trial_id, 'pruned', **summary)
    else:
        summary[EPOCHS_TRAINED] = summary[EPOCHS]
        sweep.finish(trial_id, 'complete', summary[VAL_MAP], **summary)


class _Heartbeat:
    """Beats for a trial in a thread while it runs."""

    def __init__(self, sweep: Sweep, trial_id: int, interval: float):
        self.stop = threading.Event()
        self.thread = threading.Thread(
            target=self._beat, args=(sweep, trial_id, interval), daemon=True)
        self.thread.start()

    def _beat(self, sweep, trial_id, interval):
        while not self.stop.wait(interval):
            try:
                sweep.heartbeat(trial_id)
            except Exception:  # the next beat tries again
                pass

    def close(self):
        self.stop.set()
        self.thread.join()


def work(storage: str,
         study: str,
         name: Optional[str] = None,
         poll: float = 10,
         first_poll: float = 0.5,
         heartbeat: float = HEARTBEAT,
         grace: float = GRACE,
         max_trials: Optional[int] = None,
         trusted=(),
         trial_process: str = 'warm') -> dict:
    """Run trials of the sweep until it is finished (or ``max_trials``
    ran); returns ``{'trials': n, 'errors': [...]}``. Runs that are queued
    or running elsewhere are waited for, so that the rules can go on.
    ``trusted``: the configs outside the checkout's ``configs/`` that the
    command starting this worker named (:class:`~.sweep.Sweep`). A worker
    with nothing to run looks again after ``first_poll`` seconds, then
    twice as long each time up to ``poll`` (short runs of other workers
    end soon; a long wait costs the storage little). ``trial_process``:
    where each trial trains (:data:`TRIAL_PROCESSES`, module docstring).
    Stopped (SIGTERM, Ctrl-C), it fails the trial it runs as lost and
    queues the run again, then stops."""
    if trial_process not in TRIAL_PROCESSES:
        raise ValueError(f'trial_process must be one of {TRIAL_PROCESSES}; '
                         f'got {trial_process!r}')
    sweep = Sweep(storage, study, trusted=trusted)
    name = name or f'{socket.gethostname()}:{os.getpid()}'
    current: Dict[str, Any] = {}
    progress = SweepProgress(sweep, name)

    stop = _Stop()
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, stop)
    try:
        return _run_until_done(sweep, name, current, stop, progress, poll,
                               first_poll, heartbeat, grace, max_trials,
                               trial_process)
    except BaseException:
        # Stopped (SIGTERM, Ctrl-C) with a trial taken: its run is queued
        # again. Here, not in the signal handler: the storage call that
        # the signal interrupted has unwound and released its transaction
        # (the handler's own writes would wait for it on a database).
        if current and sweep.finish(current['id'], 'fail', failure=LOST):
            sweep.requeue(current['group'], current['attrs'])
        raise
    finally:
        if previous is not None:  # a worker called in a program's process
            signal.signal(signal.SIGTERM, previous)


class _Stop:
    """The worker's SIGTERM handler (Slurm's preemption, a kill): it
    raises ``SystemExit``, except while a trial is being taken
    (:meth:`held`), where it waits until the worker knows which trial it
    holds, so that a stopped worker always queues its run again."""

    def __init__(self):
        self.holding = False
        self.pending: Optional[int] = None

    def __call__(self, signum, frame):
        if self.holding:
            self.pending = signum
        else:
            raise SystemExit(128 + signum)

    @contextlib.contextmanager
    def held(self):
        self.holding = True
        try:
            yield
        finally:
            self.holding = False
        if self.pending is not None:
            raise SystemExit(128 + self.pending)


def _run_until_done(sweep: Sweep,
                    name: str,
                    current: dict,
                    stop: _Stop,
                    progress: SweepProgress,
                    poll: float,
                    first_poll: float,
                    heartbeat: float,
                    grace: float,
                    max_trials: Optional[int],
                    trial_process: str = 'warm') -> dict:
    """:func:`work`'s loop; ``current`` holds the trial being run."""
    ran = 0
    wait = first_poll
    while max_trials is None or ran < max_trials:
        sweep.fail_stale(grace)
        with stop.held():
            taken = sweep.pop(name)
            if taken is not None:
                group, trial_id, attrs = taken
                current.update(id=trial_id, group=group, attrs=attrs)
        if taken is None:
            state = sweep.advance()
            if state['queued']:
                continue
            if state['done']:
                return dict(trials=ran, errors=state['errors'])
            time.sleep(min(wait, poll))
            wait *= 2
            continue
        wait = first_poll
        beat = _Heartbeat(sweep, trial_id, heartbeat)
        # Shown and followed only once checked (run_trial fails the others).
        try:
            checked = sweep.checked_trial(group,
                                          sweep.storage.get_trial(trial_id))
            run = checked[RUN]
            log = osp.join(
                abs_path(sweep.definition['work_dir']), run, 'log.txt')
            epochs = int(checked[POINT].get(EPOCHS_KEY, 0))
        except ValueError:
            run, log, epochs = f'trial {trial_id}', os.devnull, 0
        print(progress.trial_line(run), file=sys.stderr, flush=True)
        watch = EpochWatch(log, f'[{name}] {run}', epochs)
        try:
            run_trial(sweep, group, trial_id, attrs, trial_process)
        finally:
            watch.close()
            beat.close()
        current.clear()
        ran += 1
        progress.ran += 1
        record = sweep.storage.get_trial(trial_id)
        value = f'{VAL_MAP} {record.value:.2f}' if record.value is not None \
            else record.user_attrs.get(FAILURE) or \
            f'{PRUNED_AT} {record.user_attrs.get(PRUNED_AT)}'
        print(
            f'[{name}] {run}: {record.state.name.lower()}, {value}',
            flush=True)
    return dict(trials=ran, errors=[])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--storage', required=True)
    parser.add_argument('--study', required=True)
    parser.add_argument('--poll', type=float, default=10)
    parser.add_argument('--heartbeat', type=float, default=HEARTBEAT)
    parser.add_argument('--grace', type=float, default=GRACE)
    parser.add_argument(
        '--trust-config',
        nargs='+',
        default=[],
        help='configs outside the checkout\'s configs/ that the sweep may '
        'run (those its command named)')
    parser.add_argument(
        '--trial-process',
        choices=TRIAL_PROCESSES,
        default='warm',
        help='train each trial in this process (warm: the stack imported '
        'once) or in a process of its own (subprocess: isolation); '
        'default: warm')
    args = parser.parse_args(argv)
    try:
        result = work(
            args.storage,
            args.study,
            poll=args.poll,
            heartbeat=args.heartbeat,
            grace=args.grace,
            trusted=args.trust_config,
            trial_process=args.trial_process)
    except KeyboardInterrupt:  # Ctrl-C: its run is queued again (work)
        raise SystemExit(128 + signal.SIGINT) from None
    for error in result['errors']:
        print(f'[worker] failed: {error}', file=sys.stderr)
    return result


if __name__ == '__main__':
    main()
