"""Compare methods on the embedded benchmark: configs x settings x seeds.

With ``--tune`` (the headline tables) every config is first tuned on the
validation split (:mod:`mmlml.analysis.benchmark_tuning`: learning rates,
its ``tuning`` hyperparameter, longer schedules) and the seeds run at the
chosen point; every run is recorded in ``--out`` as it finishes and reused
from there, and the papers' claims are checked
(:mod:`mmlml.analysis.paper_claims`). Without it, every config trains with
its own recipe, as described below.

Every run fine-tunes the backbone pretrained on the source task
(configs/benchmark/source_pretrain.py) on the partial labels of the demo
dataset, keeps the checkpoint with the best validation mAP (validation
labels are as partial as the training labels), and evaluates it on the
fully labelled test split. The result is one markdown table per setting
(mean ± std over seeds of test mAP, CF1 as the papers define it, OF1, and
the share of the AN -> full-label gap in mAP that each method closes), a
JSON file with every run, and a figure::

    python tools/benchmark.py configs/demo/*.py --seeds 0 1 2 \\
        --settings single_positive r0.5 r0.8 --jobs 2 \\
        --out docs/benchmark.json --markdown docs/benchmark.md \\
        --figure docs/figures/benchmark.png

Settings (the training and validation labels; the oracle, whose training
set is in the ``'full'`` mode, keeps its full training labels):

- ``single_positive``: one positive per image (Cole et al.);
- ``r0.5``, ``r0.8``: the missing-ratio protocol of Zhang et al., each
  image keeps ``floor(n (1 - r)) + 1`` of its ``n`` positives.

Modes: ``finetune`` trains the whole network end to end (the papers'
protocol); ``linear`` freezes the pretrained backbone, batch-norm
statistics included, and trains the linear head only (Cole et al.'s
linear protocol) at ``--linear-lr``.

Each run is a ``tools/demo.py`` process with ``--threads`` threads, ``--jobs``
of them at a time; a run whose result file exists is not repeated, so an
interrupted benchmark continues where it stopped (``--force`` reruns). A
config that trains on a label file (``mode='file'``) and names a
``first_stage = dict(config=..., thr=...)`` is the second stage of a
two-stage method: its labels are made by ``tools/pseudo_label.py`` from the
first stage's best checkpoint of the same seed, setting and mode. A config
with ``first_stage = dict(config=..., scores_file=KEY)`` gets the scores of
its training images by that checkpoint (``tools/vl_pseudo_label.py`` with a
``ModelPseudoLabeller``) in the file its config key ``KEY`` names (the
``scores_file`` of its ``VLPseudoLabelHook``).

Progress: each finished run prints a line with its test mAP, the runs done
of how many, the time elapsed and the estimated time left; while runs go
on, stderr lists the runs in progress at least a minute apart (a run's own
log, with MMEngine's per-iteration ETA, is ``log.txt`` in its folder).
"""
import argparse
import itertools
import json
import math
import os
import os.path as osp
import platform
import queue
import shlex
import subprocess
import sys
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Optional

sys.path.insert(0, osp.dirname(osp.dirname(osp.abspath(__file__))))

import torch  # noqa: E402
from mmengine.config import Config, DictAction  # noqa: E402

from mmlml.analysis.benchmark_results import aggregate  # noqa: E402
from mmlml.analysis.benchmark_results import markdown_table  # noqa: E402
from mmlml.analysis.benchmark_tuning import EPOCHS_KEY  # noqa: E402
from mmlml.analysis.benchmark_tuning import LR_KEY  # noqa: E402
from mmlml.analysis.benchmark_tuning import key_hyperparameter  # noqa: E402
from mmlml.analysis.benchmark_tuning import point_name  # noqa: E402
from mmlml.analysis.benchmark_tuning import summarise_tuning  # noqa: E402
from mmlml.analysis.benchmark_tuning import tune  # noqa: E402
from mmlml.analysis.benchmark_tuning import tuned_table  # noqa: E402
from mmlml.analysis.paper_claims import claims_markdown  # noqa: E402
from mmlml.output_files import check_output  # noqa: E402
from mmlml.utils.progress_line import ProgressLine  # noqa: E402
from mmlml.utils.progress_line import format_duration  # noqa: E402

TOOLS = osp.dirname(osp.abspath(__file__))

SETTINGS = {
    'single_positive': dict(mode='single_positive'),
    'r0.5': dict(mode='ratio', ratio=0.5),
    'r0.8': dict(mode='ratio', ratio=0.8),
}

