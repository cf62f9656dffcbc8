"""The tuned benchmark (``tools/benchmark.py --tune``): every config tuned
on validation (:mod:`.benchmark_tuning`), then its other seeds at the
chosen point, every run recorded in the ``--out`` JSON as it finishes and
reused from there (:class:`TunedBenchmark`)."""
import json
import os
import os.path as osp
import platform
import sys
import threading
import time
from concurrent.futures import Future
from typing import Callable, Optional

import torch
from mmengine.config import Config

from .benchmark import Benchmark, dataset_modes, relative_paths
from .benchmark_tuning import (EPOCHS_KEY, LR_KEY, key_hyperparameter,
                               summarise_tuning, tune)
from .run_pool import RunPool

__all__ = ['NotRecorded', 'TunedBenchmark']


class NotRecorded(Exception):
    """A run that ``--report-only`` finds neither in --out nor in the work
    directory."""


class TunedBenchmark(Benchmark):
    """Tunes every (mode, setting, config) on validation
    (:func:`~mmlml.analysis.benchmark_tuning.tune`), then trains the other
    seeds at the chosen point. Every finished run is recorded in ``--out``
    at once, and a run recorded there (or with a ``result.json`` in its
    folder) is not repeated, so a benchmark interrupted on one machine
    continues on another from the committed JSON.

    Args:
        args: the arguments of ``tools/benchmark.py``.
        tools_dir (str): the folder of the tools that each run calls (see
            :class:`~mmlml.analysis.benchmark.Benchmark`).
        on_results (callable, optional): called with the finished rows
            (:meth:`results`), with the lock held, after each config is
            tuned: ``tools/benchmark.py`` writes the tables so far, so
            that an interrupted run leaves them. Defaults to None.
    """

    def __init__(self,
                 args,
                 tools_dir: str,
                 on_results: Optional[Callable[[dict], None]] = None):
        super().__init__(args, tools_dir)
        self.on_results = on_results
        self.lock = threading.Lock()
        self.recorded = {}
        # The rows of --out that this invocation does not make (other
        # configs or settings), kept when it is written.
        self.earlier_results = {}
        self.rows = {}
        if args.out and osp.exists(args.out) and not args.force:
            with open(args.out) as f:
                earlier = json.load(f)
            self.recorded = earlier.get('runs', {})
            self.earlier_results = earlier.get('results', {})
        self.done = 0
        self.start = time.time()

    def run_id(self, config, mode, setting, seed, point) -> str:
        name = osp.splitext(osp.basename(config))[0]
        return osp.relpath(
            self.run_dir(mode, setting, name, seed, point), self.work_dir)

    def relative(self, value):
        """``value`` with the paths of this machine made relative
        (:func:`~mmlml.analysis.benchmark.relative_paths`)."""
        return relative_paths(value, self.work_dir,
                              osp.dirname(self.tools_dir))

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
            self.recorded[run_id] = self.relative(summary)
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
        first_stage = dataset_modes(config)[2]
        if first_stage is not None:  # its runs must not race the first's
            self.tuned[(first_stage['config'], mode, setting)].result()
        cfg = Config.fromfile(config)
        cfg.merge_from_dict(self.args.cfg_options or {})
        hyperparameter = key_hyperparameter(cfg, config)

        def run_points(points, seeds):
            futures = []
            for point, seed in zip(points, seeds):
                args = (config, mode, setting, seed, point)
                if self.cached(*args) is None:
                    futures.append(
                        self.pool.submit(priority, self.run_one, *args))
                else:  # recorded: read at once, not queued behind training
                    futures.append(Future())
                    futures[-1].set_result(self.run_one(*args))
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
            if self.on_results is not None:
                self.on_results(self.results())
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
        """Write ``--out`` (every run so far, the finished rows and the rows
        of --out that this invocation does not make); called with the lock
        held."""
        if not self.args.out or self.args.report_only:
            return
        results = {
            mode: {
                setting: dict(rows)
                for setting, rows in by_setting.items()
            }
            for mode, by_setting in self.earlier_results.items()
        }
        for mode, by_setting in self.relative(self.results()).items():
            for setting, rows in by_setting.items():
                results.setdefault(mode, {}).setdefault(setting,
                                                        {}).update(rows)
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
            results=results,
            runs=self.recorded)
        tmp = self.args.out + '.tmp'
        with open(tmp, 'w') as f:
            json.dump(data, f, indent=1)
        os.replace(tmp, self.args.out)

    def run_all(self):
        args = self.args
        configs = list(args.configs)
        for config in args.configs:  # first stages are tuned too
            first_stage = dataset_modes(config)[2]
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
