"""Compare methods on a benchmark: a sweep of configs x settings x modes
x seeds on Optuna storage, its record as JSON, and the tables, claims and
figure made from that JSON.

Every config is tuned on the validation split by the search rules of
:mod:`mmlml.benchmark.sweep.search` (learning rates, extended while the best is
at an edge; the config's ``tuning`` hyperparameter; epochs doubled while
the best validation epoch is the last), then its other seeds run at the
chosen point; ``--no-tune`` runs every config's own recipe instead. Each
training run is a trial of the sweep (:mod:`mmlml.benchmark.sweep.sweep`),
kept in ``--storage`` (an SQLite file by default; a journal file on
shared storage or a database URL for several machines). Workers
(``--workers``: local processes, or Slurm jobs with ``--executor slurm``)
take trials until the sweep is finished; a sweep that was stopped goes
on where it was when the same command runs again, and ``--join`` adds
workers to a running one. Tuning runs are pruned by successive halving
among the runs of their schedule and seed, from the epoch after their
method's warm-up on
(:class:`mmlml.benchmark.training.optuna_pruning_hook.OptunaPruningHook`;
``--pruner`` names another, :mod:`mmlml.benchmark.training.pruning`); the seeds
and the ``full`` setting's tuning are never pruned. ``--replay-unpruned
N`` replays the tuning of N (config, setting) groups without pruning and
records whether pruning changed their choice.

Every run fine-tunes the config's pretrained backbone on the partial
labels of its setting, keeps the checkpoint with the best validation mAP
and evaluates it on the fully labelled test split (``tools/demo.py``).

Outputs: ``--out`` the sweep's record (JSON, with the command that
reproduces it), then ``--markdown`` (one table per setting: mean ± std
over seeds of test mAP, CF1, OF1 and the share of the AN -> full-label
gap closed), ``--claims`` (the papers' claims checked) and ``--figure``,
all written from that JSON. ``--report-only`` rewrites them from an
existing ``--out``; ``--check-docs`` regenerates every record's files and
every comparison committed in docs/results/ and fails on any difference,
on a row that its runs and trials do not make, and on a number the
benchmark pages quote that the records they link do not hold.
The committed sweeps and their commands: docs/benchmark.md.

Settings: ``single_positive`` (one positive per image, Cole et al.);
``r0.5``, ``r0.8`` (each image keeps ``floor(n (1 - r)) + 1`` of its
``n`` positives); ``full`` (every method on all labels: its best on
validation is the honest oracle, where the gap of the other settings
ends). Every choice is made on validation. ``--label-seed-per-seed``
draws each training seed's partial labels anew. Modes: ``finetune`` (end
to end); ``linear`` (the pretrained backbone frozen, the head trained at
each trial's learning rate, searched as in ``finetune``).
"""
import os
import os.path as osp
import signal
import sys
from typing import List, Optional

from mmlml.benchmark.cli import (add_run_arguments, add_search_arguments,
                                 add_worker_arguments, interrupted, pruning,
                                 run_workers, search_rules, stopped)
from mmlml.benchmark.reports import docs_check
from mmlml.benchmark.reports.prose_check import check_prose, fix_quotes
from mmlml.benchmark.reports.record import (check_ledger,
                                            definition_from_ledger, export,
                                            import_ledger, read_json)
from mmlml.benchmark.reports.report import report, report_args, write_reports
from mmlml.benchmark.sweep.settings import (IMPOSED_SETTINGS, MODES, domains,
                                            prepare_domain)
from mmlml.benchmark.sweep.stored_definition import file_key
from mmlml.benchmark.sweep.sweep import Sweep, abs_path, repo_path
from mmlml.benchmark.training.optuna_storage import storage_path
from mmlml.cli import check_checkout, check_output, tool_parser

TOOLS = osp.dirname(osp.abspath(__file__))
ROOT = osp.dirname(TOOLS)
REPORTS = ('markdown', 'claims', 'figure')


