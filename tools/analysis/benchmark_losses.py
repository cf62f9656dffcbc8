"""Time the forward + backward pass of every registered mmlml loss, eager
and compiled, against PyTorch's fused ``binary_cross_entropy_with_logits``,
and its share of a demo training iteration.

Each loss is timed beside the fused BCE (eager) on the same inputs, in
alternating rounds (BCE, eager loss, compiled loss, then the reverse
order, ...), after a warm-up; one sample of each is the mean of enough
calls to last ``--min-time`` seconds. The figures to read are the medians
of the paired ratios (loss / BCE): pairs cancel the drift of a shared
machine, which moves absolute times by tens of percent between runs. The
compiled loss is ``torch.compile(fullgraph=True, dynamic=False)`` of the
call of the loss, compiled during the warm-up (``--no-compile`` skips it:
compiling costs seconds per loss). The thread count is fixed
(``--threads``, default 1), since the default pool makes CPU times jump in
steps, and the memory allocator is settled first (see
:func:`settle_allocator`).

The ``demo`` section times one training iteration of the demo model
(``configs/demo/an.py``: preprocessing, forward, backward and SGD step of
a batch of random images) and, paired with it in the same way, each loss
at the demo's logits shape; the share to aim for is under 5% eager::

    python tools/analysis/benchmark_losses.py
    python tools/analysis/benchmark_losses.py --shape 1024 567 --pairs 30
    python tools/analysis/benchmark_losses.py --sections demo --no-compile
    python tools/analysis/benchmark_losses.py --device cuda --amp
"""
import os.path as osp
import statistics
import time

import torch
import torch.nn.functional as F

from mmlml.cli import add_device_arguments, add_threads_argument, tool_parser
from mmlml.models.losses import LOSS_CATALOG, example_state
from mmlml.registry import MODELS

#: The shapes timed by default: a COCO-sized and an OpenImages-sized head
#: at a small batch, and an OpenImages-sized head at a large batch.
DEFAULT_SHAPES = [(64, 80), (64, 567), (1024, 567)]

#: The config whose training iteration the ``demo`` section times.
DEMO_CONFIG = osp.join(
    osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__)))), 'configs',
    'demo', 'an.py')


def single_positive_batch(num, classes, device, mean=0.0, std=3.0, seed=0):
    """Logits drawn from N(mean, std^2) and a single-positive target (one
    observed positive)."""
    gen = torch.Generator().manual_seed(seed)
    logits = (torch.randn(num, classes, generator=gen) * std + mean).to(device)
    target = torch.zeros(num, classes)
    target[torch.arange(num),
           torch.randint(classes, (num, ), generator=gen)] = 1
    return logits, target.to(device)


def settle_allocator(device, mebibytes=31):
    """Allocate and free one large CPU tensor before timing.

    glibc's ``malloc`` gives freed memory back to the system when more than
    twice its largest freed block lies free at the top of the heap, and the
    next allocations touch fresh pages again. That threshold grows with the
    largest block freed so far, up to 32 MiB, so left at its start value
    the page faults of a timed call depend on which calls ran before it:
    up to a few milliseconds per call at 1024 x 567, for a loss and for the
    fused BCE it is compared with. A training process holds larger tensors
    and runs with the threshold settled; freeing a 31 MiB block settles it
    here. Other allocators are not affected either way."""
    if torch.device(device).type == 'cpu':
        block = torch.empty(mebibytes << 18)  # float32, 4 bytes each
        block.fill_(0)
        del block


def synchronize(device):
    if torch.device(device).type == 'cuda':
        torch.cuda.synchronize()


class Step:
    """One forward + backward of ``fn`` on fresh leaf logits."""

    def __init__(self, fn, logits, amp):
        self.fn, self.logits, self.amp = fn, logits, amp

    def __call__(self):
        x = self.logits.detach().requires_grad_(True)
        with torch.autocast(x.device.type, enabled=self.amp):
            value = self.fn(x)
        value.backward()


