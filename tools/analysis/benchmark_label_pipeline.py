"""Time and peak memory of the label pipeline, OpenImages' size by default.

What building the partial labels costs at a given scale: each stage of the
label pipeline on a random 0/1 label matrix.

The stages are the 0/1 check of the full labels, ``make_partial_labels`` in
the single positive mode and with missing ratio 0.5, ``split_train_val``,
and ``PartialLabelDataset.full_init`` (reading the labels of the wrapped
dataset, generating single positive labels, splitting off the training
rows, the statistics) over an in-memory ``CustomMultiLabelDataset`` that
lists the same positives (its own loading, not part of the label pipeline,
is timed once on its own line), once reading its labels at once
(``get_label_matrices``) and once sample by sample (``get_label_states``,
as for a wrapped dataset without the bulk reader, :class:`PerSample`). No
image is read or written.

Each time is the median of ``--repeats`` runs. The peak memory is measured
in one more run of each stage under ``tracemalloc``, which follows every
allocation of Python and numpy: the peak of the traced memory during the
stage minus the traced memory before it, so it includes the stage's output.
The last column divides it by the output of the stage (the label matrices
it makes, or the input matrix for the check, which makes none).

    python tools/analysis/benchmark_label_pipeline.py
    python tools/analysis/benchmark_label_pipeline.py --rows 82081 \\
        --classes 80 --positives 2.9          # COCO
"""
import gc
import logging
import statistics
import time
import tracemalloc

import numpy as np
from mmengine.logging import MMLogger

from mmlml.cli import tool_parser
from mmlml.datasets import (CustomMultiLabelDataset, PartialLabelDataset,
                            make_partial_labels, split_train_val)
from mmlml.datasets.partial.draws import check_binary_matrix

STAGES = ('check', 'single_positive', 'ratio', 'split', 'full_init',
          'full_init_per_sample')


class GeneratedLabels(CustomMultiLabelDataset):
    """A ``CustomMultiLabelDataset`` whose annotation is a given 0/1 matrix
    (one item per row, ``gt_label`` its positives), made in memory instead
    of read from a file."""

    def __init__(self, full: np.ndarray, **kwargs):
        self._full = full
        classes = [f'class{c}' for c in range(full.shape[1])]
        super().__init__(
            ann_file='',
            metainfo=dict(classes=classes),
            lazy_init=True,
            **kwargs)

    def load_data_list(self):
        full = self._full
        rows, cols = np.nonzero(full)
        ptr = np.searchsorted(rows, np.arange(len(full) + 1)).tolist()
        cols = cols.tolist()
        del rows
        return [
            dict(img_path=f'{i:016x}.jpg', gt_label=cols[ptr[i]:ptr[i + 1]])
            for i in range(len(full))
        ]


class PerSample:
    """A wrapped dataset that gives its labels one sample at a time
    (``get_label_states``, no ``get_label_matrices``): the path of
    ``PartialLabelDataset.full_init`` for datasets without a bulk reader."""

    def __init__(self, inner):
        self.inner = inner
        self.pipeline = inner.pipeline
        self.metainfo = inner.metainfo

    def __len__(self):
        return len(self.inner)

    def get_data_info(self, idx):
        return self.inner.get_data_info(idx)

    def get_label_states(self, idx):
        return self.inner.get_label_states(idx)


