"""Time a training iteration of demo configs eager and with MMEngine's
``compile=True``.

Each config is built by MMEngine's ``Runner`` with ``compile=True`` (or
``compile=dict(backend=...)``), which wraps ``model.train_step`` in
``torch.compile`` (``Runner._maybe_compile``) just before the training
loop runs; the loop is replaced by the timing below, after the
``before_train`` and ``before_train_epoch`` hooks (which attach a method's
label store). A few batches of the config's training dataloader are loaded
first, so that data loading is not timed. The eager ``train_step`` (the
model class's) and the compiled one then take turns on the same model,
in alternating order, round after round; the first rounds compile and
warm up. The figures to read are the median seconds per iteration of
each, the median of their paired ratios (compiled / eager, which cancels
the drift of a shared machine) and the one-off cost of compiling: the
first compiled iteration (``first s``) and the compiled warm-up rounds
beyond their steady time (``one-off s``; inductor's on-disk cache shortens
both on later runs). ``graphs`` and ``breaks`` are dynamo's counts of
compiled graphs and graph breaks.

With ``--epochs N``, whole epochs are timed first, on the batches of one
epoch loaded beforehand (the last, smaller batch included): one compiled
epoch, which compiles, then ``N`` rounds of one eager and one compiled
epoch. The figures are the median seconds of an eager and of a compiled
epoch and the compilation time (the first compiled epoch beyond the
median compiled one; the iteration rounds then find the step compiled,
so their ``first s`` and ``one-off s`` are left out). ``graphs`` counts
every compilation: of the first batch, again once the values that
change between batches are symbolic, and of the last batch's size::

    python tools/analysis/benchmark_compile.py
    python tools/analysis/benchmark_compile.py configs/demo/hill.py \\
        configs/demo/em_apl.py --rounds 30 --epochs 3
"""
import os.path as osp
import statistics
import tempfile
import time

import torch

import mmlml  # noqa: F401  (registers modules, applies fixes)
from mmlml.cli import (add_rounds_arguments, add_threads_argument, load_config,
                       tool_parser)

ROOT = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))

#: The config timed when none is given.
DEFAULT_CONFIG = osp.join(ROOT, 'configs', 'demo', 'hill.py')


def build_runner(config, work_dir, backend, batch_size=None):
    """The Runner of ``config`` with ``compile`` on, without validation,
    checkpoints or logs to disk."""
    from mmengine.runner import Runner
    cfg = load_config(config)
    cfg.work_dir = work_dir
    cfg.experiment_name = f'benchmark_compile_{id(cfg)}'
    cfg.compile = True if backend == 'inductor' else dict(backend=backend)
    cfg.val_dataloader = cfg.val_cfg = cfg.val_evaluator = None
    cfg.default_hooks.checkpoint = None
    cfg.default_hooks.logger = dict(type='LoggerHook', interval=1 << 30)
    cfg.vis_backends = []
    cfg.visualizer = dict(type='UniversalVisualizer', vis_backends=[])
    cfg.log_level = 'WARNING'
    if batch_size is not None:
        cfg.train_dataloader.batch_size = batch_size
    return Runner.from_cfg(cfg)


def timed(step, data, optim_wrapper, device):
    """Seconds of one ``step(data, optim_wrapper)`` on ``device``."""
    if device.type == 'cuda':
        torch.cuda.synchronize()
    start = time.perf_counter()
    step(data, optim_wrapper)
    if device.type == 'cuda':
        torch.cuda.synchronize()
    return time.perf_counter() - start


def time_epochs(steps, batches, optim_wrapper, device, epochs):
    """Seconds of one compiled epoch over ``batches`` (the one that
    compiles), then of ``epochs`` rounds of an eager and a compiled one."""
    eager, compiled = steps

    def epoch(step):
        return sum(
            timed(step, data, optim_wrapper, device) for data in batches)

    first = epoch(compiled)
    times = ([], [])
    for _ in range(epochs):
        times[0].append(epoch(eager))
        times[1].append(epoch(compiled))
    return first, times


