"""Which partial-label method should I use? Tune methods on your own
config and data, rank them, and write the best one's config.

Each method of ``--methods`` is a preset, the demo config
``configs/demo/METHOD.py``, applied to CONFIG: its head, loss, method
hooks and key hyperparameter replace CONFIG's (your other hooks stay);
the data, backbone, optimizer, schedule and validation split stay yours
(:mod:`mmlml.benchmark.sweep.method_selection`). A method keeps its own loss
(``an`` is mmlml's ``ANLoss``, which reads observed negatives), and its
warm-ups and schedules are scaled to your epochs. Before anything
trains, the validation split is checked (it must have a known positive)
and every method's run is built and checked as training would check it;
a method that cannot run (a first stage, changes beyond the method, a
setting your config refuses) is left out with one line, the others go
on. The configs are written to ``WORK_DIR/configs/METHOD.py``, each a
short child of CONFIG.

Every method is then tuned the same way by the benchmark sweep
(:mod:`mmlml.benchmark.sweep.search`: learning rates around your own rate,
within a factor of ten of it, whatever the optimizer; the key
hyperparameter; epochs doubled while the best validation epoch is the
last; then the other seeds) on the validation split of CONFIG with the
labels it has: partial labels are fine (a ``PartialLabelDataset`` with
``val_labels='observed'`` validates on its observed labels). The runs
are trials of a sweep in ``--storage``, run in this folder (your
config's relative paths resolve here); running the command again goes
on where it stopped, ``--retry-failed`` runs failed runs again, and
the methods of the command are the selection (name fewer to drop some:
their runs stay in the storage). A second command, on this machine or
another that reaches the storage, adds workers with ``--join`` (the
same CONFIG, and the same ``--work-dir``, ``--storage``, ``--study`` and
``--smoke`` where the first named them): it runs the stored methods,
search and overrides, once each method config in ``WORK_DIR/configs``
is checked to be what this command writes for CONFIG (the storage holds
data, not code).

It prints the methods ranked by validation mAP (mean ± std over the
seeds at each one's chosen point; methods within their seed spread
share a rank; test metrics too, as ``tools/demo.py`` evaluates CONFIG's
test split), warns where the order means little (one seed, a saturated
validation split) and where a chosen learning rate or number of epochs
sits at a bound of the search (the best may lie beyond: widen
``--lr-bounds``, raise ``--max-doublings``), and writes the best
method's config, a short child of CONFIG at its chosen learning rate,
epochs and key hyperparameter, to ``--out``, ready for
``tools/train.py``. ``--smoke`` first checks in
minutes that every method trains on your data (each run shrunk as
``tools/train.py --smoke`` shrinks it, one seed, your own rate), after
building and reading the first batch of your real training, validation
and test dataloaders as the full selection's runs build them (a setting
the full runs refuse, such as ``persistent_workers=True`` with
``num_workers=0``, is refused here too): it ranks nothing and writes no
best config.
"""
import copy
import os
import os.path as osp
import shlex
import sys

from mmengine.config import Config

from mmlml.benchmark.cli import (add_run_arguments, add_search_arguments,
                                 add_worker_arguments, pruning, run_workers,
                                 search_rules)
from mmlml.benchmark.reports.method_ranking import (chosen_point, point_text,
                                                    rank, ranking_warnings,
                                                    table)
from mmlml.benchmark.reports.record import export
from mmlml.benchmark.sweep import method_selection as selection
from mmlml.benchmark.sweep.method_selection import SelectionError
from mmlml.benchmark.sweep.sweep import Sweep, SweepError, repo_path
from mmlml.benchmark.training.optuna_storage import storage_path
from mmlml.cli import (check_checkout, check_output, config_input_files,
                       tool_parser)
from mmlml.cli.smoke_config import (check_dataloaders, smoke_config,
                                    used_dataloaders)

#: The setting of every run: the config's own labels.
SETTING, MODE = 'own', 'finetune'
#: The methods of a selection that names none.
DEFAULT_METHODS = ['an', 'hill', 'em_apl', 'gr']


