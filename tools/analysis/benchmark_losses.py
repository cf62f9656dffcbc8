"""Time the forward + backward pass of every registered mmlml loss against
PyTorch's fused ``binary_cross_entropy_with_logits``.

Each loss is timed beside the fused BCE on the same inputs, in alternating
pairs (BCE then loss, loss then BCE, ...), after a warm-up; one sample of
either is the mean of enough calls to last ``--min-time`` seconds. The
figure to read is the median of the paired ratios (loss / BCE): pairs cancel
the drift of a shared machine, which moves absolute times by tens of
percent between runs. The thread count is fixed (``--threads``, default 1),
since the default pool makes CPU times jump in steps, and the memory
allocator is settled first (see :func:`settle_allocator`). The losses
that run as a compiled CPU kernel (GR Loss, LASD) compile it during the
warm-up; ``MMLML_COMPILE=0`` times their eager implementations::

    python tools/analysis/benchmark_losses.py
    python tools/analysis/benchmark_losses.py --shape 1024 567 --pairs 30
    python tools/analysis/benchmark_losses.py --device cuda --amp
    MMLML_COMPILE=0 python tools/analysis/benchmark_losses.py --losses GRLoss
"""
import argparse
import os.path as osp
import statistics
import sys
import time

sys.path.insert(0,
                osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__)))))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from mmlml.models.losses import LOSS_CATALOG, example_state  # noqa: E402
from mmlml.registry import MODELS  # noqa: E402

#: The shapes timed by default: a COCO-sized and an OpenImages-sized head
#: at a small batch, and an OpenImages-sized head at a large batch.
DEFAULT_SHAPES = [(64, 80), (64, 567), (1024, 567)]


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
    for _ in range(warmup):
        reference()
        candidate()
    numbers = [
        calls_per_sample(step, device, min_time)
        for step in (reference, candidate)
    ]
    ref_times, cand_times, ratios = [], [], []
    for i in range(pairs):
        order = (0, 1) if i % 2 == 0 else (1, 0)
        measured = [0.0, 0.0]
        for which in order:
            step = (reference, candidate)[which]
            measured[which] = sample(step, numbers[which], device)
        ref_times.append(measured[0])
        cand_times.append(measured[1])
        ratios.append(measured[1] / measured[0])
    return (statistics.median(ref_times), statistics.median(cand_times),
            statistics.median(ratios))


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


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
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
        '--pairs', type=int, default=15, help='timed pairs per loss')
    parser.add_argument(
        '--warmup', type=int, default=3, help='untimed pairs first')
    parser.add_argument(
        '--min-time',
        type=float,
        default=0.02,
        help='seconds one timing sample lasts at least')
    parser.add_argument(
        '--threads',
        type=int,
        default=1,
        help='torch CPU threads (fixed, for stable figures)')
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
    parser.add_argument('--device', default='cpu')
    parser.add_argument(
        '--amp', action='store_true', help='time under autocast')
    args = parser.parse_args(argv)
    unknown = set(args.losses or ()) - set(LOSS_CATALOG)
    if unknown:
        parser.error(f'unknown loss types {sorted(unknown)}; choose from '
                     f'{sorted(LOSS_CATALOG)}')
    if args.threads < 1 or args.pairs < 1:
        parser.error('--threads and --pairs must be positive')
    torch.set_num_threads(args.threads)
    settle_allocator(args.device)
    names = args.losses or list(LOSS_CATALOG)

    for num, classes in args.shape or DEFAULT_SHAPES:
        logits, target = single_positive_batch(num, classes, args.device,
                                               args.logit_mean, args.logit_std)
        reference = Step(fused_bce(target, num), logits, args.amp)
        print(f'\nN={num}, C={classes}, {args.device}'
              f'{" (autocast)" if args.amp else ""}, '
              f'logits N({args.logit_mean:g}, {args.logit_std:g}^2), '
              f'{torch.get_num_threads()} thread(s), forward + backward, '
              f'medians of {args.pairs} pairs')
        print(f'{"loss":<24}{"fused BCE us":>14}{"loss us":>12}'
              f'{"x fused BCE":>13}')
        for name in names:
            loss, state = catalog_loss(name, logits)
            candidate = Step(
                lambda x, loss=loss, state=state: loss(
                    x, target, avg_factor=num, **state),
                logits,
                args.amp)
            bce, seconds, ratio = paired_times(reference, candidate,
                                               args.pairs, args.warmup,
                                               args.min_time, args.device)
            print(f'{name:<24}{bce * 1e6:>14.0f}{seconds * 1e6:>12.0f}'
                  f'{ratio:>13.2f}')


if __name__ == '__main__':
    main()