SETTING_TITLES = {
    'single_positive': 'Single positive label per image',
    'r0.5': 'Missing ratio r = 0.5',
    'r0.8': 'Missing ratio r = 0.8',
}

MODES = ('finetune', 'linear')


def _dataset_modes(config: str) -> tuple:
    """The ``mode`` of the training and validation PartialLabelDatasets of
    ``config``, and its ``first_stage`` (None for a one-stage method)."""
    cfg = Config.fromfile(config)
    train = cfg.train_dataloader.dataset
    val = cfg.val_dataloader.dataset
    for dataset, split in ((train, 'train'), (val, 'val')):
        if dataset.get('type') != 'PartialLabelDataset':
            raise ValueError(
                f'{config}: the benchmark changes the labels of the '
                f'{split} set, which must be a PartialLabelDataset, not '
                f'{dataset.get("type")}.')
    first_stage = cfg.get('first_stage')
    if train.mode == 'file' and first_stage is None:
        raise ValueError(
            f"{config} trains on a label file (mode='file') but names no "
            "`first_stage = dict(config=..., thr=...)` to make it from.")
    if first_stage is not None:
        first_stage = dict(first_stage)
        first_stage['config'] = osp.normpath(
            osp.join(osp.dirname(config), first_stage['config']))
    return train.mode, val.mode, first_stage


def setting_options(setting: str, train_mode: str) -> dict:
    """The ``--cfg-options`` that put a config in ``setting``: the
    validation labels always, the training labels unless they are the full
    labels (the oracle) or a label file (a second stage)."""
    options = {}
    targets = ['val_dataloader.dataset']
    if train_mode not in ('full', 'file'):
        targets.append('train_dataloader.dataset')
    for target in targets:
        for key, value in SETTINGS[setting].items():
            options[f'{target}.{key}'] = value
        if 'ratio' not in SETTINGS[setting]:
            options[f'{target}.ratio'] = None
    return options


def mode_options(mode: str, linear_lr: float) -> dict:
    """The ``--cfg-options`` of a training mode."""
    if mode == 'linear':
        return {
            'model.backbone.frozen_stages': 4,
            'model.backbone.norm_eval': True,
            'optim_wrapper.optimizer.lr': linear_lr,
        }
    return {}


def _seeds(seeds) -> str:
    return f'{len(seeds)} seed' + ('s' if len(seeds) > 1 else '')


def _format_options(options: dict) -> list:
    args = []
    for key, value in options.items():
        args.append(f'{key}={"None" if value is None else value}')
    return args