def _check_methods(parser, methods: list) -> None:
    """Each of ``--methods`` names a preset (not a path, not a typo)."""
    for name in methods:
        if not selection.METHOD_NAME.fullmatch(name):
            stem = osp.splitext(osp.basename(name.rstrip('/')))[0]
            parser.error(f'--methods takes the names of presets '
                         f'(configs/demo/NAME.py), not paths: {stem!r}, not '
                         f'{name!r}')
        if not osp.isfile(selection.preset_path(name)):
            parser.error(f'--methods: no preset named {name!r}; the '
                         'supported ones: ' +
                         ' '.join(selection.supported_methods()))


def parse_args(argv=None):
    parser = tool_parser(
        __doc__,
        epilog='Validation labels: with a PartialLabelDataset, '
        "val_labels='observed' validates on the observed (partial) labels "
        "of the validation split (the default 'clean' needs its full labels).")
    parser.add_argument('config', help='your training config')
    parser.add_argument(
        '--methods',
        nargs='+',
        help='names of configs/demo/*.py; the selection is these methods '
        f'(default: {" ".join(DEFAULT_METHODS)}; with --join the stored '
        'ones)')
    add_run_arguments(parser, 'override settings of every run (and of --out)')
    parser.add_argument(
        '--work-dir',
        help='the method configs and the runs (default: '
        'work_dirs/select_method/CONFIG_NAME, with --smoke '
        'CONFIG_NAME-smoke)')
    parser.add_argument(
        '--storage',
        help='the sweep\'s Optuna storage (default: WORK_DIR/select.db)')
    parser.add_argument(
        '--study', default='select', help='the sweep\'s name in --storage')
    add_search_arguments(
        parser,
        seeds=[0, 1, 2],
        lrs_help=('the rate of your optimizer in CONFIG, then its neighbours '
                  'on the 1-3-10 ladder', 'that rate / 10 and x 10'))
    parser.add_argument(
        '--retry-failed',
        action='store_true',
        help='run the failed runs of the selection again (after fixing '
        'their cause)')
    parser.add_argument(
        '--smoke',
        action='store_true',
        help='check in minutes that every method trains on your data: '
        'each run shrunk as tools/train.py --smoke shrinks it (random '
        'weights, small images and batches, 2 epochs), once at the first '
        'seed and your own learning rate; it ranks nothing and writes no '
        'best config')
    parser.add_argument(
        '--join',
        action='store_true',
        help='add workers to the existing selection of CONFIG (--study in '
        '--storage, of the same --work-dir and --smoke): its methods, '
        'search and overrides are the stored ones, and its method configs '
        'run once checked to be what this command writes for CONFIG')
    add_worker_arguments(parser, workers=1)
    parser.add_argument(
        '--out',
        help='the best method\'s config (default: WORK_DIR/best_METHOD.py)')
    args = parser.parse_args(argv)
    if not osp.isfile(args.config):
        parser.error(f'no config file {args.config}')
    if args.workers < 0 or args.threads < 1:
        parser.error('--workers must be >= 0 and --threads >= 1')
    if args.join and (args.methods or args.cfg_options):
        parser.error('--join runs the stored selection, its methods and '
                     'overrides: give no --methods or --cfg-options')
    if not args.join:
        args.methods = args.methods or list(DEFAULT_METHODS)
        _check_methods(parser, args.methods)
    name = osp.splitext(osp.basename(args.config))[0]
    args.work_dir = args.work_dir or osp.join(
        'work_dirs', 'select_method', name + ('-smoke' if args.smoke else ''))
    args.storage = args.storage or osp.join(args.work_dir, 'select.db')
    return args


def _log(message: str) -> None:
    print(f'[select_method] {message}', file=sys.stderr, flush=True)


