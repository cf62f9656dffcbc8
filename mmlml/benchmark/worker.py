"""A worker of a benchmark sweep: takes queued trials from the storage and
runs each as a training process until the sweep is finished.

A trial is one ``tools/demo.py`` run of the worker's own checkout
(:func:`~.stored_definition.trainer_path`; never a path from the
storage, whose every value is checked as data first,
:mod:`.stored_definition`): train the
config at the trial's point and seed in its setting and mode, keep the
checkpoint with the best validation mAP, test it. With ``gpus_per_trial``
above one the run is launched through ``torch.distributed.run`` with
MMEngine's ``pytorch`` launcher. The tuning runs carry an
:class:`~.optuna_pruning_hook.OptunaPruningHook` when the sweep prunes
(its first rung the epoch after the method's warm-up, read from the run's
config: :func:`~.method_warmup.steady_epoch`); the runs of an unpruned
replay (:meth:`~.sweep.Sweep.replay_groups`) never do.

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
import json
import os
import os.path as osp
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import Any, Dict, Optional

from mmengine.config import Config

from ..compat.stack_repairs import CONFIG_TEXT_VARIABLE
from .config_keys import EPOCHS_KEY
from .progress import EpochWatch, SweepProgress
from .settings import (dataset_modes, format_options, label_seed, mode_options,
                       run_domain, setting_options)
from .stored_definition import check_trial, trainer_path
from .sweep import (LOST, REPO_ROOT, Group, Sweep, abs_path, file_lock,
                    first_seed_point, run_id)

__all__ = ['TrialFailed', 'run_trial', 'work', 'main']

#: Seconds between heartbeats, and without one before a trial is lost.
HEARTBEAT, GRACE = 20, 120


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


def _call(cmd: list, log: str, threads: int) -> None:
    env = dict(os.environ)
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
        raise TrialFailed(f'{osp.basename(cmd[1])} exited with '
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


def _train(sweep: Sweep, group: Group, point: dict, seed: int, run_dir: str,
           options: dict, hook: Optional[dict]) -> dict:
    """One ``trainer`` process; its summary."""
    definition = sweep.definition
    out = osp.join(run_dir, 'demo.json')
    if osp.exists(out):
        os.remove(out)  # the run folder is the sweep's own
    cmd = [trainer_path()]
    gpus = int(definition.get('gpus_per_trial') or 0)
    if gpus > 1:
        cmd = ['-m', 'torch.distributed.run', f'--nproc_per_node={gpus}'
               ] + cmd + ['--launcher', 'pytorch']
    cmd = [sys.executable] + cmd + [
        abs_path(group.config), '--seeds',
        str(seed), '--work-dir',
        osp.dirname(osp.dirname(run_dir)), '--out', out
    ]
    if hook is not None:
        cmd += ['--extra-hook', json.dumps(hook)]
    cmd += ['--cfg-options'] + format_options(options)
    _call(cmd, osp.join(run_dir, 'log.txt'), definition.get('threads', 1))
    with open(out) as f:
        summary = json.load(f)[group.name]['runs'][0]
    return summary


def _first_stage(sweep: Sweep, group: Group, seed: int, run_dir: str,
                 options: dict) -> dict:
    """Make a second stage's labels or scores; returns the trial's notes."""
    definition = sweep.definition
    first_stage: str = group.first_stage  # type: ignore[assignment]
    first = first_seed_point(sweep, group, seed)
    first_group = Group(group.mode, group.setting, first_stage, None)
    work_dir = abs_path(definition['work_dir'])
    checkpoint = osp.join(work_dir, first['best checkpoint'])
    notes = {'first stage run': first['run']}
    if not osp.exists(checkpoint):
        # Another worker may be rebuilding the same run: one at a time,
        # and a finished rebuild is reused.
        first_dir = osp.join(work_dir, first['run'])
        os.makedirs(first_dir, exist_ok=True)
        with file_lock(first_dir + '.lock'):
            done = osp.join(first_dir, 'demo.json')
            if osp.exists(done):
                with open(done) as f:
                    rebuilt = json.load(f)[first_group.name]['runs'][0]
            else:
                rebuilt = _train(
                    sweep, first_group, first['point'], seed, first_dir,
                    _options(definition, first_group, first['point'], seed),
                    None)
        checkpoint = osp.join(work_dir, rebuilt['best checkpoint'])
        notes['first stage rebuilt, val mAP'] = rebuilt['val mAP']
    stage = dataset_modes(abs_path(group.config), group.setting)[2]
    log = osp.join(run_dir, 'log.txt')
    threads = definition.get('threads', 1)
    if 'scores_hook' in stage or 'scores_file' in stage:
        scores = osp.join(run_dir, 'scores.npy')
        _call([
            sys.executable,
            osp.join(REPO_ROOT, 'tools', 'vl_pseudo_label.py'),
            abs_path(group.config), '--out', scores, '--force', '--device',
            'cpu', '--labeller-options', 'type=ModelPseudoLabeller',
            f'config={abs_path(first_stage)}', f'checkpoint={checkpoint}',
            '--cfg-options'
        ] + format_options(options), log, threads)
        options[scores_key(abs_path(group.config), stage, options)] = scores
    else:
        labels = osp.join(run_dir, 'pseudo_labels.npy')
        _call([
            sys.executable,
            osp.join(REPO_ROOT, 'tools', 'pseudo_label.py'),
            abs_path(first_stage), checkpoint, '--out', labels, '--force',
            '--thr',
            str(stage.get('thr', 0.5)), '--device', 'cpu', '--cfg-options'
        ] + format_options(
            _options(definition, first_group, first['point'], seed)), log,
              threads)
        options['train_dataloader.dataset.label_file'] = labels
    return notes


def scores_key(config: str, stage: dict, options: dict) -> str:
    """The config key of a second stage's scores file: the
    ``scores_file`` of the hook of type ``first_stage['scores_hook']``
    (found by type, e.g. ``'VLPseudoLabelHook'``), or the dotted key
    ``first_stage['scores_file']``."""
    if 'scores_file' in stage:
        return stage['scores_file']
    cfg = Config.fromfile(config)
    cfg.merge_from_dict(options)
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


def _first_rung(group: Group, options: dict) -> int:
    """The first epoch at which a run may be pruned: the one after its
    method's warm-up, as the run's config (with its overrides) sets it."""
    from .method_warmup import steady_epoch
    cfg = Config.fromfile(abs_path(group.config))
    cfg.merge_from_dict(options)
    return steady_epoch(cfg) + 1


def run_trial(sweep: Sweep, group: Group, trial_id: int, attrs: dict) -> None:
    """Run a taken trial and record its result: complete (value: the
    validation mAP), pruned, or failed with the error."""
    definition = sweep.definition
    work_dir = abs_path(definition['work_dir'])
    try:  # the storage's trial is data: checked before it is run
        check_trial(
            attrs, lambda point, seed: run_id(group.mode, group.setting, point,
                                              group.name, seed, group.replay),
            work_dir,
            sweep.config_facts(group)['hyperparameter'],
            f'trial {trial_id} of {sweep.study_name(group)}')
    except ValueError as error:
        sweep.finish(trial_id, 'fail', failure=str(error))
        return
    point, seed = attrs['point'], attrs['seed']
    # The domain of this run's mode, for this process's reading of the
    # configs and for the runs it starts.
    domain = run_domain(definition.get('domain'), group.mode)
    if domain is not None:
        os.environ['MMLML_DEMO_DOMAIN'] = domain
    run_dir = osp.join(work_dir, attrs['run'])
    options = _options(definition, group, point, seed)
    notes = {}
    prune = definition.get('prune')
    hook = None
    try:
        if prune and sweep.rules.tune and seed == sweep.rules.seeds[0] \
                and not group.replay:
            hook = dict(
                type='OptunaPruningHook',
                storage=sweep.spec,
                study_name=sweep.study_name(group),
                trial_id=trial_id,
                first_rung=_first_rung(group, options),
                reduction_factor=prune['reduction_factor'],
                min_trials=prune['min_trials'])
        try:
            os.makedirs(run_dir, exist_ok=True)
        except OSError as error:
            raise TrialFailed(f'cannot make the run folder {run_dir} '
                              f'({error.strerror}): check the sweep\'s '
                              'work directory') from None
        if group.first_stage is not None:
            notes = _first_stage(sweep, group, seed, run_dir, options)
        summary = _train(sweep, group, point, seed, run_dir, options, hook)
    except Exception as error:  # recorded; the sweep reports it
        sweep.finish(trial_id, 'fail', failure=str(error))
        return
    checkpoint = summary.get('best checkpoint', '')
    if osp.isabs(checkpoint):
        summary['best checkpoint'] = osp.relpath(checkpoint, work_dir)
    summary.update(notes)
    summary.update(
        setting=group.setting,
        mode=group.mode,
        config=group.config,
        heartbeat=time.time())
    pruned_at = sweep.storage.get_trial(trial_id).user_attrs.get(
        'pruned at epoch')
    if pruned_at is not None:
        summary['epochs trained'] = pruned_at
        sweep.finish(trial_id, 'pruned', **summary)
    else:
        summary['epochs trained'] = summary['epochs']
        sweep.finish(trial_id, 'complete', summary['val mAP'], **summary)


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
         trusted=()) -> dict:
    """Run trials of the sweep until it is finished (or ``max_trials``
    ran); returns ``{'trials': n, 'errors': [...]}``. Runs that are queued
    or running elsewhere are waited for, so that the rules can go on.
    ``trusted``: the configs outside the checkout's ``configs/`` that the
    command starting this worker named (:class:`~.sweep.Sweep`). A worker
    with nothing to run looks again after ``first_poll`` seconds, then
    twice as long each time up to ``poll`` (short runs of other workers
    end soon; a long wait costs the storage little). Stopped (SIGTERM,
    Ctrl-C), it fails the trial it runs as lost and queues the run again,
    then stops."""
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
                               first_poll, heartbeat, grace, max_trials)
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


def _run_until_done(sweep: Sweep, name: str, current: dict, stop: _Stop,
                    progress: SweepProgress, poll: float, first_poll: float,
                    heartbeat: float, grace: float,
                    max_trials: Optional[int]) -> dict:
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
        print(progress.trial_line(attrs['run']), file=sys.stderr, flush=True)
        watch = EpochWatch(
            osp.join(
                abs_path(sweep.definition['work_dir']), attrs['run'],
                'log.txt'), f'[{name}] {attrs["run"]}',
            int(attrs['point'].get(EPOCHS_KEY, 0)))
        try:
            run_trial(sweep, group, trial_id, attrs)
        finally:
            watch.close()
            beat.close()
        current.clear()
        ran += 1
        progress.ran += 1
        record = sweep.storage.get_trial(trial_id)
        value = f'val mAP {record.value:.2f}' if record.value is not None \
            else record.user_attrs.get('failure') or \
            f'pruned at epoch {record.user_attrs.get("pruned at epoch")}'
        print(
            f'[{name}] {attrs["run"]}: {record.state.name.lower()}, {value}',
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
    args = parser.parse_args(argv)
    result = work(
        args.storage,
        args.study,
        poll=args.poll,
        heartbeat=args.heartbeat,
        grace=args.grace,
        trusted=args.trust_config)
    for error in result['errors']:
        print(f'[worker] failed: {error}', file=sys.stderr)
    return result


if __name__ == '__main__':
    main()