class Benchmark:
    """Runs and collects ``tools/demo.py`` runs under ``work_dir``."""

    def __init__(self, args):
        self.args = args
        self.work_dir = args.work_dir

    def run_dir(self, mode, setting, name, seed, point=None) -> str:
        """``WORK_DIR/MODE/SETTING[/POINT]/CONFIG/seedN`` (the tuning point,
        e.g. ``lr0.1_ep20``)."""
        parts = [self.work_dir, mode, setting]
        if point is not None:
            parts.append(point_name(point))
        return osp.join(*parts, name, f'seed{seed}')

    def options(self,
                mode: str,
                setting: str,
                train_mode: str,
                point: Optional[dict] = None) -> dict:
        """The overrides of a run: ``--cfg-options``, then the mode's, then
        the tuning point's, then the setting's."""
        options = dict(self.args.cfg_options or {})
        options.update(mode_options(mode, self.args.linear_lr))
        options.update(point or {})
        options.update(setting_options(setting, train_mode))
        return options

    def _call(self, cmd: list, log: str) -> None:
        env = dict(os.environ)
        for var in ('OMP_NUM_THREADS', 'MKL_NUM_THREADS'):
            env[var] = str(self.args.threads)
        with open(log, 'a') as f:
            f.write('$ ' + ' '.join(cmd) + '\n')
            f.flush()
            result = subprocess.run(
                cmd, stdout=f, stderr=subprocess.STDOUT, env=env)
        if result.returncode:
            raise RuntimeError(f'Command failed ({result.returncode}), see '
                               f'{log}: {" ".join(cmd)}')

    def finished(self,
                 config: str,
                 mode: str,
                 setting: str,
                 seed: int,
                 point: Optional[dict] = None) -> bool:
        """Whether the run has a result that :meth:`train` reuses."""
        name = osp.splitext(osp.basename(config))[0]
        result_file = osp.join(
            self.run_dir(mode, setting, name, seed, point), 'result.json')
        return osp.exists(result_file) and not self.args.force

    def cached(self,
               config: str,
               mode: str,
               setting: str,
               seed: int,
               point: Optional[dict] = None) -> Optional[dict]:
        """The summary of a finished run (its ``result.json``), or None."""
        if not self.finished(config, mode, setting, seed, point):
            return None
        name = osp.splitext(osp.basename(config))[0]
        with open(
                osp.join(
                    self.run_dir(mode, setting, name, seed, point),
                    'result.json')) as f:
            return json.load(f)

    def first_point(self, first_config: str, mode: str,
                    setting: str) -> Optional[dict]:
        """The point at which a second stage's first stage trains: none
        (the config's own recipe) without tuning."""
        return None

    def train(self,
              config: str,
              mode: str,
              setting: str,
              seed: int,
              point: Optional[dict] = None,
              need_checkpoint: bool = False) -> dict:
        """Train and test one config at ``point`` (its first stage first, if
        any); return the run's summary. A finished run is reused, unless
        its checkpoint is needed (a first stage) and gone."""
        name = osp.splitext(osp.basename(config))[0]
        run_dir = self.run_dir(mode, setting, name, seed, point)
        result_file = osp.join(run_dir, 'result.json')
        cached = self.cached(config, mode, setting, seed, point)
        if cached is not None and (not need_checkpoint
                                   or osp.exists(cached['best checkpoint'])):
            return dict(cached, cached=True)
        os.makedirs(run_dir, exist_ok=True)
        train_mode, _, first_stage = _dataset_modes(config)
        options = self.options(mode, setting, train_mode, point)
        if first_stage is not None:
            first_point = self.first_point(first_stage['config'], mode,
                                           setting)
            first = self.train(
                first_stage['config'],
                mode,
                setting,
                seed,
                first_point,
                need_checkpoint=True)
            if 'scores_file' in first_stage:
                # Scores of the training images for a pseudo-labelling hook.
                scores = osp.join(run_dir, 'scores.npy')
                self._call([
                    sys.executable,
                    osp.join(TOOLS, 'vl_pseudo_label.py'), config, '--out',
                    scores, '--force', '--device', 'cpu', '--labeller-options',
                    'type=ModelPseudoLabeller',
                    f'config={first_stage["config"]}',
                    f'checkpoint={first["best checkpoint"]}', '--cfg-options'
                ] + _format_options(options), osp.join(run_dir, 'log.txt'))
                options[first_stage['scores_file']] = scores
            else:
                labels = osp.join(run_dir, 'pseudo_labels.npy')
                first_options = self.options(
                    mode, setting,
                    _dataset_modes(first_stage['config'])[0], first_point)
                self._call([
                    sys.executable,
                    osp.join(TOOLS, 'pseudo_label.py'), first_stage['config'],
                    first['best checkpoint'], '--out', labels, '--thr',
                    str(first_stage.get(
                        'thr', 0.5)), '--device', 'cpu', '--cfg-options'
                ] + _format_options(first_options),
                           osp.join(run_dir, 'log.txt'))
                options['train_dataloader.dataset.label_file'] = labels
        out = osp.join(run_dir, 'demo.json')
        self._call([
            sys.executable,
            osp.join(TOOLS, 'demo.py'), config, '--seeds',
            str(seed), '--work-dir',
            osp.dirname(osp.dirname(run_dir)), '--out', out, '--cfg-options'
        ] + _format_options(options), osp.join(run_dir, 'log.txt'))
        with open(out) as f:
            summary = json.load(f)[name]['runs'][0]
        summary.update(seed=seed, setting=setting, mode=mode, config=config)
        if point is not None:
            summary['point'] = point
        with open(result_file, 'w') as f:
            json.dump(summary, f, indent=2)
        return summary

    def run_all(self) -> dict:
        """Every (mode, setting, config, seed), ``--jobs`` at a time;
        returns ``{mode: {setting: {name: aggregate}}}``."""
        args = self.args
        tasks = [(config, mode, setting, seed) for mode in args.modes
                 for setting in args.settings for config in args.configs
                 for seed in args.seeds]
        # A second stage trains its first stage itself; run the first
        # stages before so that two jobs do not train the same run.
        firsts = {
            _dataset_modes(c)[2]['config']
            for c in args.configs if _dataset_modes(c)[2] is not None
        }
        tasks.sort(key=lambda t: t[0] not in firsts)
        first_runs = [t for t in tasks if t[0] in firsts]
        start = time.time()
        # Progress: a line per finished run (stdout) with the estimated
        # time left, and on stderr, while runs go on, a line at least a
        # minute apart with the runs in progress.
        to_train = sum(not self.finished(*t) for t in tasks)
        if args.force:  # the first stages run twice (see below)
            to_train += len(first_runs)
        progress = ProgressLine('[benchmark] runs', to_train, interval=60)
        print(
            f'[benchmark] {len(tasks)} runs, {len(tasks) - to_train} '
            f'finished before, {args.jobs} at a time; each run logs to '
            f'{osp.join(self.work_dir, "MODE", "SETTING", "CONFIG", "seedN")}'
            '/log.txt',
            file=sys.stderr,
            flush=True)
        lock = threading.Lock()
        running = set()

        def work(task):
            name = osp.splitext(osp.basename(task[0]))[0]
            label = f'{task[1]} {task[2]} {name} seed {task[3]}'
            with lock:
                running.add(label)
            try:
                summary = self.train(*task)
            finally:
                with lock:
                    running.discard(label)
            if summary.pop('cached', False):
                return summary
            with lock:
                progress.done += 1
                eta = progress.eta()
                left = '' if eta is None or progress.done >= to_train else \
                    f', ETA {format_duration(eta)}'
                print(
                    f'[{progress.done}/{to_train}] [{label}] test mAP '
                    f'{summary["mAP"]:.2f} ({summary["minutes"]:.1f} min; '
                    f'{(time.time() - start) / 60:.1f} min elapsed{left})',
                    flush=True)
                progress.last = time.monotonic()
            return summary

        stop = threading.Event()

        def heartbeat():
            while not stop.wait(5):
                with lock:
                    if running:
                        progress.poll('running: ' + ', '.join(sorted(running)))

        thread = threading.Thread(target=heartbeat, daemon=True)
        thread.start()
        try:
            with ThreadPoolExecutor(args.jobs) as pool:
                list(pool.map(work, first_runs))
                summaries = list(pool.map(work, tasks))
        finally:
            stop.set()
            thread.join()
        results = {}
        for (config, mode, setting, _), summary in zip(tasks, summaries):
            name = osp.splitext(osp.basename(config))[0]
            results.setdefault(mode, {}).setdefault(setting, {}).setdefault(
                name, []).append(summary)
        minutes = (time.time() - start) / 60
        return {
            mode: {
                setting: {
                    name: aggregate(runs)
                    for name, runs in by_name.items()
                }
                for setting, by_name in by_setting.items()
            }
            for mode, by_setting in results.items()
        }, minutes