def _search(args, user: Config):
    """The search rules: the learning rates around CONFIG's own rate
    unless ``--lrs`` / ``--lr-bounds`` say otherwise (``--smoke``: no
    search, each method's own recipe at the first seed)."""
    optimizer, lr = selection.optimizer_rate(user, args.config)
    lrs, bounds = selection.lr_search(lr)
    if args.smoke:
        return search_rules(args, tune=False, seeds=tuple(args.seeds[:1]))
    overrides = {}
    if args.lrs is None:
        overrides['lrs'] = lrs
    if args.lr_bounds is None:
        given = args.lrs or lrs
        overrides['lr_bounds'] = (min(bounds[0],
                                      *given), max(bounds[1], *given))
    rules = search_rules(args, **overrides)
    _log(f'learning rates: {" ".join(f"{v:g}" for v in rules.lrs)} first, '
         f'then on to {rules.lr_bounds[0]:g} .. {rules.lr_bounds[1]:g} '
         f'({optimizer} at {lr:g} in {args.config}' +
         ('; --lrs and --lr-bounds choose others)' if overrides else ')'))
    return rules


def definition(args, configs: dict, rules) -> dict:
    """The sweep: the method configs in the config's own setting."""
    return dict(
        name=args.study,
        configs=[repo_path(path) for path in configs.values()],
        settings=[SETTING],
        modes=[MODE],
        rules=rules.to_dict(),
        domain=None,
        cfg_options=dict(args.cfg_options or {}),
        baseline='an',
        oracle=None,
        prune=pruning(args),
        trainer='tools/demo.py',
        work_dir=repo_path(args.work_dir),
        threads=args.threads,
        gpus_per_trial=1)


def _smoke(cfg: Config) -> None:
    """A method's run shrunk as ``tools/train.py --smoke`` shrinks it,
    keeping only the best checkpoint (which the run tests)."""
    smoke_config(cfg)
    checkpoint = (cfg.get('default_hooks') or {}).get('checkpoint')
    if isinstance(checkpoint, dict):
        checkpoint.update(interval=-1, save_last=False)


def _check_real_dataloaders(args, user: Config) -> None:
    """``--smoke``: build and read the dataloaders of every split the full
    selection's runs use, as they build them (the smoke runs shrink them:
    no workers, small batches and images), so that what the full
    selection refuses, the smoke refuses too."""
    try:
        check_dataloaders(user, used_dataloaders(user, test=True))
    except ValueError as error:
        raise SelectionError(
            f'{args.config}: {error}; every method of the full selection '
            'would be left out (--smoke checks the real dataloaders first)'
        ) from None


def _methods(args) -> dict:
    """Each method's config, checked before anything trains; a method
    that cannot run is left out with one line."""
    cfgs, dropped = selection.prepare_methods(
        args.config,
        args.methods,
        args.cfg_options,
        transform=_smoke if args.smoke else None)
    for name, why in dropped.items():
        _log(f'left out: {why}')
    if not cfgs:
        raise SelectionError(
            f'no method of {" ".join(args.methods)} can run on '
            f'{args.config} (see above); the supported ones: ' +
            ' '.join(selection.supported_methods()))
    return cfgs


def _user_config(args) -> Config:
    """CONFIG with ``--cfg-options``, or one line saying why not."""
    try:
        user = Config.fromfile(args.config)
        user.merge_from_dict(dict(args.cfg_options or {}))
    except Exception as error:
        lines = str(error).strip().splitlines() or ['']
        raise SelectionError(f'cannot read {args.config}: '
                             f'{type(error).__name__}: {lines[0]}') from None
    return user


def _make_work_dir(args) -> None:
    try:
        os.makedirs(osp.join(args.work_dir, 'configs'), exist_ok=True)
    except OSError as error:
        raise SelectionError(
            f'cannot create the work directory {args.work_dir} (--work-dir):'
            f' {error.strerror or error}') from None


