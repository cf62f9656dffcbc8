"""Time a training iteration of a ResNet multi-label classifier with each
loss, to see what a loss adds to an iteration.

One iteration is the forward pass of a batch of random images through a
ResNet (MMPretrain's ``ResNet`` + ``GlobalAveragePooling`` + a linear
classifier), the loss against a single-positive target, the backward pass
and an SGD step; with ``--amp`` the forward pass and the loss run under
bf16 autocast. The losses take turns, one iteration each, round after
round, so that the drift of a shared machine cancels; the figures to read
are each loss's median iteration time and what it adds to AN's
(``ANLoss``, the assume-negative BCE)::

    python tools/analysis/benchmark_iteration.py --device cuda --amp
    python tools/analysis/benchmark_iteration.py --device cuda --amp \\
        --losses ANLoss GRLoss HighRankRegularizer ROLELoss

Per-sample state that a stateful loss reads from its head (pseudo-labels,
the ROLE estimator's logits) is an example tensor of the batch; the
estimator's logits take part in the backward pass as they do in training.
"""
import statistics
import time

import benchmark_losses
import torch
import torch.nn as nn

from mmlml.cli import (add_device_arguments, add_rounds_arguments,
                       add_threads_argument, tool_parser)
from mmlml.models.losses import LOSS_CATALOG

#: The reference every loss is compared with.
REFERENCE = 'ANLoss'

#: State tensors that are parameters of the model in training (they get a
#: gradient in the backward pass).
TRAINED_STATE = ('label_estimates', )


def build_network(depth: int, classes: int, device: str) -> nn.Module:
    """A ResNet of ``depth`` with global average pooling and a linear
    classifier, randomly initialised (the weights do not change the
    time)."""
    from mmpretrain.registry import MODELS as PRETRAIN_MODELS
    backbone = PRETRAIN_MODELS.build(dict(type='ResNet', depth=depth))
    neck = PRETRAIN_MODELS.build(dict(type='GlobalAveragePooling'))

    class Classifier(nn.Module):

        def __init__(self):
            super().__init__()
            self.backbone, self.neck = backbone, neck
            self.fc = nn.LazyLinear(classes)

        def forward(self, images):
            return self.fc(self.neck(self.backbone(images))[-1])

    return Classifier().to(device)


def build_losses(names, logits):
    """Each loss of ``names`` (see :func:`benchmark_losses.catalog_loss`)
    with its example state for logits like ``logits``."""
    losses = {}
    for name in names:
        loss, state = benchmark_losses.catalog_loss(name, logits)
        for key in TRAINED_STATE:
            if key in state:
                state[key].requires_grad_(True)
        losses[name] = (loss, state)
    return losses


def parse_args(argv=None):
    parser = tool_parser(__doc__)
    parser.add_argument(
        '--losses',
        nargs='+',
        help=f'loss types to time besides {REFERENCE} (default: every loss '
        'of LOSS_CATALOG)')
    parser.add_argument('--depth', type=int, default=50, help='ResNet depth')
    parser.add_argument('--size', type=int, default=448, help='image size')
    parser.add_argument(
        '--batch', type=int, default=32, help='images per iteration')
    parser.add_argument(
        '--classes', type=int, default=80, help='number of classes')
    add_rounds_arguments(parser, 'one iteration of each loss per round')
    add_device_arguments(parser, 'bf16 autocast (CUDA)')
    add_threads_argument(parser, default=None)
    args = parser.parse_args(argv)
    unknown = sorted(set(args.losses or ()) - set(LOSS_CATALOG))
    if unknown:
        parser.error(f'unknown losses {unknown}; known: '
                     f'{", ".join(LOSS_CATALOG)}')
    if min(args.rounds, args.batch, args.size, args.classes) < 1:
        parser.error('--rounds, --batch, --size and --classes must be '
                     'positive')
    return args


def main(argv=None):
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    names = [REFERENCE] + [
        name for name in (args.losses or LOSS_CATALOG) if name != REFERENCE
    ]
    torch.manual_seed(0)
    model = build_network(args.depth, args.classes, args.device)
    images = torch.randn(
        args.batch, 3, args.size, args.size, device=args.device)
    logits, target = benchmark_losses.single_positive_batch(
        args.batch, args.classes, args.device)
    model(images)  # initialise the lazy classifier
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-4, momentum=0.9)
    losses = build_losses(names, logits)

    def iteration(name):
        loss, state = losses[name]
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast(
                torch.device(args.device).type,
                dtype=torch.bfloat16,
                enabled=args.amp):
            value = loss(model(images), target, avg_factor=args.batch, **state)
        value.backward()
        optimizer.step()

    times = {name: [] for name in names}
    for round_index in range(args.warmup + args.rounds):
        for name in names:
            benchmark_losses.synchronize(args.device)
            start = time.perf_counter()
            iteration(name)
            benchmark_losses.synchronize(args.device)
            if round_index >= args.warmup:
                times[name].append(time.perf_counter() - start)

    medians = {name: statistics.median(times[name]) for name in names}
    reference = medians[REFERENCE]
    print(f'\nResNet-{args.depth}, batch {args.batch} x {args.size} px, '
          f'{args.classes} classes, {args.device}'
          f'{" (bf16 autocast)" if args.amp else ""}, '
          f'{torch.get_num_threads()} thread(s), medians of {args.rounds} '
          'rounds')
    print(f'{"loss":<24}{"iteration ms":>14}{"added to " + REFERENCE:>16}')
    for name in names:
        added = (medians[name] - reference) / reference
        print(f'{name:<24}{medians[name] * 1e3:>14.2f}{added:>+16.1%}')


if __name__ == '__main__':
    main()