def parse_args(argv=None):
    parser = tool_parser(__doc__)
    parser.add_argument(
        'configs',
        nargs='*',
        help='method configs (default: every config in configs/demo)')
    parser.add_argument(
        '--settings',
        nargs='+',
        choices=IMPOSED_SETTINGS,
        help='the partial labels of the training and validation sets '
        '(default: single_positive)')
    parser.add_argument(
        '--modes',
        nargs='+',
        choices=MODES,
        help='finetune: train the whole network; linear: freeze the '
        'pretrained backbone (default: finetune)')
    parser.add_argument(
        '--no-tune',
        action='store_true',
        help='no search: every config\'s own recipe, once per seed')
    parser.add_argument(
        '--baseline',
        default='an',
        help='the low end of the gap closed (default: an)')
    parser.add_argument(
        '--oracle',
        default='full_labels',
        help='the high end of the gap closed (default: full_labels)')
    parser.add_argument(
        '--label-seed-per-seed',
        action='store_true',
        help='each training seed draws its own partial labels (seed '
        '1200 + the training seed), so that the spread over the seeds '
        'covers the label draw too (default: one draw, seed 1200, for '
        'every run)')
    parser.add_argument(
        '--domain',
        choices=domains(ROOT),
        help='the data and backbone of the demo configs (a file of '
        'configs/_base_/domains/; default: the configs\' own)')
    add_run_arguments(
        parser, 'override settings of every run (before the mode and '
        'setting)')
    parser.add_argument(
        '--study',
        help='the sweep\'s name in the storage (default: the domain\'s, '
        'else "benchmark")')
    parser.add_argument(
        '--storage',
        help='the sweep\'s Optuna storage: an SQLite file (default: '
        'work_dirs/sweeps/STUDY.db), a journal file (*.journal, for '
        'several machines on a shared file system) or a database URL')
    parser.add_argument(
        '--work-dir',
        help='where the runs keep their checkpoints and logs (default: '
        'work_dirs/sweeps/STUDY); on a cluster, a shared folder')
    add_search_arguments(parser, seeds=None)
    parser.add_argument(
        '--replay-unpruned',
        type=int,
        default=0,
        metavar='N',
        help='replay the tuning of the first seed without pruning for N '
        '(config, setting) groups, reusing the runs pruning left whole, '
        'and record whether pruning changed their choice (default: 0)')
    add_worker_arguments(parser)
    parser.add_argument(
        '--gpus-per-trial',
        type=int,
        default=1,
        help='GPUs of each run; above 1 a run is launched with torchrun')
    parser.add_argument(
        '--join',
        action='store_true',
        help='start workers on the existing sweep --study in --storage, '
        'after printing what it runs; its configs outside configs/ run '
        'only if named here too (the storage holds data, not code)')
    parser.add_argument(
        '--retry-failed',
        action='store_true',
        help='queue the runs that failed again (a failed run stops its '
        'config until then: fix the cause first)')
    parser.add_argument(
        '--import-ledger',
        metavar='JSON',
        help='record the runs of an earlier tool\'s ledger as finished '
        'trials of a new sweep (its configs, settings and seeds unless given)')
    parser.add_argument('--out', help='the sweep\'s record (JSON)')
    parser.add_argument('--markdown', help='markdown file of the tables')
    parser.add_argument('--claims', help='markdown file of the claims')
    parser.add_argument('--figure', help='PNG file of the comparison')
    parser.add_argument(
        '--report-only',
        action='store_true',
        help='train nothing: write --markdown, --claims and --figure from '
        'the existing --out')
    parser.add_argument(
        '--check-docs',
        action='store_true',
        help='regenerate every benchmark file of docs/results/ into a '
        'temporary folder and fail on any difference, and on a number, '
        'share or method name of the benchmark pages that its marker\'s '
        'record does not make')
    parser.add_argument(
        '--fix-prose',
        action='store_true',
        help='with --check-docs: first rewrite each marked number, '
        'percentage and method name of the benchmark pages to what its '
        'record gives now, print each change, then check (an ordered list '
        'out of order is reported, never reordered; reread the wording)')
    parser.add_argument(
        '--rerun',
        type=int,
        default=0,
        metavar='N',
        help='with --check-docs: also train N recorded runs, drawn at '
        'random from the records, again from their stored points, and fail '
        'unless each reproduces its validation and test mAP to the printed '
        'digit (default: 0)')
    parser.add_argument(
        '--rerun-seed',
        type=int,
        help='the draw of --rerun (default: from the clock; the check '
        'prints it)')
    args = parser.parse_args(argv)
    if args.rerun < 0 or args.rerun and not args.check_docs:
        parser.error('--rerun N (N >= 0) goes with --check-docs')
    if args.fix_prose and not args.check_docs:
        parser.error('--fix-prose goes with --check-docs')
    if args.check_docs or args.report_only:
        return args
    if args.replay_unpruned < 0 or args.replay_unpruned and args.no_prune:
        parser.error('--replay-unpruned must be >= 0, and needs pruning '
                     '(drop --no-prune)')
    try:
        pruning(args)
    except ValueError as error:
        parser.error(str(error))
    if args.workers < 0 or args.threads < 1 or args.gpus_per_trial < 1:
        parser.error('--workers must be >= 0, --threads and '
                     '--gpus-per-trial >= 1')
    if args.join and args.import_ledger:
        parser.error('--join works on an existing sweep: give no '
                     '--import-ledger')
    args.study = args.study or args.domain or 'benchmark'
    args.storage = args.storage or osp.join('work_dirs', 'sweeps',
                                            f'{args.study}.db')
    args.work_dir = args.work_dir or osp.join('work_dirs', 'sweeps',
                                              args.study)
    if args.join and not args.configs:
        args.configs = []  # only the checkout's configs/ may run
    elif not args.configs and not args.import_ledger:
        demo = osp.join(ROOT, 'configs', 'demo')
        args.configs = sorted(
            osp.join(demo, f) for f in os.listdir(demo) if f.endswith('.py'))
    for config in args.configs:
        if not osp.isfile(config):
            parser.error(f'no config file {config}')
    return args