def _define(args, sweep: Sweep, configs: dict, rules) -> None:
    """Record the sweep; its configs are this command's methods."""
    try:
        before = list(sweep.stored_definition()['configs'])
    except SweepError:
        before = []
    new = definition(args, configs, rules)
    sweep.define(new, keep_configs=False)
    left = [c for c in before if c not in new['configs']]
    if left:
        names = ', '.join(osp.splitext(osp.basename(c))[0] for c in left)
        _log(f'no longer in the selection: {names} (their runs stay in '
             f'{args.storage}; name them in --methods to go on with them)')
    if args.retry_failed:
        _log(f'{sweep.retry_failed()} failed runs queued again')


def _stored_selection(args) -> dict:
    """``--join``: the stored definition of the selection (data, read but
    not run); its methods and overrides become this command's."""
    path = storage_path(args.storage)
    if path is not None and not osp.isfile(path):
        raise SelectionError(
            f'{args.storage}: no selection to join (--storage, by default '
            'WORK_DIR/select.db): start it with the same command without '
            '--join')
    stored = Sweep(
        args.storage, args.study, must_exist=False).stored_definition()
    options = stored.get('cfg_options') or {}
    if not isinstance(options, dict):
        raise SelectionError(f'{args.storage} (sweep {args.study!r}): its '
                             'overrides are not a mapping of config keys')
    args.cfg_options = dict(options)
    return stored


def _join(args, stored: dict) -> tuple:
    """``--join``: the stored selection with its method configs, each
    checked to be what this command writes for CONFIG
    (:func:`~mmlml.benchmark.sweep.method_selection.joined_methods`), named to
    the sweep as this command's; ``(sweep, cfgs, configs)``."""
    where = f'{args.storage} (sweep {args.study!r})'
    cfgs, configs = selection.joined_methods(
        args.config,
        stored,
        args.work_dir,
        where,
        transform=_smoke if args.smoke else None)
    args.methods = list(configs)
    sweep = Sweep(
        args.storage,
        args.study,
        must_exist=True,
        trusted=list(configs.values()) + [args.work_dir])
    _log(f'joining the selection {args.study} in {args.storage}: '
         f'{" ".join(configs)} on {args.config} (method configs in '
         f'{osp.join(args.work_dir, "configs")}, checked), runs in '
         f'{args.work_dir}')
    if args.retry_failed:
        _log(f'{sweep.retry_failed()} failed runs queued again')
    return sweep, cfgs, configs


def _results(args, sweep: Sweep, names: list) -> tuple:
    """The finished methods' rows, the failed ones' errors, and the
    methods still running or queued."""
    sweep.advance()
    failed = {}
    for group in sweep.groups():
        failures = sweep.failures(group)
        if failures:
            failed[group.name] = failures[0]
    rows = export(sweep, args.storage, {})['results'].get(MODE,
                                                          {}).get(SETTING, {})
    missing = [m for m in names if m not in rows and m not in failed]
    return {m: rows[m] for m in names if m in rows}, failed, missing


def best_config(cfg: Config, point: dict, cfg_options: dict) -> Config:
    """A method's config at its chosen point (and the runs' overrides)."""
    cfg = copy.deepcopy(cfg)
    cfg.merge_from_dict(dict(cfg_options or {}))
    cfg.merge_from_dict(dict(point))
    return cfg


