r"""Per-class decision thresholds: chosen on a validation split's known
labels, stored beside the checkpoint, read by the tools that predict.

**Choice** (:func:`choose_thresholds`). Only the *known* labels of the
validation split count: observed positives (1) and observed negatives
(0) in MMPretrain's evaluation encoding; an unknown label (-1) is never
read, neither as a negative nor through its score. Then

- the global threshold :math:`t_g` maximises OF1 over all known labels of
  all classes pooled (the F1 of the summed counts);
- each class's own threshold :math:`t_c^*` maximises that class's F1 over
  its known labels;
- a class with few known positives overfits its own threshold (three
  positives make a threshold that separates them perfectly, by chance),
  so it is shrunk toward the global one:

  .. math::
      t_c = \frac{n_c\,t_c^* + k\,t_g}{n_c + k},

  with :math:`n_c` the class's known positives and :math:`k` the
  shrinkage strength (:data:`DEFAULT_SHRINKAGE`, 10: a class with 10
  known positives goes halfway, one with 90 keeps 90% of its own
  threshold). A class without known positive has no F1 to maximise and
  takes :math:`t_g`.

A threshold is the midpoint between the lowest score predicted positive
and the next lower known score, and a label is predicted when its score
is ``>= `` the threshold (MMPretrain's rule).

**File** (:func:`save_thresholds`, :func:`load_thresholds`). Beside the
checkpoint ``X.pth``, ``X.thresholds.json`` (:func:`thresholds_path`)::

    {"format": "mmlml-class-thresholds", "version": 1,
     "classes": [names], "thresholds": [t_c per class],
     "global_threshold": t_g, "shrinkage": k,
     "best_thresholds": [t_c* per class, null without known positive],
     "known_positives": [n_c], "known_negatives": [per class],
     "source": {"config": ..., "checkpoint": ..., "split": ...}}

``classes``, ``thresholds`` and ``global_threshold`` are what a reader
needs (``tools/infer.py``, ``tools/test.py``, the exporter); the rest
records how they were chosen.
"""
import json
import os
import os.path as osp
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

__all__ = [
    'DEFAULT_SHRINKAGE', 'THRESHOLDS_SUFFIX', 'ClassThresholds',
    'best_f1_threshold', 'choose_thresholds', 'thresholds_path',
    'save_thresholds', 'load_thresholds', 'read_thresholds', 'check_classes',
    'threshold_metrics'
]

#: The shrinkage strength ``k`` of :func:`choose_thresholds`: the number of
#: known positives at which a class's threshold lies halfway between its
#: own best and the global one.
DEFAULT_SHRINKAGE = 10.0
#: What replaces a checkpoint's extension in its thresholds file's name.
THRESHOLDS_SUFFIX = '.thresholds.json'
#: The ``format`` and ``version`` written into every thresholds file.
FILE_FORMAT, FILE_VERSION = 'mmlml-class-thresholds', 1


