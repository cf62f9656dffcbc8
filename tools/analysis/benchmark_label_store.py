"""What the label store costs: memory and checkpoint size at a given scale
(OpenImages by default) after realistic updates, the time of APL's epoch-end
update there, and the per-iteration lookup and update against a demo
training iteration.

    python tools/analysis/benchmark_label_store.py
    python tools/analysis/benchmark_label_store.py --num-samples 82081 \\
        --num-classes 80          # COCO
"""
import io
import os.path as osp
import resource
import statistics
import time
from types import SimpleNamespace

import numpy as np
import torch

from mmlml.cli import tool_parser
from mmlml.hooks import APLHook
from mmlml.structures import LabelStore


def peak_rss_gib():
    """The process's peak resident memory so far (Linux: KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def checkpoint_mib(store):
    buffer = io.BytesIO()
    torch.save(store.state_dict(), buffer)
    return buffer.tell() / 2**20


def single_positive_labels(num, classes, rng):
    observed = np.zeros((num, classes), dtype=np.int8)
    observed[np.arange(num), rng.randint(classes, size=num)] = 1
    return observed


def fill_scores(store, gen, rows=1 << 16, value_sign=-1):
    """Record a probability for every entry without a pseudo-label, as an
    epoch of training passes does (``value_sign=1``: give each one a
    pseudo-label instead), in blocks of rows, bypassing the batch API."""
    for start in range(0, store.num_samples, rows):
        block = store.table[start:start + rows]
        scores = torch.rand(block.shape, generator=gen).half()
        labelled = ~torch.signbit(block) & ~block.isnan()
        block.copy_(torch.where(labelled, block, value_sign * scores))


def median_us(fn, repeats=50):
    times = []
    for _ in range(repeats + 5):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times[5:]) * 1e6


def demo_iteration_us(batch_size, repeats):
    """Median time of one training step of the demo model and head on a
    random batch (SGD step included)."""
    from mmengine.config import Config
    from mmengine.optim import build_optim_wrapper
    from mmengine.registry import init_default_scope
    from mmpretrain.registry import MODELS
    from mmpretrain.structures import DataSample

    import mmlml  # noqa: F401
    init_default_scope('mmpretrain')
    root = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))
    cfg = Config.fromfile(osp.join(root, 'configs/demo/an.py'))
    cfg.model.data_preprocessor = cfg.data_preprocessor
    model = MODELS.build(cfg.model)
    optim = build_optim_wrapper(model, cfg.optim_wrapper)
    num_classes = cfg.model.head.num_classes
    data = dict(
        inputs=[
            torch.randint(0, 255, (3, 32, 32), dtype=torch.uint8)
            for _ in range(batch_size)
        ],
        data_samples=[
            DataSample(metainfo=dict(sample_idx=i)).set_gt_label([i % 20])
            for i in range(batch_size)
        ])
    model.train()
    return median_us(lambda: model.train_step(data, optim),
                     repeats), num_classes


def main(argv=None):
    parser = tool_parser(__doc__)
    parser.add_argument(
        '--num-samples',
        type=int,
        default=1_743_042,
        help='samples in the label store (default: 1743042, OpenImages V6 '
        'training images)')
    parser.add_argument(
        '--num-classes',
        type=int,
        default=567,
        help='classes in the label store (default: 567, the OpenImages '
        'subset)')
    parser.add_argument(
        '--batch-size',
        type=int,
        default=32,
        help='samples per iteration of the lookup/update timing and of the '
        'demo training step (default: 32)')
    parser.add_argument(
        '--repeats',
        type=int,
        default=20,
        help='timed demo training steps (median)')
    parser.add_argument(
        '--skip-demo',
        action='store_true',
        help='skip the demo training-step timing')
    args = parser.parse_args(argv)
    num, classes = args.num_samples, args.num_classes
    rng = np.random.RandomState(0)
    gen = torch.Generator().manual_seed(0)
    print(f'Label store of {num:,} samples x {classes} classes '
          f'({num * classes / 1e6:,.0f} M entries), 1 thread')

    observed = single_positive_labels(num, classes, rng)
    before = peak_rss_gib()
    store = LabelStore(num, classes)
    print(f'  memory: {store.nbytes / 2**30:.2f} GiB (2 bytes per entry); '
          f'the dataset holds its int8 observed labels beside it: '
          f'{observed.nbytes / 2**30:.2f} GiB')

    # APL with the paper's schedule: theta 0.9, 10 epochs, warm-up 5: six
    # calls, each pseudo-labelling at most 18% of a class's unannotated
    # entries. The first call is run; after the sixth every unannotated
    # entry holds a soft pseudo-label, which is set directly.
    hook = APLHook(warmup_epochs=5, theta=0.9)
    hook.store = store
    hook.dataset = SimpleNamespace(observed_labels=observed)
    zeros = torch.from_numpy((observed == 0).sum(0))
    hook.quota = (0.9 * zeros.double() / 5).floor().long()
    fill_scores(store, gen)
    start = time.perf_counter()
    added = hook.assign_pseudo_labels()
    seconds = time.perf_counter() - start
    print(f'  APL, first call: {added:,} pseudo-labels '
          f'({added / (num * classes):.0%} of the entries) in '
          f'{seconds:.0f} s; checkpoint part {checkpoint_mib(store):,.0f} '
          'MiB')
    fill_scores(store, gen, value_sign=1)  # all labelled: an upper bound
    print(f'  APL, after the sixth call (at most every entry, '
          f'{store.num_pseudo_labels:,}, pseudo-labelled): checkpoint part '
          f'{checkpoint_mib(store):,.0f} MiB')
    del store, hook

    # LL-Cp: 0.1% of a batch's entries (VOC's delta) made positive per
    # iteration from epoch 2 on, 10 epochs: about 0.9% of all entries.
    store = LabelStore(num, classes)
    fraction = 0.009
    chosen = torch.randint(
        num * classes, (int(fraction * num * classes), ),
        generator=gen).unique()
    store.assign(chosen // classes, chosen % classes, 1.0)
    print(f'  LL-Cp after 10 epochs ({chosen.numel():,} entries, '
          f'{chosen.numel() / (num * classes):.1%}, corrected to 1): '
          'checkpoint part '
          f'{checkpoint_mib(store):,.0f} MiB')

    # Per iteration: the head's lookup and the hook's score update.
    batch = torch.from_numpy(rng.choice(num, args.batch_size, replace=False))
    probs = torch.rand(args.batch_size, classes)
    lookup = median_us(lambda: store.batch_state(batch, ['pseudo_labels']))
    update = median_us(lambda: store.record_scores(batch, probs))
    print(f'  per iteration (batch {args.batch_size}): lookup {lookup:.0f} '
          f'us, score update {update:.0f} us')
    print(f'  peak process memory: {peak_rss_gib():.2f} GiB '
          f'({peak_rss_gib() - before:.2f} GiB above the start)')

    if not args.skip_demo:
        step, demo_classes = demo_iteration_us(args.batch_size, args.repeats)
        small = LabelStore(4000, demo_classes)
        index = torch.arange(args.batch_size)
        probs = torch.rand(args.batch_size, demo_classes)
        cost = median_us(
            lambda: small.batch_state(index, ['pseudo_labels'])) + median_us(
                lambda: small.record_scores(index, probs))
        print(f'Demo (4,000 x {demo_classes}): training step {step / 1e3:.1f}'
              f' ms, store lookup + update {cost:.0f} us = '
              f'{cost / step:.2%} of the step')


if __name__ == '__main__':
    torch.set_num_threads(1)
    main()