def use_domain(domain: Optional[str]) -> None:
    """Select the domain of the demo configs for this process and its runs,
    and make what the domain needs first
    (:func:`~mmlml.benchmark.sweep.settings.prepare_domain`)."""
    if domain is None:
        return
    os.environ['MMLML_DEMO_DOMAIN'] = domain
    prepare_domain(
        domain,
        osp.dirname(TOOLS),
        say=lambda line: print(
            f'[benchmark] {line}', file=sys.stderr, flush=True))


def check_outputs(args, inputs) -> None:
    """Refuse outputs that are inputs (even with --force), that exist
    (without --force), or that name one file twice."""
    named = [(o, getattr(args, o)) for o in ('out', ) + REPORTS
             if getattr(args, o)]
    seen = {}
    for option, path in named:
        real = osp.realpath(path)
        if real in seen:
            raise ValueError(f'--{option} and --{seen[real]} name the same '
                             f'file {path}')
        seen[real] = option
        check_output(path, inputs, args.force, option='--' + option)


def write_from_json(path: str, args) -> str:
    """Write the reports of the record in ``path``."""
    data = read_json(path, 'the record of a benchmark sweep (--out)',
                     ('sweep', 'results', 'trials'))
    outputs = {k: getattr(args, k) for k in REPORTS}
    return write_reports(data['results'],
                         report_args(data, out=path, **outputs))


def definition(args, ledger: Optional[dict] = None) -> dict:
    """The sweep's definition from the command line (and a ledger)."""
    found = definition_from_ledger(args.import_ledger, ledger) \
        if ledger is not None else {}
    # What the command line names wins over the ledger, then the defaults.
    for key, default in (('settings', ['single_positive']),
                         ('modes', ['finetune']), ('seeds', [0, 1, 2])):
        if getattr(args, key) is None:
            setattr(args, key, found.get(key) or default)
    rules = search_rules(
        args,
        lrs=tuple(found.get('lrs') or args.lrs),
        tune=found.get('tune', not args.no_tune))
    return dict(
        name=args.study,
        configs=[repo_path(c) for c in args.configs] or found['configs'],
        settings=args.settings,
        modes=args.modes,
        rules=rules.to_dict(),
        domain=args.domain or found.get('domain'),
        cfg_options=dict(args.cfg_options or found.get('cfg_options') or {}),
        baseline=args.baseline,
        oracle=args.oracle,
        **({
            'label_seed_per_seed': True
        } if args.label_seed_per_seed or found.get('label_seed_per_seed') else
           {}),
        prune=pruning(args),
        replay_unpruned=args.replay_unpruned,
        trainer='tools/demo.py',
        work_dir=repo_path(args.work_dir),
        threads=args.threads,
        gpus_per_trial=args.gpus_per_trial)


def run(args) -> dict:
    """Define or continue the sweep, run its workers, export and report."""
    ledger = None
    if args.import_ledger:
        ledger = read_json(args.import_ledger,
                           'a ledger of the earlier tools/benchmark.py',
                           ('results', ))
        check_ledger(args.import_ledger, ledger)  # before any storage
    inputs = [storage_path(args.storage), args.import_ledger] + args.configs
    check_outputs(args, inputs)
    reports = [f'--{k}' for k in REPORTS if getattr(args, k)]
    if reports and not args.out:
        raise ValueError(f'{", ".join(reports)} are written from the record '
                         'of the sweep: give --out too')
    # What the command names: its configs and its work directory.
    trusted = args.configs + [args.work_dir]
    sweep = Sweep(
        args.storage, args.study, must_exist=args.join, trusted=trusted)
    if args.join:
        # The stored configs are inputs too: no output over them.
        check_outputs(
            args, inputs + [abs_path(c) for c in sweep.definition['configs']])
        describe_sweep(sweep)
    else:
        wanted = definition(args, ledger)
        use_domain(wanted['domain'])
        sweep.define(wanted)
        if ledger is not None:
            count = import_ledger(sweep, args.import_ledger, ledger)
            print(
                f'[benchmark] {count} runs of {args.import_ledger} '
                f'recorded in {args.storage} (sweep {args.study})',
                file=sys.stderr)
    if args.retry_failed:
        print(
            f'[benchmark] {sweep.retry_failed()} failed runs queued again',
            file=sys.stderr)
    if args.workers:
        print(
            f'[benchmark] sweep {args.study} in {args.storage}: '
            f'{args.workers} {args.executor} workers; each run logs to '
            f'{sweep.definition["work_dir"]}'
            '/MODE/SETTING/POINT/CONFIG/seedN/log.txt',
            file=sys.stderr,
            flush=True)
        worker_errors = run_workers(
            args,
            args.storage,
            args.study,
            osp.join(sweep.definition['work_dir'], 'submitit'),
            trusted=trusted)
    else:
        worker_errors = []
    state = sweep.advance() if args.workers else dict(errors=[])
    state['errors'] = worker_errors + state['errors']
    if args.workers and not state['errors']:
        state['errors'] = sweep.unfinished()
    data = export(sweep, args.storage, {
        'out': args.out,
        **{
            k: getattr(args, k)
            for k in REPORTS
        }
    })
    if args.out:
        write_json(args.out, data)
        print('\n' + write_from_json(args.out, args))
    else:  # no record asked for: the tables are printed all the same
        print('\n' + report(data['results'], report_args(data)))
    if state['errors']:
        raise SystemExit('[benchmark] failed (fix the cause, then run the '
                         'same command with --retry-failed):\n' +
                         '\n'.join(state['errors']))
    return data