def random_labels(rows, classes, positives, seed=0):
    """A ``(rows, classes)`` ``uint8`` matrix of independent 0/1 labels with
    ``positives`` positives per row on average, made in chunks."""
    rng = np.random.default_rng(seed)
    full = np.empty((rows, classes), dtype=np.uint8)
    rate = positives / classes
    step = max(1, (1 << 22) // max(1, classes))
    for start in range(0, rows, step):
        block = full[start:start + step]
        block[...] = rng.random(block.shape, dtype=np.float32) < rate
    return full


def measure(run, repeats, trace):
    """The median seconds of ``repeats`` calls of ``run`` and, with
    ``trace``, the traced peak extra bytes of one more call (None without).
    ``run`` returns the bytes of the stage's output."""
    seconds = []
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        output_bytes = run()
        seconds.append(time.perf_counter() - start)
    peak = None
    if trace:
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        output_bytes = run()
        peak = tracemalloc.get_traced_memory()[1] - before
        tracemalloc.stop()
    return statistics.median(seconds), min(seconds), max(seconds), peak, \
        output_bytes


def parse_args(argv=None):
    parser = tool_parser(__doc__)
    parser.add_argument(
        '--rows', type=int, default=1_743_042, help='samples N')
    parser.add_argument('--classes', type=int, default=567, help='classes C')
    parser.add_argument(
        '--positives',
        type=float,
        default=8.3,
        help='mean positives per row (each label is positive independently '
        'with probability positives / classes)')
    parser.add_argument(
        '--repeats',
        type=int,
        default=3,
        help='timed runs of each stage (the median is printed)')
    parser.add_argument(
        '--stages',
        nargs='+',
        choices=STAGES,
        default=list(STAGES),
        help='the stages to run')
    parser.add_argument(
        '--no-memory',
        action='store_true',
        help='skip the traced run of each stage (peak memory)')
    parser.add_argument(
        '--seed', type=int, default=0, help='seed of the random matrix')
    args = parser.parse_args(argv)
    if args.rows < 1 or args.classes < 1 or args.repeats < 1:
        parser.error('--rows, --classes and --repeats must be positive.')
    if not 0 <= args.positives <= args.classes:
        parser.error('--positives must lie in [0, --classes].')
    return args


def main(argv=None):
    args = parse_args(argv)
    num, classes = args.rows, args.classes
    # The datasets log their statistics: keep the table readable.
    MMLogger.get_current_instance().setLevel(logging.ERROR)
    print(
        f'Label pipeline on {num:,} samples x {classes} classes '
        f'({num * classes / 1e6:,.0f} M labels, {args.positives:g} '
        f'positives per row), median of {args.repeats}; peak memory: ' +
        ('not measured' if args.no_memory else
         'tracemalloc peak during one more run, minus before'),
        flush=True)
    start = time.perf_counter()
    full = random_labels(num, classes, args.positives, args.seed)
    print(
        f'  random matrix made in {time.perf_counter() - start:.1f} s: '
        f'{full.sum(dtype=np.int64) / num:.2f} positives per row, '
        f'{full.nbytes / 2**30:.2f} GiB (uint8)',
        flush=True)

    def check():
        check_binary_matrix(full)
        return full.nbytes

    def partial(mode, ratio=None):

        def run():
            return make_partial_labels(full, mode, ratio=ratio).nbytes

        return run

    def split():
        train_idx, val_idx = split_train_val(num)
        return train_idx.nbytes + val_idx.nbytes

    missing_half = partial('ratio', 0.5)
    runs = dict(
        check=('0/1 check of the full labels', check, 'input'),
        single_positive=('make_partial_labels single_positive',
                         partial('single_positive'), 'observed'),
        ratio=('make_partial_labels ratio 0.5', missing_half, 'observed'),
        split=('split_train_val', split, 'indices'))

    if {'full_init', 'full_init_per_sample'} & set(args.stages):
        start = time.perf_counter()
        inner = GeneratedLabels(full)
        inner.full_init()
        has_bulk = hasattr(inner, 'get_label_matrices')
        print(
            f'  wrapped CustomMultiLabelDataset loaded in '
            f'{time.perf_counter() - start:.1f} s (its own loading, not '
            'part of the pipeline); labels read ' +
            ('at once (get_label_matrices)'
             if has_bulk else 'sample by sample'),
            flush=True)

        def full_init_of(wrapped):

            def run():
                dataset = PartialLabelDataset(
                    wrapped,
                    mode='single_positive',
                    split='train',
                    lazy_init=True)
                dataset.full_init()
                return dataset.full_labels.nbytes + \
                    dataset.observed_labels.nbytes

            return run

        runs['full_init'] = (
            'PartialLabelDataset.full_init single_positive train',
            full_init_of(inner), 'full + observed')
        runs['full_init_per_sample'] = (
            '  the same, labels read sample by sample',
            full_init_of(PerSample(inner)), 'full + observed')

    # The objects made so far (modules, the wrapped dataset) stay: leave
    # them out of the collections between the runs.
    gc.collect()
    gc.freeze()
    header = (f'  {"stage":<52} {"s median":>9} {"min-max":>12} '
              f'{"peak GiB":>9} {"output GiB":>11} {"peak/output":>12}')
    print(header, flush=True)
    results = {}
    for stage in args.stages:
        name, run, output = runs[stage]
        median, low, high, peak, output_bytes = measure(
            run, args.repeats, not args.no_memory)
        results[stage] = (median, peak, output_bytes)
        peak_text = '-' if peak is None else f'{peak / 2**30:.2f}'
        ratio = '-' if peak is None or not output_bytes else \
            f'{peak / output_bytes:.2f}x'
        print(
            f'  {name:<52} {median:>9.2f} {f"{low:.1f}-{high:.1f}":>12} '
            f'{peak_text:>9} {output_bytes / 2**30:>11.3f} '
            f'{ratio:>12}  ({output})',
            flush=True)
    gc.unfreeze()
    return results


if __name__ == '__main__':
    main()
