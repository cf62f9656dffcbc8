"""The runs of the embedded benchmark: configs x settings x modes x seeds,
each a ``tools/demo.py`` process (:class:`Benchmark`), and the overrides
that put a config in a setting and a mode.

Used by ``tools/benchmark.py`` (whose docstring describes the settings,
the modes and the runs); :mod:`.tuned_benchmark` tunes every config first,
:mod:`.benchmark_report` writes the tables and the figure.
"""
import json
import os
import os.path as osp
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Optional

from mmengine.config import Config

from mmlml.utils.progress_line import ProgressLine, format_duration
from .benchmark_results import aggregate
from .benchmark_tuning import point_name

__all__ = [
    'SETTINGS', 'SETTING_TITLES', 'MODES', 'dataset_modes', 'setting_options',
    'mode_options', 'format_options', 'relative_paths', 'Benchmark'
]

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


def dataset_modes(config: str) -> tuple:
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
    validation split's labels always (they count where it validates on
    its observed labels, ``val_labels='observed'``; the demo configs
    validate on the full ones), the training labels unless they are the
    full labels (the oracle) or a label file (a second stage)."""
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


def format_options(options: dict) -> list:
    """``options`` as the ``KEY=VALUE`` arguments of ``--cfg-options``."""
    args = []
    for key, value in options.items():
        args.append(f'{key}={"None" if value is None else value}')
    return args


def relative_paths(value, work_dir: str, root: str):
    """``value`` (the results) with every path under ``work_dir`` (the
    checkpoints) written relative to it and every other path under
    ``root``, the repository (the configs), relative to the repository, so
    that the JSON names no directory of the machine that ran it."""
    if isinstance(value, dict):
        return {k: relative_paths(v, work_dir, root) for k, v in value.items()}
    if isinstance(value, list):
        return [relative_paths(v, work_dir, root) for v in value]
    if isinstance(value, str) and osp.isabs(value):
        for base in (osp.abspath(work_dir), root):
            relative = osp.relpath(value, base)
            if not relative.startswith('..'):
                return relative
    return value


class Benchmark:
    """Runs and collects ``tools/demo.py`` runs under ``work_dir``.

    Args:
        args: the arguments of ``tools/benchmark.py``.
        tools_dir (str): the folder of ``demo.py``, ``pseudo_label.py`` and
            ``vl_pseudo_label.py``, the tools that each run calls.
    """

    def __init__(self, args, tools_dir: str):
        self.args = args
        self.tools_dir = tools_dir
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
        # The run directory is the benchmark's own: what an interrupted
        # attempt left there (no result.json) is replaced (--force).
        os.makedirs(run_dir, exist_ok=True)
        train_mode, _, first_stage = dataset_modes(config)
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
                    osp.join(self.tools_dir, 'vl_pseudo_label.py'), config,
                    '--out', scores, '--force', '--device', 'cpu',
                    '--labeller-options', 'type=ModelPseudoLabeller',
                    f'config={first_stage["config"]}',
                    f'checkpoint={first["best checkpoint"]}', '--cfg-options'
                ] + format_options(options), osp.join(run_dir, 'log.txt'))
                options[first_stage['scores_file']] = scores
            else:
                labels = osp.join(run_dir, 'pseudo_labels.npy')
                first_options = self.options(
                    mode, setting,
                    dataset_modes(first_stage['config'])[0], first_point)
                self._call([
                    sys.executable,
                    osp.join(self.tools_dir, 'pseudo_label.py'),
                    first_stage['config'], first['best checkpoint'], '--out',
                    labels, '--force', '--thr',
                    str(first_stage.get(
                        'thr', 0.5)), '--device', 'cpu', '--cfg-options'
                ] + format_options(first_options),
                           osp.join(run_dir, 'log.txt'))
                options['train_dataloader.dataset.label_file'] = labels
        out = osp.join(run_dir, 'demo.json')
        self._call([
            sys.executable,
            osp.join(self.tools_dir, 'demo.py'), config, '--seeds',
            str(seed), '--work-dir',
            osp.dirname(osp.dirname(run_dir)), '--out', out, '--force',
            '--cfg-options'
        ] + format_options(options), osp.join(run_dir, 'log.txt'))
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
            dataset_modes(c)[2]['config']
            for c in args.configs if dataset_modes(c)[2] is not None
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
