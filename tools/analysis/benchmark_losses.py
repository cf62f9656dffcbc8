"""Time the forward + backward pass of every registered mmlml loss against
PyTorch's fused ``binary_cross_entropy_with_logits``.

Prints, per loss, the median time of one forward + backward over
``--repeats`` runs and its ratio to the fused BCE measured in the same run
(ratios are what to compare: absolute times depend on the machine and its
load)::

    python tools/analysis/benchmark_losses.py --shape 128 80 --shape 1024 567
    python tools/analysis/benchmark_losses.py --device cuda --amp
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


def single_positive_batch(num, classes, device):
    """Logits and a single-positive target (one observed positive)."""
    logits = torch.randn(num, classes, device=device) * 3
    target = torch.zeros(num, classes, device=device)
    target[torch.arange(num), torch.randint(classes, (num, ))] = 1
    return logits, target


def time_step(fn, logits, repeats, amp):
    """Median seconds of ``fn(x).backward()``."""
    times = []
    for i in range(repeats + 3):  # 3 warm-up runs
        x = logits.detach().clone().requires_grad_(True)
        if x.is_cuda:
            torch.cuda.synchronize()
        start = time.perf_counter()
        with torch.autocast(x.device.type, enabled=amp):
            value = fn(x)
        value.backward()
        if x.is_cuda:
            torch.cuda.synchronize()
        if i >= 3:
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument(
        '--shape',
        nargs=2,
        type=int,
        action='append',
        metavar=('N', 'C'),
        help='batch size and number of classes (repeatable); default '
        '128 x 80 (COCO) and 1024 x 567 (OpenImages-sized)')
    parser.add_argument('--repeats', type=int, default=50)
    parser.add_argument('--device', default='cpu')
    parser.add_argument('--amp', action='store_true')
    args = parser.parse_args(argv)

    for num, classes in args.shape or [(128, 80), (1024, 567)]:
        logits, target = single_positive_batch(num, classes, args.device)
        bce = time_step(
            lambda x: F.binary_cross_entropy_with_logits(
                x, target.clamp(min=0), reduction='sum') / num, logits,
            args.repeats, args.amp)
        print(f'\nN={num}, C={classes}, {args.device}'
              f'{" (autocast)" if args.amp else ""}: fused BCE '
              f'{bce * 1e6:.0f} us (forward + backward, median)')
        print(f'{"loss":<24}{"median us":>12}{"x fused BCE":>14}')
        for name, kwargs in LOSS_CATALOG.items():
            loss = MODELS.build(dict(type=name, **kwargs)).to(args.device)
            if hasattr(loss, 'set_epoch'):
                loss.set_epoch(5, 10)
            state = example_state(loss, logits)
            seconds = time_step(
                lambda x: loss(x, target, avg_factor=num, **state), logits,
                args.repeats, args.amp)
            print(f'{name:<24}{seconds * 1e6:>12.0f}{seconds / bce:>14.2f}')


if __name__ == '__main__':
    main()