class RunPool:
    """``jobs`` worker threads that run submitted calls, the lowest
    priority first, so that the configs finish in their order while every
    worker stays busy."""

    def __init__(self, jobs: int):
        self.queue = queue.PriorityQueue()
        self.count = itertools.count()
        self.threads = [
            threading.Thread(target=self._work, daemon=True)
            for _ in range(jobs)
        ]
        for thread in self.threads:
            thread.start()

    def submit(self, priority: int, fn, *args) -> Future:
        future = Future()
        self.queue.put((priority, next(self.count), fn, args, future))
        return future

    def _work(self):
        while True:
            _, _, fn, args, future = self.queue.get()
            if fn is None:
                return
            try:
                future.set_result(fn(*args))
            except BaseException as error:  # noqa: B036 (handed over)
                future.set_exception(error)

    def close(self):
        for _ in self.threads:
            self.queue.put((math.inf, next(self.count), None, (), None))
        for thread in self.threads:
            thread.join()


class NotRecorded(Exception):
    """A run that ``--report-only`` finds neither in --out nor in the work
    directory."""


class TunedBenchmark(Benchmark):
    """Tunes every (mode, setting, config) on validation
    (:func:`~mmlml.analysis.benchmark_tuning.tune`), then trains the other
    seeds at the chosen point. Every finished run is recorded in ``--out``
    at once, and a run recorded there (or with a ``result.json`` in its
    folder) is not repeated, so a benchmark interrupted on one machine
    continues on another from the committed JSON."""

    def __init__(self, args):
        super().__init__(args)
        self.lock = threading.Lock()
        self.recorded = {}
        self.rows = {}
        if args.out and osp.exists(args.out) and not args.force:
            with open(args.out) as f:
                self.recorded = json.load(f).get('runs', {})
        self.done = 0
        self.start = time.time()

    def run_id(self, config, mode, setting, seed, point) -> str:
        name = osp.splitext(osp.basename(config))[0]
        return osp.relpath(
            self.run_dir(mode, setting, name, seed, point), self.work_dir)

    def cached(self, config, mode, setting, seed, point=None):
        summary = super().cached(config, mode, setting, seed, point)
        if summary is None and not self.args.force:
            summary = self.recorded.get(
                self.run_id(config, mode, setting, seed, point))
            if summary is not None:
                summary = dict(summary)
                summary['best checkpoint'] = osp.join(
                    self.work_dir, summary['best checkpoint'])
        return summary

    def first_point(self, first_config, mode, setting):
        return self.tuned[(first_config, mode, setting)].result()['chosen']

    def train(self, config, mode, setting, seed, point=None, **kwargs):
        if self.args.report_only and self.cached(config, mode, setting, seed,
                                                 point) is None:
            raise NotRecorded(config)
        return super().train(config, mode, setting, seed, point, **kwargs)

    def run_one(self, config, mode, setting, seed, point) -> dict:
        summary = self.train(config, mode, setting, seed, point)
        cached = summary.pop('cached', False)
        run_id = self.run_id(config, mode, setting, seed, point)
        with self.lock:
            self.recorded[run_id] = relative_paths(summary, self.work_dir)
            if not cached:
                self.done += 1
                print(
                    f'[{self.done} trained] [{run_id}] val mAP '
                    f'{summary["val mAP"]:.2f} (best epoch '
                    f'{summary["best epoch"]}/{summary["epochs"]}), test mAP '
                    f'{summary["mAP"]:.2f} ({summary["minutes"]:.1f} min; '
                    f'{(time.time() - self.start) / 60:.1f} min elapsed)',
                    flush=True)
                self.save()
        return summary

    def tune_one(self, priority, config, mode, setting) -> dict:
        """Tune one config in one setting and mode; its row of the
        tables."""
        first_stage = _dataset_modes(config)[2]
        if first_stage is not None:  # its runs must not race the first's
            self.tuned[(first_stage['config'], mode, setting)].result()
        cfg = Config.fromfile(config)
        cfg.merge_from_dict(self.args.cfg_options or {})
        hyperparameter = key_hyperparameter(cfg, config)

        def run_points(points, seeds):
            futures = [
                self.pool.submit(priority, self.run_one, config, mode, setting,
                                 seed, point)
                for point, seed in zip(points, seeds)
            ]
            return [future.result() for future in futures]

        epochs = cfg.train_cfg.max_epochs
        tuned = tune(run_points, self.args.lrs, epochs, self.args.seeds,
                     hyperparameter, self.args.max_doublings)
        own = {EPOCHS_KEY: epochs, LR_KEY: cfg.optim_wrapper.optimizer.lr}
        if hyperparameter is not None:
            own[hyperparameter[0]] = hyperparameter[1][0]
        name = osp.splitext(osp.basename(config))[0]
        with self.lock:
            self.rows.setdefault(mode, {}).setdefault(
                setting, {})[name] = summarise_tuning(tuned, own)
            self.save()
            # The tables so far, so that an interrupted run leaves them.
            write_reports(self.results(), self.args,
                          (time.time() - self.start) / 60)
        return tuned

    def results(self) -> dict:
        """The finished rows, ``{mode: {setting: {name: row}}}``."""
        return {
            mode: {
                setting: dict(rows)
                for setting, rows in by_setting.items()
            }
            for mode, by_setting in self.rows.items()
        }

    def save(self) -> None:
        """Write ``--out`` (every run so far and the finished rows); called
        with the lock held."""
        if not self.args.out or self.args.report_only:
            return
        data = dict(
            command=' '.join(['python'] + sys.argv),
            tuning=dict(
                lrs=self.args.lrs,
                seeds=self.args.seeds,
                max_doublings=self.args.max_doublings,
                domain=self.args.domain),
            minutes=(time.time() - self.start) / 60,
            run_minutes=sum(
                run.get('minutes', 0) for run in self.recorded.values()),
            platform=platform.platform(),
            torch=torch.__version__,
            work_dir=osp.relpath(self.work_dir),
            results=relative_paths(self.results(), self.work_dir),
            runs=self.recorded)
        tmp = self.args.out + '.tmp'
        with open(tmp, 'w') as f:
            json.dump(data, f, indent=1)
        os.replace(tmp, self.args.out)

    def run_all(self):
        args = self.args
        configs = list(args.configs)
        for config in args.configs:  # first stages are tuned too
            first_stage = _dataset_modes(config)[2]
            if first_stage is not None and \
                    first_stage['config'] not in configs:
                configs.insert(0, first_stage['config'])
        tasks = [(config, mode, setting) for mode in args.modes
                 for setting in args.settings for config in configs]
        self.tuned = {task: Future() for task in tasks}
        print(
            f'[benchmark] tuning {len(tasks)} (config, setting, mode) on '
            f'validation: learning rates {args.lrs}, then each config\'s '
            f'`tuning` values, then longer schedules; seeds {args.seeds}; '
            f'{args.jobs} runs at a time; each run logs to '
            f'{osp.join(self.work_dir, "MODE", "SETTING", "POINT", "CONFIG")}'
            '/seedN/log.txt',
            file=sys.stderr,
            flush=True)
        self.pool = RunPool(args.jobs)

        def coordinate(priority, task):
            try:
                self.tuned[task].set_result(self.tune_one(priority, *task))
            except BaseException as error:  # noqa: B036 (re-raised below)
                self.tuned[task].set_exception(error)

        threads = [
            threading.Thread(target=coordinate, args=(i, task), daemon=True)
            for i, task in enumerate(tasks)
        ]
        for thread in threads:
            thread.start()
        self.errors = []
        try:
            for task in tasks:
                try:
                    self.tuned[task].result()
                except NotRecorded:  # --report-only: left out
                    pass
                except Exception as error:  # the others go on
                    self.errors.append(
                        f'{task[1]} {task[2]} {task[0]}: {error}')
        finally:
            self.pool.close()
        return self.results(), (time.time() - self.start) / 60


