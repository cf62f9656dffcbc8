"""Which partial-label method should I use? Tune methods on your own
config and data, rank them, and write the best one's config.

Each method of ``--methods`` is a preset, the demo config
``configs/demo/METHOD.py``, applied to CONFIG: its head, loss, method
hooks and key hyperparameter replace CONFIG's (your other hooks stay);
the data, backbone, schedule and validation split stay yours
(:mod:`mmlml.benchmark.method_selection`). Methods with a first stage
(vlpl, gpr, pseudo_label) or with changes beyond the method are refused
before anything trains. The configs are written to
``WORK_DIR/configs/METHOD.py``.

Every method is then tuned the same way by the benchmark sweep
(:mod:`mmlml.benchmark.search`: learning rates, the key hyperparameter,
epochs doubled while the best validation epoch is the last; then the
other seeds) on the validation split of CONFIG with the labels it has:
partial labels are fine (a ``PartialLabelDataset`` with
``val_labels='observed'`` validates on its observed labels). The runs
are trials of a sweep in ``--storage``; running the command again goes
on where it stopped.

It prints the methods ranked by validation mAP (mean ± std over the
seeds at each one's chosen point; test metrics too, as ``tools/demo.py``
evaluates CONFIG's test split), and writes the best method's config with
its chosen learning rate, epochs and key hyperparameter to ``--out``,
ready for ``tools/train.py``.
"""
import os.path as osp
import shlex
import sys

from mmengine.config import Config

from mmlml.benchmark.cli import (add_run_arguments, add_search_arguments,
                                 add_worker_arguments, pruning, run_workers,
                                 search_rules)
from mmlml.benchmark.method_ranking import (point_text, rank, ranking_warnings,
                                            table)
from mmlml.benchmark.method_selection import (MethodError, SelectionError,
                                              method_configs,
                                              validation_labels, write_config)
from mmlml.benchmark.record import export
from mmlml.benchmark.sweep import Sweep, SweepError, repo_path
from mmlml.cli import tool_parser
from mmlml.utils.optuna_storage import StorageError

#: The setting of every run: the config's own labels.
SETTING, MODE = 'own', 'finetune'


def parse_args(argv=None):
    parser = tool_parser(
        __doc__,
        epilog='Validation labels: with a PartialLabelDataset, '
        "val_labels='observed' validates on the observed (partial) labels "
        "of the validation split (the default 'full' needs its full labels).")
    parser.add_argument('config', help='your training config')
    parser.add_argument(
        '--methods',
        nargs='+',
        default=['an', 'hill', 'em_apl', 'gr'],
        help='names of configs/demo/*.py (default: %(default)s)')
    add_run_arguments(parser, 'override settings of every run (and of --out)')
    parser.add_argument(
        '--work-dir',
        help='the method configs and the runs (default: '
        'work_dirs/select_method/CONFIG_NAME)')
    parser.add_argument(
        '--storage',
        help='the sweep\'s Optuna storage (default: WORK_DIR/select.db)')
    parser.add_argument(
        '--study', default='select', help='the sweep\'s name in --storage')
    add_search_arguments(parser, seeds=[0, 1, 2])
    add_worker_arguments(parser, workers=1)
    parser.add_argument(
        '--out',
        help='the best method\'s config (default: WORK_DIR/best_METHOD.py)')
    args = parser.parse_args(argv)
    if not osp.isfile(args.config):
        parser.error(f'no config file {args.config}')
    if args.workers < 0 or args.threads < 1:
        parser.error('--workers must be >= 0 and --threads >= 1')
    name = osp.splitext(osp.basename(args.config))[0]
    args.work_dir = args.work_dir or osp.join('work_dirs', 'select_method',
                                              name)
    args.storage = args.storage or osp.join(args.work_dir, 'select.db')
    return args


def definition(args, configs: dict) -> dict:
    """The sweep: the method configs in the config's own setting."""
    rules = search_rules(args)
    return dict(
        name=args.study,
        configs=[repo_path(path) for path in configs.values()],
        settings=[SETTING],
        modes=[MODE],
        rules=rules.to_dict(),
        domain=None,
        cfg_options=dict(args.cfg_options or {}),
        linear_lr=0.1,
        baseline='an',
        oracle=None,
        prune=pruning(args),
        trainer='tools/demo.py',
        work_dir=repo_path(args.work_dir),
        threads=args.threads,
        gpus_per_trial=1)


def best_config(path: str, point: dict, cfg_options: dict) -> Config:
    """The method config at its chosen point (and the runs' overrides)."""
    cfg = Config.fromfile(path)
    cfg.merge_from_dict(dict(cfg_options or {}))
    cfg.merge_from_dict(dict(point))
    return cfg


def _log(message: str) -> None:
    print(f'[select_method] {message}', file=sys.stderr, flush=True)


def run(args) -> dict:
    """Check the validation split, write the method configs, run the
    sweep, rank, write the best."""
    user = Config.fromfile(args.config)
    user.merge_from_dict(dict(args.cfg_options or {}))
    validation = validation_labels(user, args.config)
    configs = method_configs(args.config, args.methods, args.work_dir,
                             args.force)
    sweep = Sweep(args.storage, args.study, must_exist=False)
    sweep.define(definition(args, configs))
    if args.workers:
        print(
            f'[select_method] {len(configs)} methods x {len(args.seeds)} '
            f'seeds in {args.storage}: {args.workers} {args.executor} '
            f'workers; runs in {args.work_dir}',
            file=sys.stderr,
            flush=True)
        run_workers(args, args.storage, args.study,
                    osp.join(args.work_dir, 'submitit'))
    state = sweep.advance()
    if state['errors']:
        raise SystemExit('[select_method] failed:\n' +
                         '\n'.join(state['errors']))
    rows = export(sweep, args.storage, {})['results'].get(MODE,
                                                          {}).get(SETTING, {})
    missing = [m for m in configs if m not in rows]
    if missing:
        raise SystemExit(f'[select_method] {", ".join(missing)} not '
                         'finished yet: run the same command again (or with '
                         '--workers N) to go on')
    ranked = rank({m: rows[m] for m in configs})
    print(table(ranked))
    for line in ranking_warnings(ranked, validation):
        _log(f'warning: {line}')
    best, row = ranked[0]
    tied = [name for name, other in ranked if other['tied with'] == best]
    out = args.out or osp.join(args.work_dir, f'best_{best}.py')
    write_config(
        best_config(configs[best], row['tuning']['chosen'], args.cfg_options),
        out, args.force)
    tie = f' by mean, within the seed spread of {", ".join(tied)};' \
        if tied else ''
    print(f'\nBest:{tie} {best} ({point_text(row["tuning"]["chosen"])}), '
          f'written to {out}. Train it on all GPUs of a machine with:\n'
          f'  bash tools/dist_train.sh {shlex.quote(out)} GPUS\n'
          f'or on one device with:\n'
          f'  python tools/train.py {shlex.quote(out)}')
    return dict(ranking=ranked, best=best, out=out)


def main(argv=None):
    args = parse_args(argv)
    try:
        return run(args)
    except (MethodError, SelectionError, SweepError, StorageError,
            FileExistsError) as error:
        raise SystemExit(f'[select_method] {error}') from None


if __name__ == '__main__':
    main()