@dataclass(frozen=True)
class ClassThresholds:
    """The thresholds of a model's classes and how they were chosen.

    Attributes:
        classes (tuple[str]): The class names, in the model's order.
        thresholds (tuple[float]): The threshold of each class, in [0, 1].
        global_threshold (float): The one threshold of every class (OF1's
            best on the validation labels).
        shrinkage (float): The shrinkage strength ``k``.
        best_thresholds (tuple[float or None]): Each class's own best
            threshold before shrinkage, None without a known positive.
        known_positives (tuple[int]): The known positives of each class
            they were chosen on.
        known_negatives (tuple[int]): The known negatives of each class.
        source (dict): Where they were chosen (config, checkpoint, split).
    """
    classes: Tuple[str, ...]
    thresholds: Tuple[float, ...]
    global_threshold: float
    shrinkage: float = DEFAULT_SHRINKAGE
    best_thresholds: Tuple[Optional[float], ...] = ()
    known_positives: Tuple[int, ...] = ()
    known_negatives: Tuple[int, ...] = ()
    source: Dict[str, str] = field(default_factory=dict)

    @property
    def num_classes(self) -> int:
        return len(self.classes)

    def as_array(self) -> np.ndarray:
        """The per-class thresholds, a ``(C,)`` ``float32`` array."""
        return np.asarray(self.thresholds, dtype=np.float32)

    def to_dict(self) -> dict:
        """The JSON object of the thresholds file."""
        return dict(
            format=FILE_FORMAT,
            version=FILE_VERSION,
            classes=list(self.classes),
            thresholds=[float(t) for t in self.thresholds],
            global_threshold=float(self.global_threshold),
            shrinkage=float(self.shrinkage),
            best_thresholds=[
                None if t is None else float(t) for t in self.best_thresholds
            ],
            known_positives=[int(n) for n in self.known_positives],
            known_negatives=[int(n) for n in self.known_negatives],
            source=dict(self.source))

    @classmethod
    def from_dict(cls, data: dict, where: str) -> 'ClassThresholds':
        """Check the JSON object of a thresholds file (``where`` names it
        in the errors) and make its thresholds."""
        if not isinstance(data, dict):
            raise ValueError(f'{where}: a thresholds file holds a JSON '
                             f'object, not {type(data).__name__}.')
        missing = [
            key for key in ('classes', 'thresholds', 'global_threshold')
            if key not in data
        ]
        if missing:
            raise ValueError(f'{where}: no {", ".join(missing)} (a '
                             'thresholds file needs classes, thresholds and '
                             'global_threshold).')
        classes, thresholds = data['classes'], data['thresholds']
        if not isinstance(classes, list) or not all(
                isinstance(name, str) for name in classes):
            raise ValueError(f'{where}: `classes` must be a list of names.')
        if len(set(classes)) != len(classes):
            raise ValueError(f'{where}: `classes` names a class twice.')
        if not isinstance(thresholds, list) or \
                len(thresholds) != len(classes):
            raise ValueError(f'{where}: `thresholds` must be a list of one '
                             f'number per class ({len(classes)}).')
        for name, value in [('global_threshold', data['global_threshold'])] \
                + [(f'thresholds[{i}]', t) for i, t in enumerate(thresholds)]:
            if isinstance(value, bool) or not isinstance(
                    value, (int, float)) or not 0 <= value <= 1:
                raise ValueError(f'{where}: `{name}` must be a number in '
                                 f'[0, 1], got {value!r}.')
        num_classes = len(classes)
        optional = {}
        for key in ('best_thresholds', 'known_positives', 'known_negatives'):
            values = data.get(key) or []
            if values and len(values) != num_classes:
                raise ValueError(f'{where}: `{key}` must have one entry per '
                                 f'class ({num_classes}).')
            optional[key] = tuple(values)
        return cls(
            classes=tuple(classes),
            thresholds=tuple(float(t) for t in thresholds),
            global_threshold=float(data['global_threshold']),
            shrinkage=float(data.get('shrinkage', DEFAULT_SHRINKAGE)),
            source=dict(data.get('source') or {}),
            **optional)


def best_f1_threshold(scores: np.ndarray,
                      labels: np.ndarray) -> Tuple[Optional[float], float]:
    """The threshold that maximises the F1 of known labels.

    Args:
        scores (np.ndarray): The scores of the known labels, 1-D.
        labels (np.ndarray): Their labels, 1 positive and 0 negative.

    Returns:
        tuple[float or None, float]: The threshold (the midpoint between
        the lowest score predicted positive and the next lower score; the
        lowest score itself when every label is predicted) and its F1;
        ``(None, 0.0)`` without a positive. Among equal F1, the highest
        threshold.
    """
    scores = np.asarray(scores, dtype=np.float64).reshape(-1)
    labels = np.asarray(labels).reshape(-1) == 1
    num_positives = int(labels.sum())
    if num_positives == 0:
        return None, 0.0
    order = np.argsort(-scores, kind='stable')
    sorted_scores, sorted_labels = scores[order], labels[order]
    true_positives = np.cumsum(sorted_labels)
    predicted = np.arange(1, len(scores) + 1)
    # Only cut between distinct scores: tied scores are predicted together.
    cut = np.append(sorted_scores[1:] < sorted_scores[:-1], True)
    f1 = np.where(cut, 2 * true_positives / (predicted + num_positives), -1)
    best = int(np.argmax(f1))
    lower = sorted_scores[best + 1] if best + 1 < len(scores) else None
    lowest_positive = sorted_scores[best]
    threshold = lowest_positive if lower is None else \
        (lowest_positive + lower) / 2
    if threshold > lowest_positive:  # rounding of adjacent floats
        threshold = lowest_positive
    return float(threshold), float(f1[best])