def report(results: dict, args, minutes: float) -> str:
    """The markdown tables of every mode and setting."""
    parts = []
    for mode, by_setting in results.items():
        for setting, rows in by_setting.items():
            ordered = dict(sorted(rows.items(), key=lambda kv: -kv[1]['mAP']))
            tuned = ', tuned on validation' if args.tune else ''
            parts.append(f'**{SETTING_TITLES[setting]}, {mode} '
                         f'({_seeds(args.seeds)}{tuned})**\n')
            table = tuned_table if args.tune else markdown_table
            parts.append(
                table(ordered, baseline=args.baseline, oracle=args.oracle) +
                '\n')
    parts.append(f'{minutes:.0f} minutes with {args.jobs} jobs of '
                 f'{args.threads} thread(s) each.')
    return '\n'.join(parts)


def plot(results: dict, args, path: str) -> None:
    """One panel per (mode, setting): test mAP of each method (mean and
    std over seeds), the baseline and the oracle as vertical lines."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    panels = [(mode, setting, rows) for mode, by_setting in results.items()
              for setting, rows in by_setting.items()]
    height = max(len(rows) for _, _, rows in panels) * 0.28 + 1.2
    fig, axes = plt.subplots(
        1, len(panels), figsize=(5.2 * len(panels), height), squeeze=False)
    for ax, (mode, setting, rows) in zip(axes[0], panels):
        ordered = sorted(rows.items(), key=lambda kv: kv[1]['mAP'])
        names = [name for name, _ in ordered]
        means = [row['mAP'] for _, row in ordered]
        stds = [row['std']['mAP'] for _, row in ordered]
        colours = [
            'tab:red' if name == args.baseline else
            'tab:green' if name == args.oracle else 'tab:blue'
            for name in names
        ]
        ax.barh(names, means, xerr=stds, color=colours, capsize=2)
        for ref, colour in ((args.baseline, 'tab:red'), (args.oracle,
                                                         'tab:green')):
            if ref in rows:
                ax.axvline(rows[ref]['mAP'], color=colour, ls='--', lw=1)
        low = min(m - s for m, s in zip(means, stds))
        ax.set_xlim(max(0, low - 2), 100)
        ax.set_xlabel('test mAP (%)')
        ax.set_title(
            f'{SETTING_TITLES[setting]}\n({mode}, '
            f'{_seeds(args.seeds)})',
            fontsize=10)
        ax.tick_params(axis='y', labelsize=8)
    fig.tight_layout()
    os.makedirs(osp.dirname(osp.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument(
        'configs',
        nargs='*',
        help='method configs (default: every config in configs/demo)')
    parser.add_argument(
        '--seeds',
        nargs='+',
        type=int,
        default=[0, 1, 2],
        help='training seeds; every config is trained once per seed, '
        'setting and mode (default: 0 1 2)')
    parser.add_argument(
        '--settings',
        nargs='+',
        choices=list(SETTINGS),
        default=['single_positive'],
        help='the partial labels of the training and validation sets: one '
        'positive per image, or the missing ratio 0.5 / 0.8 (default: '
        'single_positive)')
    parser.add_argument(
        '--modes',
        nargs='+',
        choices=MODES,
        default=['finetune'],
        help='finetune: train the whole network; linear: freeze the '
        'pretrained backbone and train the head only (default: finetune)')
    parser.add_argument(
        '--linear-lr',
        type=float,
        default=0.1,
        help='learning rate of the linear mode (default: 0.1)')
    parser.add_argument(
        '--jobs', type=int, default=2, help='runs at a time (default: 2)')
    parser.add_argument(
        '--threads',
        type=int,
        default=1,
        help='torch threads of each run (default: 1)')
    parser.add_argument(
        '--baseline',
        default='an',
        help='the config name the tables and the figure compare with (the '
        'low end of the gap closed; default: an)')
    parser.add_argument(
        '--oracle',
        default='full_labels',
        help='the config name trained on full labels (the high end of the '
        'gap closed; default: full_labels)')
    parser.add_argument(
        '--work-dir',
        default='work_dirs/benchmark',
        help='where the runs are kept, one folder per mode, setting, config '
        'and seed; a run whose folder has a result is not repeated '
        '(default: work_dirs/benchmark)')
    parser.add_argument('--out', help='JSON file of every run')
    parser.add_argument('--markdown', help='markdown file of the tables')
    parser.add_argument('--figure', help='PNG file of the comparison')
    parser.add_argument(
        '--force',
        action='store_true',
        help='rerun finished runs and replace existing --out, --markdown '
        'and --figure files')
    parser.add_argument(
        '--cfg-options',
        nargs='+',
        action=DictAction,
        help='override settings of every run (before the mode and the '
        'setting)')
    parser.add_argument(
        '--tune',
        action='store_true',
        help='tune every config on validation mAP (learning rates, its '
        '`tuning` values, longer schedules; on the first seed), then train '
        'the other seeds at the chosen point; --out records every run as it '
        'finishes and is read back to continue an interrupted benchmark')
    parser.add_argument(
        '--lrs',
        nargs='+',
        type=float,
        default=[0.01, 0.03, 0.1, 0.3],
        help='with --tune: the learning rates tried (default: 0.01 0.03 0.1 '
        '0.3)')
    parser.add_argument(
        '--max-doublings',
        type=int,
        default=1,
        help='with --tune: how many times the epochs of the best point are '
        'doubled while its best validation epoch is its last (default: 1)')
    parser.add_argument(
        '--report-only',
        action='store_true',
        help='with --tune: train nothing; write the tables, claims and '
        'figure of the configs whose runs --out (or the work directory) '
        'already holds, leaving the others out')
    parser.add_argument(
        '--claims',
        help='with --tune: markdown file of the papers\' claims checked '
        'against the tuned results')
    parser.add_argument(
        '--domain',
        choices=domains(),
        help='the data and backbone of the demo configs (a file of '
        'configs/_base_/domains/; default: the configs\' own, '
        'synthetic_shapes); sets MMLML_DEMO_DOMAIN for every run')
    args = parser.parse_args(argv)
    outputs = ('out', 'markdown', 'figure', 'claims')
    if (args.claims or args.report_only) and not args.tune:
        parser.error('--claims and --report-only need --tune')
    if args.lrs and min(args.lrs) <= 0:
        parser.error('--lrs must be positive')
    if args.max_doublings < 0:
        parser.error('--max-doublings must be >= 0')
    if args.tune and args.out and osp.exists(args.out) and not args.force:
        # Continuing a tuned benchmark: its files are the tool's own.
        check_tuned_json(args.out, parser)
        outputs = ()
    for option in outputs:
        check_output(
            getattr(args, option),
            args.configs or (),
            args.force,
            option='--' + option)
    if args.domain and args.work_dir == parser.get_default('work_dir'):
        args.work_dir += f'_{args.domain}'
    if not args.configs:
        demo = osp.join(osp.dirname(TOOLS), 'configs', 'demo')
        args.configs = sorted(
            osp.join(demo, f) for f in os.listdir(demo) if f.endswith('.py'))
    for config in args.configs:
        if not osp.isfile(config):
            parser.error(f'no config file {config}')
    if args.jobs < 1 or args.threads < 1:
        parser.error('--jobs and --threads must be positive')
    return args


def relative_paths(value, work_dir: str):
    """``value`` (the results) with every path under ``work_dir`` (the
    checkpoints) written relative to it and every other path under the
    repository (the configs) relative to the repository, so that the JSON
    names no directory of the machine that ran it."""
    if isinstance(value, dict):
        return {k: relative_paths(v, work_dir) for k, v in value.items()}
    if isinstance(value, list):
        return [relative_paths(v, work_dir) for v in value]
    if isinstance(value, str) and osp.isabs(value):
        for base in (osp.abspath(work_dir), osp.dirname(TOOLS)):
            relative = osp.relpath(value, base)
            if not relative.startswith('..'):
                return relative
    return value


def domains() -> list:
    """The names of configs/_base_/domains/*.py."""
    folder = osp.join(osp.dirname(TOOLS), 'configs', '_base_', 'domains')
    if not osp.isdir(folder):
        return []
    return sorted(
        osp.splitext(f)[0] for f in os.listdir(folder) if f.endswith('.py'))


def use_domain(domain: Optional[str]) -> None:
    """Select the domain of the demo configs for this process and its runs,
    and make what the domain needs first (its ``prepare_command``, e.g. a
    converted checkpoint) when ``prepare_creates`` is missing."""
    if domain is None:
        return
    os.environ['MMLML_DEMO_DOMAIN'] = domain
    root = osp.dirname(TOOLS)
    cfg = Config.fromfile(
        osp.join(root, 'configs', '_base_', 'domains', f'{domain}.py'))
    creates = cfg.get('prepare_creates')
    if creates and not osp.exists(osp.join(root, creates)):
        command = shlex.split(cfg.prepare_command)
        if command[0] == 'python':
            command[0] = sys.executable
        print(
            f'[benchmark] domain {domain}: making {creates}: '
            f'{" ".join(command)}',
            file=sys.stderr,
            flush=True)
        subprocess.run(command, cwd=root, check=True)


def check_tuned_json(path: str, parser) -> None:
    """Refuse to continue from ``path`` unless a tuned benchmark wrote
    it."""
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError) as error:
        parser.error(f'--out {path} exists and is not a JSON file of a tuned '
                     f'benchmark to continue ({error}); choose another file '
                     'or pass --force to replace it')
    if not isinstance(data, dict) or 'runs' not in data or \
            'tuning' not in data:
        parser.error(f'--out {path} exists and is not the JSON of a tuned '
                     'benchmark to continue; choose another file or pass '
                     '--force to replace it')


def main(argv=None):
    args = parse_args(argv)
    use_domain(args.domain)
    benchmark = (TunedBenchmark if args.tune else Benchmark)(args)
    results, minutes = benchmark.run_all()
    print('\n' + write_reports(results, args, minutes))
    if args.tune:
        if benchmark.errors:
            raise SystemExit('[benchmark] failed:\n' +
                             '\n'.join(benchmark.errors))
        return results
    if args.out:
        with open(args.out, 'w') as f:
            json.dump(
                dict(
                    command=' '.join(['python'] + sys.argv),
                    minutes=minutes,
                    platform=platform.platform(),
                    torch=torch.__version__,
                    work_dir=osp.relpath(args.work_dir),
                    results=relative_paths(results, args.work_dir)),
                f,
                indent=1)
    return results


def write_reports(results: dict, args, minutes: float) -> str:
    """Write the --markdown, --claims and --figure files of ``results``;
    return the markdown."""
    text = report(results, args, minutes)
    if args.markdown:
        with open(args.markdown, 'w') as f:
            f.write(text + '\n')
    if args.claims:
        with open(args.claims, 'w') as f:
            f.write(claims_report(results, args))
    if args.figure and results:
        plot(results, args, args.figure)
    return text


def claims_report(results: dict, args) -> str:
    """The markdown of the papers' claims, per mode."""
    parts = [
        '<!-- Generated by tools/benchmark.py --claims from the runs of '
        f'{args.out or "this benchmark"}; do not edit. -->\n'
    ]
    for mode, by_setting in results.items():
        domain = args.domain or 'synthetic_shapes'
        parts.append(f'## Paper claims: {domain}, {mode}, tuned on '
                     f'validation ({_seeds(args.seeds)})\n')
        parts.append(
            claims_markdown(by_setting, SETTING_TITLES, args.baseline,
                            args.oracle))
    return '\n'.join(parts)


if __name__ == '__main__':
    main()