def calls_per_sample(step, device, min_time):
    """How many calls one timing sample needs to last ``min_time``."""
    number = 1
    while True:
        synchronize(device)
        start = time.perf_counter()
        for _ in range(number):
            step()
        synchronize(device)
        if time.perf_counter() - start >= min_time or number >= 1 << 16:
            return number
        number *= 2


def sample(step, number, device):
    """Mean seconds of one call over ``number`` calls."""
    synchronize(device)
    start = time.perf_counter()
    for _ in range(number):
        step()
    synchronize(device)
    return (time.perf_counter() - start) / number


def paired_times(reference, candidate, pairs, warmup, min_time, device):
    """Median seconds of ``reference`` and ``candidate`` and the median of
    their paired ratios (``candidate / reference``)."""
    ref, (cand, ), (ratio, ) = paired_times_many(reference, [candidate], pairs,
                                                 warmup, min_time, device)
    return ref, cand, ratio


def paired_times_many(reference, candidates, pairs, warmup, min_time, device):
    """Median seconds of ``reference``, those of each of ``candidates`` and
    the medians of their ratios to ``reference`` in the same round. The
    order alternates between rounds (forward, then reversed)."""
    steps = [reference] + list(candidates)
    for _ in range(warmup):
        for step in steps:
            step()
    numbers = [calls_per_sample(step, device, min_time) for step in steps]
    times = [[] for _ in steps]
    ratios = [[] for _ in candidates]
    for i in range(pairs):
        order = range(len(steps)) if i % 2 == 0 else reversed(
            range(len(steps)))
        measured = [0.0] * len(steps)
        for which in order:
            measured[which] = sample(steps[which], numbers[which], device)
        for which, seconds in enumerate(measured):
            times[which].append(seconds)
        for which in range(len(candidates)):
            ratios[which].append(measured[which + 1] / measured[0])
    medians = [statistics.median(t) for t in times]
    return medians[0], medians[1:], [statistics.median(r) for r in ratios]


def compiled(fn, backend):
    """``fn`` under ``torch.compile`` as one static graph."""
    return torch.compile(fn, fullgraph=True, dynamic=False, backend=backend)


def compile_step(step):
    """Run ``step`` once (compiling it); its seconds."""
    start = time.perf_counter()
    step()
    synchronize(step.logits.device)
    return time.perf_counter() - start


def catalog_loss(name, logits):
    """The loss ``name`` of :data:`LOSS_CATALOG` on the logits' device, at
    epoch 5 of 10 where it reads the epoch, and its example per-sample
    state for logits like ``logits``."""
    loss = MODELS.build(dict(type=name, **LOSS_CATALOG[name]))
    loss = loss.to(logits.device)
    if hasattr(loss, 'set_epoch'):
        loss.set_epoch(5, 10)
    return loss, example_state(loss, logits)


def fused_bce(target, num):
    """The reference: fused BCE on the positives (AN), summed over classes
    and averaged over samples, like the losses with ``avg_factor=N``."""
    positives = target.clamp(min=0)
    return lambda x: F.binary_cross_entropy_with_logits(
        x, positives, reduction='sum') / num


def loss_steps(name, logits, target, args):
    """The eager and (unless ``--no-compile``) compiled :class:`Step` of
    the loss ``name`` on ``logits`` and ``target``, and the seconds the
    compilation took (0 without it)."""
    num = logits.size(0)
    loss, state = catalog_loss(name, logits)

    def call(x):
        return loss(x, target, avg_factor=num, **state)

    steps = [Step(call, logits, args.amp)]
    seconds = 0.0
    if args.compile:
        torch._dynamo.reset()
        steps.append(Step(compiled(call, args.backend), logits, args.amp))
        seconds = compile_step(steps[-1])
    return steps, seconds