def choose_thresholds(
        scores: np.ndarray,
        target: np.ndarray,
        classes: Sequence[str],
        shrinkage: float = DEFAULT_SHRINKAGE,
        source: Optional[Dict[str, str]] = None) -> ClassThresholds:
    """Choose each class's threshold on the known labels of a split.

    Args:
        scores (np.ndarray): ``(N, C)`` scores of the split's samples.
        target (np.ndarray): ``(N, C)`` labels in MMPretrain's evaluation
            encoding: 1 positive, 0 negative, -1 unknown (never read).
        classes (Sequence[str]): The ``C`` class names.
        shrinkage (float): ``k`` of the module's formula, >= 0 (0: each
            class keeps its own best threshold).
        source (dict, optional): Where the scores come from, recorded.

    Returns:
        ClassThresholds: The thresholds (see the module docstring).
    """
    scores = np.asarray(scores, dtype=np.float64)
    target = np.asarray(target)
    if scores.ndim != 2 or scores.shape != target.shape:
        raise ValueError(f'scores {scores.shape} and target {target.shape} '
                         'must both be (samples, classes) matrices.')
    if scores.shape[1] != len(classes):
        raise ValueError(f'{scores.shape[1]} classes of scores but '
                         f'{len(classes)} class names.')
    if not shrinkage >= 0:
        raise ValueError(f'shrinkage must be >= 0, got {shrinkage}.')
    known = (target == 0) | (target == 1)
    global_threshold, _ = best_f1_threshold(scores[known], target[known])
    if global_threshold is None:
        raise ValueError('The split has no known positive label: no '
                         'threshold can be chosen on it.')
    thresholds, best = [], []
    positives = ((target == 1) & known).sum(0)
    negatives = ((target == 0) & known).sum(0)
    for c in range(scores.shape[1]):
        rows = known[:, c]
        own, _ = best_f1_threshold(scores[rows, c], target[rows, c])
        best.append(own)
        n = int(positives[c])
        thresholds.append(
            global_threshold if own is None else
            (n * own + shrinkage * global_threshold) / (n + shrinkage))
    return ClassThresholds(
        classes=tuple(str(name) for name in classes),
        thresholds=tuple(float(t) for t in thresholds),
        global_threshold=float(global_threshold),
        shrinkage=float(shrinkage),
        best_thresholds=tuple(best),
        known_positives=tuple(int(n) for n in positives),
        known_negatives=tuple(int(n) for n in negatives),
        source=dict(source or {}))


def thresholds_path(checkpoint: str) -> str:
    """The thresholds file of a checkpoint: ``X.pth`` -> ``X.thresholds.json``
    (any extension is replaced)."""
    return osp.splitext(str(checkpoint))[0] + THRESHOLDS_SUFFIX


def save_thresholds(thresholds: ClassThresholds, checkpoint: str) -> str:
    """Write ``thresholds`` beside ``checkpoint`` (replacing the file
    there, atomically) and return the file's path."""
    path = thresholds_path(checkpoint)
    temporary = f'{path}.tmp{os.getpid()}'
    with open(temporary, 'w') as f:
        json.dump(thresholds.to_dict(), f, indent=1)
        f.write('\n')
    os.replace(temporary, path)
    return path


def read_thresholds(path: str) -> ClassThresholds:
    """The thresholds of a thresholds file, checked (a clear
    ``ValueError`` naming the file otherwise)."""
    try:
        with open(path) as f:
            data = json.load(f)
    except json.JSONDecodeError as error:
        raise ValueError(f'{path} is not a JSON file: {error}') from error
    return ClassThresholds.from_dict(data, path)


def load_thresholds(checkpoint: str) -> Optional[ClassThresholds]:
    """The thresholds stored beside ``checkpoint`` (a local path), or None
    when it has no thresholds file."""
    path = thresholds_path(checkpoint)
    return read_thresholds(path) if osp.isfile(path) else None


def check_classes(thresholds: ClassThresholds, classes: List[str],
                  where: str) -> None:
    """Refuse thresholds chosen for other classes than ``classes`` (those
    of the model, found in ``where``)."""
    if list(thresholds.classes) != list(classes):
        raise ValueError(
            f'The thresholds file {where} is for {thresholds.num_classes} '
            f'classes ({", ".join(thresholds.classes[:3])}, ...) but the '
            f'model has {len(classes)} ({", ".join(classes[:3])}, ...): '
            'choose them again for this model, or pass --thr.')


def threshold_metrics(scores: np.ndarray, target: np.ndarray,
                      thresholds: ClassThresholds) -> Dict[str, dict]:
    """CF1 and OF1 (with CP, CR, OP, OR, in percent, as
    :class:`~mmlml.evaluation.MultiLabelF1Metric` computes them) at 0.5,
    at the global threshold and at the per-class thresholds.

    Args:
        scores (np.ndarray): ``(N, C)`` scores.
        target (np.ndarray): ``(N, C)`` evaluation targets (1, 0, -1
            ignored).
        thresholds (ClassThresholds): The thresholds.

    Returns:
        dict: ``{'0.5': {...}, 'global': {...}, 'class': {...}}``, each
        ``{'CP', 'CR', 'CF1', 'OP', 'OR', 'OF1'}``.
    """
    import torch

    from .multi_label_f1 import MultiLabelF1Metric
    results = [
        dict(pred_score=torch.as_tensor(s), gt_score=torch.as_tensor(t))
        for s, t in zip(
            np.asarray(scores, np.float32), np.asarray(target, np.float32))
    ]
    metrics = dict(
        zip(('0.5', 'global', 'class'),
            (MultiLabelF1Metric(thr=0.5),
             MultiLabelF1Metric(thr=thresholds.global_threshold),
             MultiLabelF1Metric(class_thr=thresholds.thresholds))))
    table = {}
    for name, metric in metrics.items():
        values = metric.compute_metrics(results)
        table[name] = {
            key: values[next(k for k in values if k.split('_')[0] == key)]
            for key in ('CP', 'CR', 'CF1', 'OP', 'OR', 'OF1')
        }
    return table
