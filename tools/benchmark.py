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
dataset, keeps the checkpoint with the best validation mAP (on the full
labels of the validation split, Cole et al.'s default protocol), and
evaluates it on the fully labelled test split. The result is one markdown
table per setting (mean ± std over seeds of test mAP, CF1 as the papers
define it, OF1, and the share of the AN -> full-label gap in mAP that each
method closes), a JSON file with every run, and a figure::

    python tools/benchmark.py configs/demo/*.py --seeds 0 1 2 \\
        --settings single_positive --out docs/benchmark.json \\
        --markdown docs/benchmark_fixed_recipe.md \\
        --figure docs/figures/benchmark.png

(``--report-only`` rewrites the markdown and the figure from the JSON.)

Settings (the training labels, and the validation labels of a config
that validates on its observed ones, ``val_labels='observed'``; the
oracle, whose training set is in the ``'full'`` mode, keeps its full
training labels):

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

The runs are :class:`mmlml.analysis.benchmark.Benchmark` (with ``--tune``,
:class:`mmlml.analysis.tuned_benchmark.TunedBenchmark`); the tables, the
figure and the claims, :mod:`mmlml.analysis.benchmark_report`.
"""
import argparse
import json
import os
import os.path as osp
import platform
import shlex
import subprocess
import sys
from typing import Optional

sys.path.insert(0, osp.dirname(osp.dirname(osp.abspath(__file__))))

import torch  # noqa: E402
from mmengine.config import Config, DictAction  # noqa: E402

from mmlml.analysis.benchmark import MODES  # noqa: E402
from mmlml.analysis.benchmark import SETTINGS  # noqa: E402
from mmlml.analysis.benchmark import Benchmark  # noqa: E402
from mmlml.analysis.benchmark import relative_paths  # noqa: E402
from mmlml.analysis.benchmark_report import write_reports  # noqa: E402
from mmlml.analysis.tuned_benchmark import TunedBenchmark  # noqa: E402
from mmlml.output_files import check_output  # noqa: E402

TOOLS = osp.dirname(osp.abspath(__file__))


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
        help='train nothing; with --tune, write the tables, claims and '
        'figure of the configs whose runs --out (or the work directory) '
        'already holds, leaving the others out; without, the tables and '
        'figure of the results --out holds')
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
    if args.claims and not args.tune:
        parser.error('--claims needs --tune')
    if args.report_only and not args.tune:
        if not (args.out and osp.isfile(args.out)):
            parser.error('--report-only without --tune needs --out, the '
                         'JSON of an earlier benchmark')
        outputs = ()  # rewritten from the JSON, as a tuned benchmark's
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
    if args.report_only and not args.tune:  # the tables of a fixed recipe
        with open(args.out) as f:
            recorded = json.load(f)
        results = recorded['results']
        args.seeds = sorted({
            run['seed']
            for by_setting in results.values()
            for rows in by_setting.values()
            for row in rows.values()
            for run in row['runs']
        })
        # What the JSON holds, nothing more: no config is "not run yet".
        args.modes = list(results)
        args.settings = list(
            dict.fromkeys(s for by_setting in results.values()
                          for s in by_setting))
        args.configs = list(
            dict.fromkeys(name for by_setting in results.values()
                          for rows in by_setting.values() for name in rows))
        print('\n' + write_reports(results, args))
        return results
    if args.tune:
        benchmark = TunedBenchmark(
            args,
            TOOLS,
            on_results=lambda results: write_reports(results, args))
    else:
        benchmark = Benchmark(args, TOOLS)
    results, minutes = benchmark.run_all()
    print('\n' + write_reports(results, args))
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
                    results=relative_paths(results, args.work_dir,
                                           osp.dirname(TOOLS))),
                f,
                indent=1)
    return results


if __name__ == '__main__':
    main()