def describe_sweep(sweep: Sweep) -> None:
    """Print what a joined sweep will run, before any worker starts: its
    configs (where each lives, its recorded digest), settings, modes,
    work directory and overrides."""
    definition = sweep.definition  # checked: data of this checkout
    lines = [f'[benchmark] joining sweep {sweep.name} in {sweep.spec}:']
    for config in definition['configs']:
        path = osp.realpath(abs_path(config))
        files = definition['digests'][config]
        lines.append(f'  config {path} (sha256 {files[file_key(path)][:12]}; '
                     f'{len(files)} files read for it, each unchanged)')
    domain = definition.get('domain') or "the configs' own"
    lines.append(f'  settings {" ".join(definition["settings"])}; modes '
                 f'{" ".join(definition["modes"])}; domain {domain}')
    if definition.get('label_seed_per_seed'):
        lines.append('  each training seed draws its own partial labels')
    lines.append(f'  runs in {abs_path(definition["work_dir"])}')
    if definition.get('cfg_options'):
        lines.append('  overrides ' +
                     ' '.join(f'{k}={v}'
                              for k, v in definition['cfg_options'].items()))
    print('\n'.join(lines), file=sys.stderr, flush=True)


def write_json(path: str, data: dict) -> None:
    import json
    os.makedirs(osp.dirname(osp.abspath(path)), exist_ok=True)
    tmp = path + '.tmp'
    with open(tmp, 'w') as f:
        json.dump(data, f, indent=1)
        f.write('\n')
    os.replace(tmp, path)


def check_all(root: str,
              rerun: int = 0,
              rerun_seed: Optional[int] = None) -> List[str]:
    """The problems that ``--check-docs`` reports for the checkout at
    ``root``: its benchmark files against their records
    (:func:`~mmlml.benchmark.reports.docs_check.check_docs`), the quotes
    of the benchmark pages against theirs (:func:`check_prose`) and, with
    ``rerun``, that many recorded runs trained again."""
    problems = docs_check.check_docs(root) + check_prose(root)
    if rerun:
        from mmlml.benchmark.reports.record_rerun import rerun_records
        problems += rerun_records(
            docs_check.record_files(root), root, rerun, rerun_seed)
    return problems


def main(argv=None):
    """Run the command line ``argv``. A mistake of the command line or of
    its files (an output over an input or over an existing file, a corrupt
    record, ledger or storage) raises ``FileExistsError`` or ``ValueError``
    naming it; run as a script, that is one line."""
    args = parse_args(argv)
    check_checkout(__file__)  # its configs/ and tools/demo.py
    if args.check_docs:
        if args.fix_prose:
            for change in fix_quotes(ROOT):
                print(f'[fix-prose] {change}')
        problems = check_all(ROOT, args.rerun, args.rerun_seed)
        for problem in problems:
            print(f'[check-docs] {problem}', file=sys.stderr)
        if problems:
            raise SystemExit(1)
        print('[check-docs] every benchmark file and every marked quote '
              'matches its record')
        return None
    if args.report_only:
        if not args.out:
            raise ValueError('--report-only reads --out, the record of a '
                             'sweep: give it')
        args.out, record = None, args.out
        check_outputs(args, [record])
        print(write_from_json(record, args))
        return None
    return run(args)


if __name__ == '__main__':
    signal.signal(signal.SIGTERM, interrupted)  # stops as Ctrl-C does
    try:
        main()
    except (FileExistsError, ValueError) as error:  # one line, no traceback
        raise SystemExit(f'[benchmark] {error}') from None
    except KeyboardInterrupt as stop:  # Ctrl-C or SIGTERM: one line
        raise stopped('benchmark', stop) from None