def benchmark(config, args):
    """Train ``config`` for ``args.warmup + args.rounds`` rounds of one
    eager and one compiled iteration; the figures of :func:`main`'s
    table."""
    from torch._dynamo.utils import counters
    results = {}
    with tempfile.TemporaryDirectory() as work_dir:
        runner = build_runner(config, work_dir, args.backend, args.batch)
        torch.set_num_threads(args.threads)

        def run():
            runner.call_hook('before_train')
            runner.call_hook('before_train_epoch')
            model = runner.model.train()
            assert 'train_step' in vars(model), (
                'the Runner did not compile train_step')
            eager = type(model).train_step.__get__(model)
            compiled = model.train_step  # set by Runner._maybe_compile
            steps = (eager, compiled)
            device = next(model.parameters()).device
            results['device'] = device.type
            if args.epochs:
                epoch = list(runner.train_dataloader)
                results['epochs'] = len(epoch), time_epochs(
                    steps, epoch, runner.optim_wrapper, device, args.epochs)
            loader = iter(runner.train_dataloader)
            batches = [next(loader) for _ in range(args.batches)]
            times = ([], [])
            for index in range(args.warmup + args.rounds):
                data = batches[index % len(batches)]
                order = (0, 1) if index % 2 else (1, 0)
                measured = [0.0, 0.0]
                for which in order:
                    measured[which] = timed(steps[which], data,
                                            runner.optim_wrapper, device)
                for which in (0, 1):
                    times[which].append(measured[which])
            results['times'] = times
            results['graphs'] = counters['stats']['unique_graphs']
            results['breaks'] = sum(counters['graph_break'].values())
            runner.call_hook('after_train')
            return model

        torch._dynamo.reset()
        counters.clear()
        runner.train_loop.run = run
        runner.train()
        results['batch'] = runner.train_dataloader.batch_size
    eager, compiled = results['times']
    steady = slice(args.warmup, None)
    ratios = [c / e for e, c in zip(eager[steady], compiled[steady])]
    eager_median = statistics.median(eager[steady])
    compiled_median = statistics.median(compiled[steady])
    epochs = {}
    if args.epochs:
        batches, (first, (eager_epochs, compiled_epochs)) = results['epochs']
        epochs = dict(
            batches=batches,
            eager_epoch=statistics.median(eager_epochs),
            compiled_epoch=statistics.median(compiled_epochs),
            compile=first - statistics.median(compiled_epochs))
    return dict(
        epochs=epochs,
        device=results['device'],
        batch=results['batch'],
        eager=eager_median,
        compiled=compiled_median,
        ratio=statistics.median(ratios),
        first=compiled[0],
        one_off=sum(compiled[:args.warmup]) - args.warmup * compiled_median,
        graphs=results['graphs'],
        breaks=results['breaks'])


def parse_args(argv=None):
    parser = tool_parser(__doc__)
    parser.add_argument(
        'configs',
        nargs='*',
        default=[DEFAULT_CONFIG],
        help='configs to time (default: configs/demo/hill.py)')
    add_rounds_arguments(
        parser, 'one eager and one compiled iteration each',
        'untimed rounds first (they compile; 0 times the compiling round)')
    parser.add_argument(
        '--batches',
        type=int,
        default=4,
        help='training batches loaded before timing, used in turn')
    parser.add_argument(
        '--epochs',
        type=int,
        default=0,
        help='time this many rounds of one eager and one compiled epoch '
        '(after a compiled epoch that compiles; default 0: none)')
    parser.add_argument(
        '--batch',
        type=int,
        default=None,
        help='batch size (default: the config\'s)')
    add_threads_argument(parser)
    parser.add_argument(
        '--backend', default='inductor', help='torch.compile backend')
    args = parser.parse_args(argv)
    if min(args.rounds, args.batches, args.threads) < 1 or min(
            args.warmup, args.epochs) < 0:
        parser.error('--rounds, --batches and --threads must be positive, '
                     '--warmup and --epochs not negative')
    if args.batch is not None and args.batch < 1:
        parser.error('--batch must be positive')
    return args


def main(argv=None):
    args = parse_args(argv)
    rows = [(config, benchmark(config, args)) for config in args.configs]
    print(f'\nTraining iteration (train_step), eager vs compile=True '
          f'({args.backend}), {rows[0][1]["device"]}, {args.threads} '
          f'thread(s), medians of '
          f'{args.rounds} rounds after {args.warmup} warm-up rounds')
    print(f'{"config":<24}{"batch":>6}{"eager ms":>10}{"compiled ms":>13}'
          f'{"compiled x eager":>18}{"first s":>9}{"one-off s":>11}'
          f'{"graphs":>8}{"breaks":>8}')
    for config, row in rows:
        name = osp.relpath(config, osp.join(ROOT, 'configs'))
        # With --epochs the epochs compiled the step (see the epoch table).
        first, one_off = ('-',
                          '-') if args.epochs else (f'{row["first"]:.1f}',
                                                    f'{row["one_off"]:.1f}')
        print(f'{name:<24}{row["batch"]:>6}{row["eager"] * 1e3:>10.1f}'
              f'{row["compiled"] * 1e3:>13.1f}{row["ratio"]:>18.2f}'
              f'{first:>9}{one_off:>11}{row["graphs"]:>8}{row["breaks"]:>8}')
    if not args.epochs:
        return
    print(f'\nTraining epoch, eager vs compile=True ({args.backend}), '
          f'medians of {args.epochs} epochs after a compiling one')
    print(f'{"config":<24}{"batches":>8}{"eager s":>9}{"compiled s":>12}'
          f'{"compile s":>11}')
    for config, row in rows:
        name = osp.relpath(config, osp.join(ROOT, 'configs'))
        epoch = row['epochs']
        print(f'{name:<24}{epoch["batches"]:>8}{epoch["eager_epoch"]:>9.2f}'
              f'{epoch["compiled_epoch"]:>12.2f}{epoch["compile"]:>11.1f}')


if __name__ == '__main__':
    main()
