"""Relabel a training set with a trained model (the "pseudo label" baseline).

The middle step of the two-stage "BCE + pseudo label" baseline::

    python tools/pseudo_label.py CONFIG CHECKPOINT --out labels.npy [--thr 0.5]

An unannotated label whose predicted probability is strictly greater than
``--thr`` becomes an observed positive; every other label is kept. The
step, its command line and its documentation are
:mod:`mmlml.apis.pseudo_label` (``python -m mmlml.apis.pseudo_label``
takes the same arguments, without the checkout's ``tools/``).
"""
import sys

from mmlml.apis import pseudo_label as step
from mmlml.apis.pseudo_label import (_format, build_dataset, build_model,
                                     find_partial_label_cfg, parse_args,
                                     pseudo_label, relabel_training_set,
                                     summarise)

#: The tool's ``main(argv)`` returns the summaries, as it always did.
main = step.run

#: The step's names that code importing the tool finds here.
__all__ = [
    '_format', 'build_dataset', 'build_model', 'find_partial_label_cfg',
    'main', 'parse_args', 'pseudo_label', 'relabel_training_set', 'summarise'
]

if __name__ == '__main__':
    sys.exit(step.main())
