"""Score the training images of a config with a pseudo-labeller, once, for
``VLPseudoLabelHook(scores_file=...)`` in as many training runs as wanted.

::

    python tools/vl_pseudo_label.py CONFIG --out scores.npy \\
        [--labeller LABELLER_CONFIG] [--labeller-options k=v ...] \\
        [--split train|all] [--pipeline val|test] [--batch-size B] \\
        [--num-workers W] [--chunk-size S] [--device cpu] [--force]
    torchrun --nproc_per_node 8 tools/vl_pseudo_label.py CONFIG \\
        --out scores.npy --launcher pytorch

The output is an ``(N, C)`` float32 ``.npy``, one row per sample of the
dataset that the training ``PartialLabelDataset`` wraps (the hook's
``scores_file``), NaN in the rows not scored. The step, its command line
and its documentation are :mod:`mmlml.apis.vl_pseudo_label` (``python -m
mmlml.apis.vl_pseudo_label`` takes the same arguments, without the
checkout's ``tools/``).
"""
import sys

from mmlml.apis import vl_pseudo_label as step
from mmlml.apis.vl_pseudo_label import (TOOL, build_rows, find_labeller,
                                        hook_score_files, parse_args,
                                        score_training_images)

#: The tool's ``main(argv)`` returns the scores, as it always did.
main = step.run

#: The step's names that code importing the tool finds here.
__all__ = [
    'TOOL', 'build_rows', 'find_labeller', 'hook_score_files', 'main',
    'parse_args', 'score_training_images'
]

if __name__ == '__main__':
    sys.exit(step.main())