def time_shape(num, classes, names, args):
    """Print the table of every loss against fused BCE at ``num x
    classes``."""
    logits, target = single_positive_batch(num, classes, args.device,
                                           args.logit_mean, args.logit_std)
    reference = Step(fused_bce(target, num), logits, args.amp)
    print(f'\nN={num}, C={classes}, {args.device}'
          f'{" (autocast)" if args.amp else ""}, '
          f'logits N({args.logit_mean:g}, {args.logit_std:g}^2), '
          f'{torch.get_num_threads()} thread(s), forward + backward, '
          f'medians of {args.pairs} pairs')
    header = f'{"loss":<24}{"fused BCE us":>14}{"eager us":>10}' \
             f'{"eager x BCE":>13}'
    if args.compile:
        header += f'{"compiled us":>13}{"compiled x BCE":>16}'
    print(header)
    compile_seconds = 0.0
    for name in names:
        steps, seconds = loss_steps(name, logits, target, args)
        compile_seconds += seconds
        bce, times, ratios = paired_times_many(reference, steps, args.pairs,
                                               args.warmup, args.min_time,
                                               args.device)
        line = f'{name:<24}{bce * 1e6:>14.0f}'
        widths = [(10, 13), (13, 16)]
        for (t_width, r_width), seconds, ratio in zip(widths, times, ratios):
            line += f'{seconds * 1e6:>{t_width}.0f}{ratio:>{r_width}.2f}'
        print(line)
    if args.compile:
        print(f'compiling ({args.backend}) took {compile_seconds:.1f} s in '
              'all')


def demo_model(config, device):
    """The model of ``config`` (random weights), in training mode."""
    from mmengine.config import Config

    import mmlml  # noqa: F401
    cfg = Config.fromfile(config)
    torch.manual_seed(0)
    model = MODELS.build(cfg.model).to(device)
    return cfg, model.train()


def demo_batch(cfg, device, seed=0):
    """A batch of random uint8 images of the demo's size and batch size,
    each with one random positive, as the training dataloader gives it."""
    from mmpretrain.structures import DataSample
    gen = torch.Generator().manual_seed(seed)
    batch = cfg.train_dataloader.batch_size
    size = cfg.train_dataloader.dataset.dataset.img_size
    classes = cfg.model.head.num_classes
    images = [
        torch.randint(
            0, 256, (3, size, size), dtype=torch.uint8,
            generator=gen).to(device) for _ in range(batch)
    ]
    samples = [
        DataSample().set_gt_label(
            [int(torch.randint(classes, (1, ), generator=gen))])
        for _ in range(batch)
    ]
    return dict(inputs=images, data_samples=samples), batch, classes, size


class DemoIteration:
    """One training iteration of the demo model: ``model.train_step`` (the
    preprocessing, forward pass, loss, backward pass and SGD step)."""

    def __init__(self, model, data, amp):
        from mmengine.optim import OptimWrapper
        self.model, self.data, self.amp = model, data, amp
        self.device = next(model.parameters()).device
        self.optim_wrapper = OptimWrapper(
            torch.optim.SGD(model.parameters(), lr=1e-4, momentum=0.9))

    def __call__(self):
        with torch.autocast(self.device.type, enabled=self.amp):
            self.model.train_step(self.data, self.optim_wrapper)