def run(args) -> dict:
    """Check the validation split and the methods, write the method
    configs, run the sweep, rank, write the best (``--join``: the stored
    selection's methods, their configs checked, instead of new ones)."""
    stored = _stored_selection(args) if args.join else None
    user = _user_config(args)
    selection.training_epochs(user, args.config)
    validation = selection.validation_labels(user, args.config)
    if stored is not None:
        sweep, cfgs, configs = _join(args, stored)
        rules = sweep.rules
    else:
        rules = _search(args, user)
    # --out is never one of the inputs: the config, the files it names,
    # the storage, the method configs the sweep runs (even with --force).
    check_output(
        args.out,
        [args.config, storage_path(args.storage)] + config_input_files(user) +
        [osp.join(args.work_dir, 'configs', f'{m}.py') for m in args.methods],
        force=True)
    if stored is None:
        if args.smoke:
            _check_real_dataloaders(args, user)
        _make_work_dir(args)
        cfgs = _methods(args)
        configs = selection.method_configs(args.config, cfgs, args.work_dir,
                                           args.force)
        sweep = Sweep(args.storage, args.study, must_exist=False)
        _define(args, sweep, configs, rules)
    if args.workers:
        _log(f'{len(configs)} methods x {len(rules.seeds)} seeds in '
             f'{args.storage}: {args.workers} {args.executor} workers; runs '
             f'in {args.work_dir}')
        run_workers(
            args,
            args.storage,
            args.study,
            osp.join(args.work_dir, 'submitit'),
            trusted=list(configs.values()) + [args.work_dir])
    rows, failed, missing = _results(args, sweep, list(configs))
    for name, error in failed.items():
        _log(f'{name} failed: {error}')
    if missing:
        raise SystemExit(f'[select_method] {", ".join(missing)} not '
                         'finished yet: run the same command again (or with '
                         '--workers N) to go on')
    if not rows:
        raise SystemExit('[select_method] every method failed: fix the '
                         'cause, then run the same command with '
                         '--retry-failed (or leave the method out)')
    ranked = rank(rows)
    print(table(ranked))
    result = dict(ranking=ranked, failed=failed, best=None, out=None)
    if args.smoke:
        print(f'\nSmoke run: {", ".join(rows)} trained on your data; the '
              'order above means nothing. Select without --smoke.')
    else:
        for line in ranking_warnings(ranked, validation):
            _log(f'warning: {line}')
        result['at_bounds'] = _search_edges(args, user, sweep, ranked)
        result.update(_write_best(args, cfgs, ranked))
    if failed:
        raise SystemExit(
            f'[select_method] {", ".join(failed)} failed and '
            f'{"is" if len(failed) == 1 else "are"} not ranked: fix the '
            'cause and run the same command with --retry-failed, or leave '
            'it out of --methods')
    return result


def _search_edges(args, user: Config, sweep: Sweep, ranked: list) -> list:
    """Say where a method's chosen learning rate or epochs sit at a bound
    of the search
    (:func:`~mmlml.benchmark.sweep.method_selection.search_edges`); returns the
    lines."""
    epochs = selection.training_epochs(user, args.config)
    _, lr = selection.optimizer_rate(user, args.config)
    lines = [
        line for name, row in ranked
        for line in selection.search_edges(name, row, sweep.rules, epochs, lr)
    ]
    for line in lines:
        _log(f'warning: {line}')
    return lines


def _write_best(args, cfgs: dict, ranked: list) -> dict:
    """Write the best method's config; say how to train it."""
    best, row = ranked[0]
    tied = [name for name, other in ranked if other['tied with'] == best]
    point = chosen_point(row)
    out = args.out or osp.join(args.work_dir, f'best_{best}.py')
    selection.write_config(
        selection.method_config_text(
            args.config, best, best_config(cfgs[best], point,
                                           args.cfg_options), out,
            point_text(point)), out, args.force)
    tie = f' by mean, within the seed spread of {", ".join(tied)};' \
        if tied else ''
    print(f'\nBest:{tie} {best} ({point_text(point)}), '
          f'written to {out}. Train it on all GPUs of a machine with:\n'
          f'  bash tools/dist_train.sh {shlex.quote(out)} GPUS\n'
          f'or on one device with:\n'
          f'  python tools/train.py {shlex.quote(out)}')
    return dict(best=best, out=out)


def main(argv=None):
    args = parse_args(argv)
    try:
        check_checkout(__file__)  # the presets of its configs/
        return run(args)
    except (ValueError, OSError) as error:  # incl. Method/Selection/
        # Sweep/Storage errors, an existing output, a work dir that cannot
        # be made: one line, no traceback
        raise SystemExit(f'[select_method] {error}') from None


if __name__ == '__main__':
    main()