def time_demo_share(names, args):
    """Print each loss's forward + backward time at the demo's logits
    shape as a share of a demo training iteration."""
    cfg, model = demo_model(args.demo_config, args.device)
    data, num, classes, size = demo_batch(cfg, args.device)
    iteration = DemoIteration(model, data, args.amp)
    logits, target = single_positive_batch(num, classes, args.device,
                                           args.logit_mean, args.logit_std)
    results = []
    for name in [None] + names:  # None: the fused BCE
        if name is None:
            steps = [Step(fused_bce(target, num), logits, args.amp)]
        else:  # compiled just before it is timed (a reset drops the graph)
            steps = loss_steps(name, logits, target, args)[0]
        medians = paired_times_many(iteration, steps, args.pairs, args.warmup,
                                    args.min_time, args.device)
        results.append((name or 'fused BCE', ) + medians)
    iteration_ms = statistics.median(r[1] for r in results) * 1e3
    print(f'\nDemo iteration ({osp.basename(args.demo_config)}: '
          f'{type(model.backbone).__name__}, batch {num} x {size} px, '
          f'{classes} classes), {args.device}'
          f'{" (autocast)" if args.amp else ""}, '
          f'{torch.get_num_threads()} thread(s): {iteration_ms:.1f} ms')
    print(f'Loss forward + backward at N={num}, C={classes}, as a share of '
          f'it, medians of {args.pairs} pairs (goal: under 5% eager)')
    header = f'{"loss":<24}{"eager us":>10}{"eager %":>9}'
    if args.compile:
        header += f'{"compiled us":>13}{"compiled %":>12}'
    print(header)
    for name, _, times, ratios in results:
        line = f'{name:<24}'
        widths = [(10, 9), (13, 12)]
        for (t_width, r_width), seconds, ratio in zip(widths, times, ratios):
            line += f'{seconds * 1e6:>{t_width}.0f}{ratio:>{r_width}.2%}'
        print(line)


def main(argv=None):
    parser = tool_parser(__doc__)
    parser.add_argument(
        '--shape',
        nargs=2,
        type=int,
        action='append',
        metavar=('N', 'C'),
        help='batch size and number of classes (repeatable); default '
        '64 x 80, 64 x 567 and 1024 x 567')
    parser.add_argument(
        '--losses',
        nargs='+',
        default=None,
        help='loss types to time (default: every loss of LOSS_CATALOG)')
    parser.add_argument(
        '--sections',
        nargs='+',
        choices=('shapes', 'demo'),
        default=['shapes', 'demo'],
        help='what to time: the losses against fused BCE at each shape, '
        'their share of a demo training iteration (default: both)')
    parser.add_argument(
        '--demo-config',
        default=DEMO_CONFIG,
        help='the config of the demo iteration (default: %(default)s)')
    parser.add_argument(
        '--no-compile',
        dest='compile',
        action='store_false',
        help='time the eager losses only')
    parser.add_argument(
        '--backend',
        default='inductor',
        help='torch.compile backend of the compiled losses')
    parser.add_argument(
        '--pairs', type=int, default=15, help='timed pairs per loss')
    parser.add_argument(
        '--warmup', type=int, default=3, help='untimed pairs first')
    parser.add_argument(
        '--min-time',
        type=float,
        default=0.02,
        help='seconds one timing sample lasts at least')
    add_threads_argument(parser)
    parser.add_argument(
        '--logit-mean',
        type=float,
        default=0.0,
        help='mean of the random logits (default 0: half the labels '
        'predicted positive, the most work for SPLC and LASD, whose '
        'pseudo-positives are then 20 to 40 percent of the labels; a '
        'trained model\'s logits sit far below 0)')
    parser.add_argument(
        '--logit-std', type=float, default=3.0, help='their std')
    add_device_arguments(parser)
    args = parser.parse_args(argv)
    unknown = set(args.losses or ()) - set(LOSS_CATALOG)
    if unknown:
        parser.error(f'unknown loss types {sorted(unknown)}; choose from '
                     f'{sorted(LOSS_CATALOG)}')
    if args.threads < 1 or args.pairs < 1:
        parser.error('--threads and --pairs must be positive')
    torch.set_num_threads(args.threads)
    # Every loss is called through the same function, whose compiled
    # graphs dynamo caches by code: the losses of a section must not
    # reach the cache's limit and fall back to eager.
    config = torch._dynamo.config
    limit = ('recompile_limit'
             if hasattr(config, 'recompile_limit') else 'cache_size_limit')
    setattr(config, limit, max(getattr(config, limit), 4 * len(LOSS_CATALOG)))
    settle_allocator(args.device)
    names = args.losses or list(LOSS_CATALOG)

    if 'shapes' in args.sections:
        for num, classes in args.shape or DEFAULT_SHAPES:
            time_shape(num, classes, names, args)
    if 'demo' in args.sections:
        time_demo_share(names, args)


if __name__ == '__main__':
    main()
